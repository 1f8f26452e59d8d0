"""Every source the matrix cites (matrices/*.toml, signatures.toml aside) is something a user can
open: a public URL, or a file inside this repository (docs/sources/ holds summaries in our words)."""
from __future__ import annotations

import re
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


def user_texts():
    """(file, where, field, text) for every English or Chinese text of a row, the signatures' included: what
    check, fix and explain print."""
    for path in sorted(MATRICES.glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        for array, rows in data.items():
            for row in rows if isinstance(rows, list) else []:
                where = f"[[{array}]] {row.get('id') or row.get('code') or row.get('name')}"
                for field, value in row.items():
                    if field.endswith(("_en", "_zh")) and isinstance(value, str):
                        yield path.name, where, field, value


# how an audit spoke of its own reading, not what a user can act on (a catalogue's "副本" is also a replica)
_AUDIT_SPEAK_EN = re.compile(r"stored cop|stored thread|the row\b|this row\b|the sweep|the audit|corpus|tool library|"
                             r"in the copy read|established here", re.I)
_AUDIT_SPEAK_ZH = re.compile(r"存档|所存|所读副本|本条最初|此处未确|此处尚未确")


def test_what_users_read_speaks_of_no_audit_of_ours():
    """The sweeps wrote causes from the copies of threads they could read; a user reads the cause, so "the stored copy
    does not show", "the thread the row was written from" or "所读副本" tell them about our audit, not their error."""
    bad = []
    for name, where, field, text in user_texts():
        found = (_AUDIT_SPEAK_ZH if field.endswith("_zh") else _AUDIT_SPEAK_EN).search(text)
        if found:
            bad.append(f"{name} {where} {field}: {found.group(0)!r}")
    assert not bad, "\n".join(bad)


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
