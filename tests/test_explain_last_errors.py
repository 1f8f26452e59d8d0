"""A log no signature explains: explain shows what it ends with that looks like the failure (and
never a cause), from a bounded tail of each log."""
import json
import sys

import pytest

import doctor_fork

from doctor.explain.lasterrors import TAIL_BYTES, last_error_lines, tail_lines


def test_tail_lines_number_the_complete_lines_and_drop_the_cut_one():
    whole = b"one\ntwo\nthree\n"
    assert tail_lines(whole, 3) == [(1, "one"), (2, "two"), (3, "three")]
    assert tail_lines(b"one\ntwo", 1) == [(1, "one"), (2, "two")]  # no newline at the end
    # the last bytes of a 100-line log: the line the cut began in ("99") is not a line
    assert tail_lines(b"ine 99\nline 100\n"[-12:], 100) == [(100, "line 100")]
    assert tail_lines(b"x 98\nline 99\nline 100\n", 100) == [(99, "line 99"), (100, "line 100")]


def test_the_last_distinct_failure_lines_in_log_order():
    lines = list(enumerate([
        "INFO 12-01 10:00:00 loading weights", "[rank0]: RuntimeError: the first failure", "INFO retrying",
        "foo.cpp:12:3: error: 'bar' was not declared in this scope", "[ERROR] 2026-12-01 (PID:1) something broke",
        "ERROR 12-01 10:00:05 engine died", "ERROR 12-01 10:00:05 engine died", "Segmentation fault (core dumped)",
        "INFO bye", "an error occurred somewhere in prose", "mirror: errors=0"], 1))
    assert last_error_lines(lines) == [(5, "[ERROR] 2026-12-01 (PID:1) something broke"),
                                       (7, "ERROR 12-01 10:00:05 engine died"), (8, "Segmentation fault (core dumped)")]  # its last time
    assert last_error_lines(lines, limit=10)[:2] == [(2, "[rank0]: RuntimeError: the first failure"),
                                                     (4, "foo.cpp:12:3: error: 'bar' was not declared in this scope")]
    assert last_error_lines([(1, "all is well"), (2, "INFO done")]) == []


def explain(*args, stdin=None):
    return doctor_fork.run([sys.executable, "-m", "doctor", "explain", *args], input=stdin, capture_output=True,
                           text=True, timeout=60)


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs on generated logs
def test_an_unexplained_log_shows_its_last_failure_lines_with_their_numbers(tmp_path):
    log = tmp_path / "run.log"
    noise = "".join(f"INFO 12-01 10:00:{i % 60:02d} step {i} done\n" for i in range(20_000))  # past the tail
    log.write_text(noise + "Traceback (most recent call last):\n  File \"x.py\", line 9, in <module>\n"
                   "ZeroDivisionError: the frobnicator ran dry \x1b[31mred\x1b[0m\nINFO shutdown\n")
    assert log.stat().st_size > 2 * TAIL_BYTES
    proc = explain(str(log))
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert text.startswith("No known error signature matched.")
    assert "line 20003: ZeroDivisionError: the frobnicator ran dry \\x1b[31mred\\x1b[0m" in text  # escaped, numbered
    assert "\x1b" not in text and "ascend-doctor check" in text.splitlines()[-1]
    doc = json.loads(explain("--json", str(log)).stdout)
    assert doc["matches"] == [] and [(e["line"], e["text"][:17]) for e in doc["last_errors"]] == [(20003, "ZeroDivisionError")]
    zh = explain("--lang", "zh", str(log)).stdout
    assert "日志末尾" in zh and "第 20003 行" in zh


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs on generated logs
def test_an_explained_log_and_a_quiet_one_show_no_such_lines(tmp_path):
    known = "RuntimeError: The Inner error is reported as above. The process exits for this inner error, and the " \
            "current working operator name is aclnnFoo.\nValueError: an unrelated failure\n"
    doc = json.loads(explain("--json", "-", stdin=known).stdout)
    assert doc["matches"] and doc["last_errors"] == []
    assert "looks like the failure" not in explain("-", stdin=known).stdout
    quiet = explain("-", stdin="INFO all good\n")
    assert quiet.stdout.strip() == "No known error signature matched."  # nothing that looks like a failure: nothing more


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs on generated logs
def test_a_log_with_only_harmless_lines_known_still_shows_its_failure_lines():
    log = ("The operator 'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU backend and will fall "
           "back to run on CPU\nRuntimeError: the novel thing broke\n")
    doc = json.loads(explain("--json", "-", stdin=log).stdout)
    assert doc["matches"] and all(m["benign"] for m in doc["matches"])
    assert [(e["line"], e["text"]) for e in doc["last_errors"]] == [(2, "RuntimeError: the novel thing broke")]
    text = explain("-", stdin=log).stdout
    assert "not a problem" in text and "line 2: RuntimeError: the novel thing broke" in text
