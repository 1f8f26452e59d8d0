"""Shared by the explain tests: the shipped catalog, compiled once per test session."""
from __future__ import annotations

from functools import lru_cache

from doctor.explain.answers import select
from doctor.explain.catalog import Catalog
from doctor.parse.logscan import scan_text
from shipped import matrix


@lru_cache(maxsize=None)
def catalog() -> Catalog:
    cat = Catalog.from_matrix(matrix())
    _ = cat.compiled  # compile the scan now, once
    return cat


def answers(text: str):
    cat = catalog()
    return cat.answers(scan_text(text, cat.compiled))


def selected(text: str):
    return select(answers(text))


# -- the mined case sets (tests/data/explain_mined*.jsonl) ----------------------------------------


def read_rows(path):
    """A mined set: one JSON case per non-empty line."""
    import json

    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def held_out_by_rule(source: str) -> bool:
    """The fixed split of every mined set: held out when sha256(URL)[:8] is divisible by 3."""
    import hashlib

    return int(hashlib.sha256(source.encode()).hexdigest()[:8], 16) % 3 == 0


def explain_line(row, cat) -> str:
    """A case as a failure message shows it: its thread, first line, and what explain answered."""
    from doctor.explain.answers import primary

    top = primary(cat.explain_text(row["text"]))
    return f"{row['source']}: {row['text'].splitlines()[0][:90]} (expected {row['expect']}, got {top.id if top else None})"


def example_lines():
    """Every line of the shipped signatures', codes' and libraries' examples."""
    m = matrix()
    examples = [s.example for s in m.signatures] + [c.example for c in m.codes] + [lib.example for lib in m.libraries]
    return [line.strip() for example in examples for line in example.splitlines()]


def held_out_misses(rows, cat):
    """A mined set's held-out cases and, of them, the ones explain misses (as failure lines)."""
    from tests.test_explain_heldout import judge

    held = [r for r in rows if r["split"] == "heldout"]
    return held, [explain_line(r, cat) for r in held if not judge(r, cat)]


def real_signature_ids(line: str):
    """The signatures, not benign, that answer one line: a near miss must get none."""
    return [a.id for a in selected(line) if not a.benign and a.kind == "signature"]


# -- what every mined set's test holds (tests/test_explain_mined*.py) -------------------------------


def shared_threads(path, names=None):
    """{other set: threads it shares with the mined set at ``path``}: every other
    tests/data/explain_*.jsonl, or only the ones ``names`` lists (those that exist). Empty when
    each set keeps its own threads."""
    from pathlib import Path

    path = Path(path)
    others = sorted(path.parent.glob("explain_*.jsonl")) if names is None else \
        [path.parent / n for n in names if (path.parent / n).exists()]
    mine = {r["source"] for r in read_rows(path)}
    out = {}
    for other in others:
        if other != path:
            both = mine & {r.get("source") for r in read_rows(other)}
            if both:
                out[other.name] = sorted(both)
    return out


def held_out_lines_used_as_examples(rows):
    """The lines of the held-out cases that are also an example of a signature, code or library."""
    held = {line.strip() for r in rows if r["split"] == "heldout" for line in r["text"].splitlines() if line.strip()}
    return [line for line in example_lines() if line in held]


def signatures_citing_held_out(rows):
    """(signature, thread) where a signature names a held-out thread as its source or example's."""
    held = {r["source"] for r in rows if r["split"] == "heldout"}
    out = []
    for s in matrix().signatures:
        cited = {part.strip().rstrip("/") for part in f"{s.source} {s.example_source or ''}".replace(";", " ").split()}
        out.extend((s.id, url) for url in sorted(held & cited))
    return out


def training_misses(rows, cat, gaps=()):
    """(the training cases explain misses outside ``gaps``, as failure lines; the gaps it now
    explains: no gaps any more)."""
    from tests.test_explain_heldout import judge

    train = [r for r in rows if r["split"] == "train"]
    return ([explain_line(r, cat) for r in train if r["source"] not in gaps and not judge(r, cat)],
            [r["source"] for r in train if r["source"] in gaps and judge(r, cat)])
