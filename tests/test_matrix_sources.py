"""Every source the matrix cites (matrices/*.toml, signatures.toml aside) is something a user can
open: a public URL, or a file inside this repository (docs/sources/ holds summaries in our words)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from citations import unresolved

MATRICES = Path(__file__).resolve().parents[1] / "matrices"
OWNED_ELSEWHERE = {"signatures.toml"}  # explain's signatures: their own test


def citations():
    """(file, where, source) for every source string: row sources, per-fact/per-line sources,
    known problems' sources."""
    for path in sorted(MATRICES.glob("*.toml")):
        if path.name in OWNED_ELSEWHERE:
            continue
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        for array, rows in data.items():
            if not isinstance(rows, list):
                continue
            for i, row in enumerate(rows):
                key = next((str(row[k]) for k in ("vllm_ascend", "cann", "name", "version", "torch", "id", "key") if k in row), str(i))
                if "source" in row:
                    yield path.name, f"[[{array}]] {key}", row["source"]
                for fact, src in (row.get("sources") or {}).items():
                    yield path.name, f"[[{array}]] {key} sources.{fact}", src
                for kp in row.get("known_problems") or []:
                    yield path.name, f"[[{array}]] {key} known_problems", kp["source"]


def test_there_are_citations_to_check():
    assert sum(1 for _ in citations()) > 500


def test_every_matrix_citation_resolves():
    bad = [f"{f} {where}: {part}" for f, where, src in citations() for part in unresolved(src)]
    assert bad == [], f"{len(bad)} citations a user cannot follow:\n" + "\n".join(bad[:40])


@pytest.mark.parametrize("source,ok", [
    ("https://www.hiascend.com/document/detail/en/CANNCommunityEdition/920/softwareinst/releasenote/9.2.0/release-notes.md", True),
    ("docs/sources/cann-driver.md#undocumented-releases", True),
    ("facts/formats.md section 1c", False),
    ("Ascend/pytorch COMPATIBILITY.en.md@9e73e708ab", False),      # no URL, no repository file
    ("inference from the 8.5.0 and 8.5.2 rows", False),
])
def test_what_counts_as_a_citation(source, ok):
    assert (unresolved(source) == []) is ok
