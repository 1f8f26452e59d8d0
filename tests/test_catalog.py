"""Every finding id has one rule record, documented in the catalog view and in docs/findings.md."""
from pathlib import Path

import pytest

from doctor.layers import LAYERS
from doctor.rules.all_rules import RULES
from doctor.rules.catalog import GENERIC, REPORTED, catalog, describe
from tests import source_kit

ROOT = Path(__file__).resolve().parents[1]


def test_one_record_per_finding_id():
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    for r in RULES:
        assert not r.id.startswith("group:"), r.id
        assert r.id.split(".")[0] == r.layer and r.layer in LAYERS, r.id


def test_catalog_entries_are_complete_and_consistent():
    entries = catalog()
    assert set(entries) == {r.id for r in RULES if r.id.partition(".")[2] not in GENERIC} | set(REPORTED)
    for fid, entry in entries.items():
        assert fid.split(".")[0] == entry["layer"] and entry["layer"] in LAYERS
        assert entry["why_en"] and entry["why_zh"] and entry["source"], fid
        assert entry["why_en"] != entry["why_zh"], fid


def test_generic_ids_resolve():
    assert describe("cann.probe_error")["layer"] == "cann"
    assert describe("torch.rule_error")["why_en"]
    assert describe("mooncake.probe_error")["why_en"] == describe("cann.probe_error")["why_en"]
    with pytest.raises(KeyError):  # a generic topic under an unknown finding is no id
        describe("cann.version.probe_error")


def test_the_catalog_table_is_the_module_attribute():
    from doctor.rules.catalog import CATALOG

    assert CATALOG == catalog()


def test_docs_findings_is_generated_from_the_catalog():
    from doctor.rules.catalog import markdown

    assert (ROOT / "docs" / "findings.md").read_text() == markdown(), \
        "regenerate: python -m doctor.rules.catalog > docs/findings.md"


def test_every_rule_module_is_listed():
    import ast

    from doctor.rules.all_rules import MODULES

    listed = {m.__name__.rsplit(".", 1)[1] for m in MODULES}
    defining = set()
    for path in (ROOT / "doctor" / "rules").glob("*.py"):
        tree = source_kit.tree(path)
        if any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "RULES" for t in n.targets)
               for n in tree.body) and path.stem != "all_rules":
            defining.add(path.stem)
    assert defining == listed, f"add to doctor/rules/all_rules.py: {sorted(defining - listed)}"


@pytest.mark.slow  # ~1 s of CPU or more: parses every module
def test_one_way_to_write_a_rule():
    """Every rule is a ``rule(id, check, source, fixer)`` line: no module builds the ``Rule``
    record by hand (its layer and why-key come from the id), and every why-text is the
    catalogue's ``why.<id>`` or a generic one."""
    import ast

    for path in (ROOT / "doctor").rglob("*.py"):
        if path.name == "base.py" and path.parent.name == "rules":
            continue
        for n in source_kit.nodes(path):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "Rule":
                raise AssertionError(f"{path.relative_to(ROOT)}:{n.lineno}: write rule({n.args and ast.unparse(n.args[0])}, ...)")
    for r in RULES:
        assert r.why is not None and r.why.key in (f"why.{r.id}", "why.generic.probe_error"), r.id


@pytest.mark.slow  # ~0.5 s of CPU or more: a pass over every rule module
def test_vllm_versions_are_compared_with_the_matrix_not_with_literals():
    """A vllm or vllm-ascend version a rule compares with is a matrix row ([[threshold]],
    [[tuning_fact]], a release row): no call in doctor/rules passes a vllm version and a version
    literal together."""
    import ast
    import re

    literal = re.compile(r"^[<>=!~]*\d+\.\d+(\.\d+)?(rc\d+|\.post\d+|\.dev\d+)?$")
    for path in (ROOT / "doctor" / "rules").glob("*.py"):
        for n in source_kit.nodes(path):
            if not isinstance(n, ast.Call):
                continue
            names = [ast.unparse(a) for a in n.args]
            versions = [a.value for a in n.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                        and literal.match(a.value)]
            if versions and any("vllm" in a for a in names):
                raise AssertionError(f"{path.relative_to(ROOT)}:{n.lineno}: {ast.unparse(n)}: a [[threshold]] row")
