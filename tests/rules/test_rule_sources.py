"""Every source a rule or a finding cites can be followed: a public URL or a file of this
repository (docs/sources/ retells what users need), and an #anchor names a heading there."""
import ast
import re
from pathlib import Path

from citations import REPO, unresolved

from doctor.rules.all_rules import RULES
from doctor.rules.catalog import GENERIC

CORE = [REPO / "doctor" / "rules", REPO / "doctor" / "parse" / "serveargs.py"]
ANCHORED = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.md)#([\w.-]+)")


def _slugs(path: Path):
    """GitHub's heading anchors: lower case, spaces to '-', punctuation dropped."""
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^#+\s+(.*)$", line)
        if m:
            out.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


def _problems(source: str):
    bad = list(unresolved(source))
    for path, anchor in ANCHORED.findall(source):
        if (REPO / path).exists() and anchor not in _slugs(REPO / path):
            bad.append(f"{path}#{anchor}: no such heading")
    return bad


def test_every_rule_cites_a_source_a_user_can_follow():
    bad = {r.id: _problems(r.source or "") for r in RULES}
    assert not {k: v for k, v in bad.items() if v}, bad
    assert all(r.source for r in RULES)
    for _why, source in GENERIC.values():
        assert not _problems(source)


def test_every_source_literal_in_the_rules_resolves():
    """Findings carry sources of their own (a release row's, or a constant of the module)."""
    sources = []
    for base in CORE:
        for path in ([base] if base.is_file() else sorted(base.glob("*.py"))):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.keyword) and node.arg == "source" and isinstance(node.value, ast.Constant) \
                        and isinstance(node.value.value, str):
                    sources.append((path.name, node.value.value))
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id.endswith("SOURCE")
                                                        for t in node.targets) and isinstance(node.value, ast.Constant):
                    sources.append((path.name, node.value.value))
    assert sources
    bad = [(f, s, _problems(s)) for f, s in sources if _problems(s)]
    assert not bad, bad


def test_docs_findings_cites_only_followable_sources():
    text = (REPO / "docs" / "findings.md").read_text(encoding="utf-8")
    sources = [line[len("Source: "):] for line in text.splitlines() if line.startswith("Source: ")]
    assert len(sources) >= len(RULES) - 1
    assert not [(s, _problems(s)) for s in sources if _problems(s)]


def test_the_anchor_check_can_fail():
    assert _problems("docs/sources/mooncake.md#no-such-heading")
    assert not _problems("docs/sources/mooncake.md#serve-args")
