"""The description pass (doctor/explain/describe.py, matrices/descriptions.toml): causes users
describe in words, matched on short pastes only, after the log scan and never over it."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from doctor.explain.answers import DESCRIPTION, primary
from doctor.explain.describe import MAX_BYTES, MAX_LINES, describe
from doctor.matrix.load import load_matrix
from doctor.matrix.schema import MatrixError
from doctor.usecases.explain import run_explain
from shipped import matrix
from tests.explain_kit import catalog, held_out_by_rule, read_rows

DATA = Path(__file__).parent / "data"
MINED = sorted(DATA.glob("explain_mined*.jsonl")) + [DATA / "explain_heldout.jsonl"]


def rows_of_every_set():
    return [r for p in MINED for r in read_rows(p)]


def descriptions():
    return catalog().descriptions


def by_id(did):
    return [d for d in descriptions() if d.row.id == did]


def test_the_shipped_descriptions_load_and_each_answers_with_a_known_cause():
    rows = matrix().descriptions
    assert len(rows) >= 15 and len(descriptions()) == len(rows)  # none skipped for a missing signature
    sigs = {s.id for s in matrix().signatures}
    for d in rows:
        assert d.id.startswith("describe."), d.id
        assert d.signature in sigs or (d.answer and d.cause_en and d.cause_zh and d.fix_en and d.fix_zh), d.id
        assert len(d.words) >= 2, d.id
        for url in [d.source] + ([d.example_source] if d.example_source and d.example_source.startswith("http") else []):
            assert url.startswith("https://") and "/work/" not in url, (d.id, url)


@pytest.mark.parametrize("did", [d.id for d in matrix().descriptions])
def test_each_example_is_explained_by_its_description_and_no_near_miss_is(did):
    d = by_id(did)[0]
    got = describe(d.row.example, [d])
    assert [a.id for a in got] == [d.id], (did, d.row.example)
    assert got[0].kind == DESCRIPTION and got[0].confidence == "low"
    # through the whole catalogue: the same cause comes first (from the log scan when a log
    # signature of the same id reads the same words, else from the description)
    got_all = catalog().explain_text(d.row.example)
    if d.benign:  # recognised as harmless: nothing real comes first
        assert primary(got_all) is None and any(a.id == d.id for a in got_all), did
    else:
        top = primary(got_all)
        assert top is not None and same_cause(top.id, d.id), (did, top and top.id)
    for line in d.row.near_miss:
        assert describe(line, descriptions()) == [] or all(a.id != d.id for a in describe(line, [d])), (did, line)
        assert describe(line, [d]) == [], (did, line)


def same_cause(a: str, b: str) -> bool:
    """Two answer ids of one cause: the same id, or signatures with the same cause text (a log
    form and its prose form, torch_npu.dev_build_needs_mirror and ..._said)."""
    if a == b:
        return True
    cause = {s.id: s.cause_en for s in matrix().signatures}
    return a in cause and cause.get(a) == cause.get(b)


def _expected(row):
    return [k.lower() for k in row.get("expect", [])]


@pytest.mark.slow  # ~0.5 s of CPU or more: the descriptions against every mined case
def test_no_description_fires_on_a_near_miss_or_a_benign_case_of_the_mined_sets():
    """A near-miss row (another vendor's look-alike, a healthy line next to a class) gets no
    description at all; a benign row gets no real one."""
    bad = []
    for r in rows_of_every_set():
        got = describe(r["text"], descriptions())
        if r.get("near_miss_of"):
            bad += [(r["source"], a.id) for a in got]
        elif r.get("benign"):
            bad += [(r["source"], a.id) for a in got if not a.benign]
    assert bad == []


@pytest.mark.slow  # ~0.5 s of CPU or more: the descriptions against every mined case
def test_a_description_on_a_mined_training_case_names_that_case_s_cause():
    """Where a description fires on a mined training case, it stands for the case's own cause
    (it may be outranked by the log's answer, but it is never another class's). Held-out cases
    are not read when descriptions are written: they are measured by the judge only
    (tests/test_explain_heldout.py), where a log answer always comes first."""
    wrong = []
    for r in rows_of_every_set():
        if r.get("near_miss_of") or r.get("benign") or r.get("split") != "train":
            continue
        keys = _expected(r) + [r.get("class", "").lower()]  # its expected answers, or its class
        for a in describe(r["text"], descriptions()):
            if not any(k and k in a.id.lower() for k in keys):
                wrong.append((r["source"], a.id, keys))
    assert wrong == []


@pytest.mark.slow  # ~0.5 s of CPU or more: the descriptions against every mined case
def test_no_description_fires_on_a_log_line_of_another_class():
    """Every example and near miss of the log signatures, codes and libraries: a description that
    fires on one stands for the signature the example belongs to."""
    m = matrix()
    wrong = []
    for s in m.signatures:
        for text, owner in [(s.example, s.id)] + [(n, None) for n in s.near_miss]:
            for a in describe(text or "", descriptions()):
                if owner is None or not same_cause(a.id, owner):
                    wrong.append((s.id, a.id, (text or "")[:80]))
    for c in m.codes:
        for text in (c.example, *c.near_miss):
            wrong += [(f"{c.family}:{c.code}", a.id, text[:80]) for a in describe(text, descriptions())]
    assert wrong == []


@pytest.mark.slow  # ~0.5 s of CPU or more: the descriptions against every mined case
def test_no_description_is_built_from_a_held_out_thread():
    held = {r["source"] for r in rows_of_every_set() if r.get("split", "heldout") == "heldout"}
    held_lines = {line.strip() for r in rows_of_every_set() if r.get("split", "heldout") == "heldout"
                  for line in r["text"].splitlines() if line.strip()}
    for d in matrix().descriptions:
        cited = set(f"{d.source} {d.example_source or ''}".replace(";", " ").replace("(", " ").replace(")", " ").split())
        assert not held & cited, (d.id, held & cited)
        assert not {line.strip() for line in d.example.splitlines()} & held_lines, d.id
        assert not held_out_by_rule(d.example_source) if (d.example_source or "").startswith("https://github.com/") else True


# -- a log hit always wins ---------------------------------------------------------------------------


def test_a_line_the_log_explains_is_not_taken_by_a_description():
    # libascend_hal.so with the loader's own words: the log signature's line, not a description's
    text = "ImportError: libascend_hal.so: cannot open shared object file: No such file or directory"
    got = catalog().explain_text(text)
    assert [a.id for a in got] == ["driver.libascend_hal_missing"] and got[0].kind == "signature"


def test_a_description_never_outranks_a_log_answer():
    text = ("我们在 910B 上跑的时候 OOM 了\n"
            "ImportError: libatb.so: cannot open shared object file: No such file or directory\n")
    got = catalog().explain_text(text)
    kinds = {a.id: a.kind for a in got}
    assert kinds.get("oom.npu") == DESCRIPTION  # the words are still reported
    top = primary(got)
    assert top is not None and top.kind != DESCRIPTION and "libatb" in top.id or top.id.startswith("cann."), top.id


def test_a_benign_log_answer_does_not_hide_a_described_failure():
    text = ("INFO 06-16 02:47:10 [importing.py:53] Triton module has been replaced with a placeholder.\n"
            "我们在 910B 上跑的时候 OOM 了\n")
    top = primary(catalog().explain_text(text))
    assert top is not None and top.id == "oom.npu" and top.kind == DESCRIPTION


def test_another_vendor_s_words_are_ruled_out():
    assert describe("Qwen 72B OOM on 8 GPUs while the npu build works", descriptions()) == []
    assert describe("在 4090 的 GPU 上 OOM 了，NPU 上没问题", descriptions()) == []


# -- the bound on what the pass reads ----------------------------------------------------------------


def test_only_short_inputs_are_read():
    phrase = "Qwen2.5-72B 在 8 张 910B 上推理时 OOM 了\n"
    assert [a.id for a in catalog().describe(phrase, [])] == ["oom.npu"]
    padded_bytes = phrase + "x" * (MAX_BYTES + 1) + "\n"
    assert catalog().describe(padded_bytes, []) == []
    padded_lines = phrase + "ok\n" * MAX_LINES
    assert catalog().describe(padded_lines, []) == []


def _run(capsys, text, lang="en", files=None):
    if files:
        assert run_explain([str(f) for f in files], lang, True) == 0
    else:
        assert run_explain(["-"], lang, True, stdin=io.BytesIO(text.encode())) == 0
    return json.loads(capsys.readouterr().out)


def test_the_command_says_the_answer_comes_from_the_description(capsys):
    doc = _run(capsys, "Qwen2.5-72B 在 8 张 910B 上推理时 OOM 了\n")
    m = doc["matches"][0]
    assert doc["primary"]["id"] == "oom.npu" and m["kind"] == "description" and m["confidence"] == "low"
    assert m["cause"].startswith("From your description")
    zh = _run(capsys, "Qwen2.5-72B 在 8 张 910B 上推理时 OOM 了\n", lang="zh")
    assert zh["matches"][0]["cause"].startswith("根据你的描述")


def test_the_command_does_not_read_descriptions_in_a_long_log(capsys, tmp_path):
    log = tmp_path / "serve.log"
    log.write_text("Qwen2.5-72B 在 8 张 910B 上推理时 OOM 了\n" + "INFO 06-16 02:47:10 [core.py:1] step\n" * 2000)
    assert log.stat().st_size > MAX_BYTES
    assert _run(capsys, "", files=[log])["matches"] == []
    # the bound is over all inputs of a run together
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_text("Qwen2.5-72B 在 8 张 910B 上推理时 OOM 了\n")
    b.write_text("INFO step\n" * (MAX_LINES + 1))
    assert _run(capsys, "", files=[a, b])["matches"] == []
    assert [m["id"] for m in _run(capsys, "", files=[a])["matches"]] == ["oom.npu"]


def test_the_text_report_names_the_kind(capsys):
    assert run_explain(["-"], "en", False, stdin=io.BytesIO("Qwen2.5-72B 在 8 张 910B 上推理时 OOM 了\n".encode())) == 0
    assert "from your description" in capsys.readouterr().out


# -- the loader refuses what would not work ---------------------------------------------------------


def _matrix_file(tmp_path, body):
    p = tmp_path / "mine.toml"
    p.write_text("schema_version = 1\n" + body, encoding="utf-8")
    return p


GOOD = '''
[[prose]]
id = "describe.mine"
signature = "driver.libascend_hal_missing"
words = ['libascend_hal', 'missing']
source = "https://example.org/doc"
example = "libascend_hal is missing"
near_miss = ["libascend_hal loaded"]
'''


@pytest.mark.slow  # ~0.5 s of CPU or more: the descriptions against every mined case
def test_a_user_description_is_loaded_and_matched(tmp_path):
    m = load_matrix([_matrix_file(tmp_path, GOOD)], user_overlays=False)
    assert any(d.id == "describe.mine" for d in m.descriptions)


@pytest.mark.parametrize("change,problem", [
    (("driver.libascend_hal_missing", "driver.no_such_signature"), "is not a [[signature]]"),
    (("words = ['libascend_hal', 'missing']", "words = ['libascend_hal']"), "at least two keyword groups"),
    (("'missing']", "'missing|']"), "must not match an empty string"),
    (("'missing']", "'(missing']"), "invalid regular expression"),
    (('signature = "driver.libascend_hal_missing"\n', ""), "needs its own answer"),
])
@pytest.mark.slow  # ~1 s of CPU or more: the catalogue compiled again per case
def test_a_broken_description_is_refused(tmp_path, change, problem):
    with pytest.raises(MatrixError) as e:
        load_matrix([_matrix_file(tmp_path, GOOD.replace(*change))], user_overlays=False)
    assert problem in str(e.value)


@pytest.mark.slow  # ~0.5 s of CPU or more: the descriptions against every mined case
def test_the_descriptions_are_compiled_only_for_a_text_they_read(tmp_path, monkeypatch):
    """A long log (or an empty one) never pays for the description pass's regexes; a paste does."""
    from doctor.explain.catalog import Catalog
    from doctor.usecases import explain as usecase

    made = []
    real = Catalog.from_matrix.__func__

    def keep(cls, *a, **k):
        made.append(real(cls, *a, **k))
        return made[-1]

    monkeypatch.setattr(Catalog, "from_matrix", classmethod(keep))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    long_log = tmp_path / "long.log"
    long_log.write_text("INFO 09-21 03:11:40 [loggers.py:123] Engine 000: Avg prompt throughput: 1 tokens/s\n" * 2000)
    empty = tmp_path / "empty.log"
    empty.write_text("")
    paste = tmp_path / "paste.txt"
    paste.write_text("安装 vllm 时会卸载 torch\n")
    for path, compiled in ((long_log, False), (empty, False), (paste, True)):
        usecase.run_explain([str(path)], "en", True)
        assert (made[-1]._descriptions is not None) is compiled, path.name
