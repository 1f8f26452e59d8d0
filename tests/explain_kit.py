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


def badly_sourced(rows, batch=None, with_class=False, gaps=()):
    """What breaks a mined set's rules, as lines (empty when nothing does): every case a GitHub
    issue or PR whose repo and thread fields say the same, with its cause, evidence, expected
    answers and text (and class); the split by the fixed rule; the batch; one case per thread; the
    training gaps' threads in the set. The sets of a batch each hold this."""
    out = []
    for r in rows:
        src = r.get("source", "")
        parts = src.split("/")
        if not src.startswith("https://github.com/") or len(parts) < 7:
            out.append(f"{src!r}: not a GitHub thread")
            continue
        owner, name, kind, number = parts[3:7]
        if kind not in ("issues", "pull") or not number.isdigit():
            out.append(f"{src}: not an issue or a pull request")
        if r.get("repo") != f"{owner}/{name}" or r.get("thread") != f"{kind}/{number}":
            out.append(f"{src}: repo {r.get('repo')!r} and thread {r.get('thread')!r} say otherwise")
        if not (r.get("cause") and r.get("evidence") and r.get("expect") and str(r.get("text", "")).strip()) \
                or (with_class and not r.get("class")):
            out.append(f"{src}: a field is empty")
        if r.get("split") != ("heldout" if held_out_by_rule(src) else "train"):
            out.append(f"{src}: split {r.get('split')!r} is not the fixed rule's")
        if batch is not None and r.get("batch") != batch:
            out.append(f"{src}: batch {r.get('batch')!r}, not {batch}")
    sources = [r.get("source") for r in rows]
    out += [f"{s}: {sources.count(s)} cases of one thread" for s in sorted(set(sources), key=str) if sources.count(s) > 1]
    out += [f"{g}: a training gap with no training case" for g in sorted(set(gaps) - {r.get("source") for r in rows
                                                                                       if r.get("split") == "train"})]
    return out


def held_out_threads_named_in_any_form(rows):
    """(matrix row, held-out thread) where a signature's or description's source or example_source
    names a held-out thread beyond its exact URL: "owner/name/issues/N", "owner/name/pull/N", or
    the repository's URL with "#N"."""
    import re

    m = matrix()
    texts = [(s.id, f"{s.source} {s.example_source or ''}") for s in m.signatures]
    texts += [(d.id, f"{d.source} {d.example_source or ''}") for d in m.descriptions]
    found = []
    for r in rows:
        if r["split"] != "heldout":
            continue
        owner, name, _, number = r["source"].split("/")[3:7]
        repo = f"{owner}/{name}"
        url_form = re.compile(rf"{re.escape(repo)}/(?:issues|pull)/{number}(?![0-9])", re.I)
        hash_form = re.compile(rf"#{number}(?![0-9])")
        for rid, text in texts:
            if url_form.search(text) or (f"github.com/{repo}/".lower() in text.lower() and hash_form.search(text)):
                found.append((rid, r["source"]))
    return found


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
