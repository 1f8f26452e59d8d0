"""Every finding id a rule can emit is documented in the catalog and in docs/findings.md."""
import re
from pathlib import Path

from doctor.layers import LAYERS
from doctor.rules.catalog import CATALOG, describe

ROOT = Path(__file__).resolve().parents[1]
NOT_IDS = {"vllm.platform_plugins", "vllm.general_plugins"}  # entry-point groups, not findings
ID = re.compile(r'"((?:' + "|".join(LAYERS) + r')\.[a-z_0-9]+)"')


def emitted_ids():
    ids = set()
    for path in (ROOT / "doctor" / "rules").glob("*.py"):
        if path.name == "catalog.py":
            continue
        ids.update(m for m in ID.findall(path.read_text()) if m not in NOT_IDS)
    return ids


def test_every_emitted_id_is_in_the_catalog():
    missing = sorted(emitted_ids() - set(CATALOG))
    assert not missing, f"add to doctor/rules/catalog.py: {missing}"


def test_catalog_entries_are_complete_and_consistent():
    for fid, entry in CATALOG.items():
        assert fid.split(".")[0] == entry["layer"] and entry["layer"] in LAYERS
        assert entry["why_en"] and entry["why_zh"] and entry["source"], fid


def test_generic_ids_resolve():
    assert describe("cann.probe_error")["layer"] == "cann"
    assert describe("torch.rule_error")["why_en"]


def test_docs_findings_is_generated_from_the_catalog():
    from doctor.rules.catalog import markdown

    assert (ROOT / "docs" / "findings.md").read_text() == markdown(), \
        "regenerate: python -m doctor.rules.catalog > docs/findings.md"
