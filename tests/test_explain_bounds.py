"""Explain on input made to exhaust it (issue 21, item 10): every line is cut at the scanner's
bound, what hits keep is bounded in count and characters, all reading is bounded in bytes and
time, and the process stays under 100 MB of RSS whatever it reads. Each case runs the real CLI
in a child process and reads that child's peak RSS from wait4()."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import signal
import tempfile
from pathlib import Path
from typing import List, Tuple

import pytest

from doctor.parse.logscan import KEEP_CHARS, MAX_LINE, LogScanner, Matcher
from doctor.shell.host.logread import CHUNK

REPO = Path(__file__).resolve().parents[1]
RSS_LIMIT_MB = 100
LIBATB = b"OSError: libatb.so: cannot open shared object file: No such file or directory"


# A child's peak RSS counts the RSS it had as a fork of its parent (ru_maxrss survives exec):
# the doctor is started by this small helper, whose own RSS is a few MB, not by pytest's process.
HELPER = (
    "import os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[2:])\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "open(sys.argv[1], 'w').write(str(usage.ru_maxrss))\n"
    "code = os.waitstatus_to_exitcode(status)\n"
    "sys.exit(code if code >= 0 else 128 - code)\n"
)


def explain(args: List[str], stdin=None, timeout: float = 120) -> Tuple[int, str, str, float]:
    """(exit code, stdout, stderr, peak RSS in MB) of `ascend-doctor explain ARGS`."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("ASCEND_DOCTOR_LANG", None)
    with tempfile.TemporaryDirectory() as tmp:
        rss_file = os.path.join(tmp, "rss")
        proc = subprocess.Popen([sys.executable, "-c", HELPER, rss_file, sys.executable, "-m", "doctor", "explain", *args],
                                stdin=stdin if stdin is not None else subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
        rss = int(Path(rss_file).read_text()) / 1024
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), rss


def test_a_line_that_fills_one_read_is_cut(tmp_path):
    """A complete line of exactly one read (1 MiB with its newline) was matched and kept whole:
    now it is matched on its first MAX_LINE bytes, counted as cut, and a hit keeps KEEP_CHARS."""
    line = LIBATB + b" " + b"x" * (CHUNK - len(LIBATB) - 2 - 200) + b" ImportError: libhccl.so: cannot open shared object file"
    line = line.ljust(CHUNK - 1, b"y")
    assert len(line) + 1 == CHUNK
    log = tmp_path / "one.log"
    log.write_bytes(line + b"\n" + line + b"\nINFO done\n")
    code, out, err, rss = explain(["--json", str(log)])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["files"][0]["cut_lines"] == 2 and doc["files"][0]["lines"] == 3
    (match,) = [m for m in doc["matches"] if m["id"] == "cann.libatb_missing"]
    assert len(match["text"]) == KEEP_CHARS and match["text"].startswith(LIBATB.decode())
    assert "libhccl" not in out  # past the cut: never read
    assert rss < RSS_LIMIT_MB


@pytest.mark.slow  # ~0.5 s of CPU or more: logs of megabytes through the scanner
def test_a_cut_line_is_said_in_the_text_report(tmp_path):
    log = tmp_path / "long.log"
    log.write_bytes(LIBATB + b" " + b"z" * (2 * MAX_LINE) + b"\n")
    code, out, err, _ = explain(["--lang", "en", str(log)])
    assert code == 0, err
    assert f"1 lines longer than {MAX_LINE // 1024} KiB were cut" in out
    plain = tmp_path / "plain.log"
    plain.write_bytes(b"q" * (MAX_LINE + 1) + b"\n")
    code, out, err, _ = explain(["--lang", "en", str(plain)])
    assert code == 0 and out.startswith("No known error signature matched.") and "1 lines longer than" in out


@pytest.mark.slow
def test_distinct_hits_are_bounded_and_counted(tmp_path):
    """200,000 lines each with a key never seen before, over every keyed matcher kind: the
    first max_keys per matcher are kept, the rest counted in dropped_hits; memory stays flat."""
    kinds = [  # each with a new key on every line (a repeated key is only a count)
        b"ImportError: lib%06d.so: cannot open shared object file: No such file or directory",
        b"RuntimeError: ERR%05d internal error",
        b"libx.so: undefined symbol: sym_%06d",
        b"vLLM API server version 0.%d.0",
        b"AttributeError: module 'vllm' has no attribute 'attr_%06d'",
        b"[ERROR] HCCL(1,python3):x [x.cc:1] from remote rank [%d]",
    ]
    log = tmp_path / "hits.log"
    with open(log, "wb") as f:
        f.write(b"".join(kinds[i % len(kinds)] % (i % 100_000) + b"\n" for i in range(200_000)))
    code, out, err, rss = explain(["--json", str(log)])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["files"][0]["lines"] == 200_000
    assert doc["files"][0]["dropped_hits"] > 150_000
    assert rss < RSS_LIMIT_MB, rss


def test_scanner_keeps_at_most_its_bounds():
    m = Matcher("t", r"key=(?P<k>\w+)", key="k", max_keys=10 ** 6)
    scanner = LogScanner([m], max_hits=50, max_kept=10 ** 9)
    scanner.feed(b"".join(b"key=k%d %s\n" % (i, b"v" * 5000) for i in range(200)))
    hits = scanner.finish()
    assert len(hits) == 51 and scanner.dropped == 149  # the matcher's first, then 50 more
    assert all(len(h.text) <= KEEP_CHARS and all(len(t) <= KEEP_CHARS for t in h.before + h.after) for h in hits)
    chars = LogScanner([m], max_hits=10 ** 6, max_kept=20_000)
    chars.feed(b"".join(b"key=k%d %s\n" % (i, b"v" * 5000) for i in range(200)))
    kept = chars.finish()
    assert 2 < len(kept) < 10 and chars.dropped == 200 - len(kept)  # about 6,000 characters each
    repeat = LogScanner([m], max_hits=0)
    repeat.feed(b"key=a\n" * 5 + b"key=b\n")
    (only,) = repeat.finish()  # the first hit is always kept; its repeats are counted there
    assert (only.key, only.count, repeat.dropped) == ("a", 5, 1)


@pytest.mark.skipif(not Path("/dev/zero").exists() or sys.platform != "linux", reason="needs /dev/zero")
def test_dev_zero_ends_at_the_byte_bound():
    code, out, err, rss = explain(["--max-bytes", "64M", "/dev/zero"])
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "ascend-doctor: error: stopped reading /dev/zero: the logs reached 64 MiB, the bound on what explain reads; "
        "to read more, give --max-bytes 128M"]
    assert rss < RSS_LIMIT_MB


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/zero").exists() or sys.platform != "linux", reason="needs /dev/zero")
def test_dev_zero_ends_with_the_default_bound():
    code, _, err, rss = explain(["/dev/zero"], timeout=300)
    assert code == 2 and "2048 MiB" in err and "--max-bytes 4G" in err
    assert rss < RSS_LIMIT_MB


@pytest.mark.slow  # ~0.5 s of CPU or more: logs of megabytes through the scanner
def test_byte_bound_is_over_all_logs_and_a_log_of_exactly_that_size_is_read(tmp_path):
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_bytes(b"INFO x\n" * 100)  # 700 bytes
    b.write_bytes(LIBATB + b"\n")
    code, out, err, _ = explain(["--json", "--max-bytes", "700", str(a)])
    assert code == 0, err
    code, out, err, _ = explain(["--json", "--max-bytes", "750", str(a), str(b)])  # b has 78
    assert code == 2 and "b.log" in err and "--max-bytes" in err and out == ""


def test_a_fifo_without_a_writer_ends_at_the_time_bound(tmp_path):
    fifo = tmp_path / "silent.fifo"
    os.mkfifo(fifo)
    code, out, err, _ = explain(["--max-seconds", "1", str(fifo)], timeout=60)
    assert code == 2 and out == ""
    assert "--max-seconds 2" in err and "silent.fifo" in err and len(err.strip().splitlines()) == 1


def test_a_pipe_that_never_ends_ends_at_the_time_bound():
    r, w = os.pipe()
    try:
        code, _, err, _ = explain(["--max-seconds", "1", "-"], stdin=r, timeout=60)
    finally:
        os.close(r)
        os.close(w)
    assert code == 2 and "<stdin>" in err and "--max-seconds" in err


def test_bad_bounds_are_usage_errors(capsys, monkeypatch, tmp_path):
    from doctor.cli.main import main

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    for args in (["--max-bytes", "0"], ["--max-bytes", "lots"], ["--max-seconds", "0"], ["--max-seconds", "nan"]):
        with pytest.raises(SystemExit) as info:
            main(["explain", *args, "/dev/null"])
        out = capsys.readouterr()
        assert info.value.code == 2 and out.out == "" and "Traceback" not in out.err, (args, out.err)


@pytest.mark.slow
def test_300_mb_crafted_log_stays_under_100_mb(tmp_path):
    """Lines of a full read each, lines with new keys, and plain noise: 300 MB in all."""
    log = tmp_path / "big.log"
    long_line = (LIBATB + b" " + b"w" * (CHUNK - len(LIBATB) - 2)) + b"\n"
    with open(log, "wb") as f:
        for block in range(100):
            f.write(long_line)
            f.write(b"".join(b"ImportError: lib%d_%d.so: cannot open shared object file\n" % (block, i) for i in range(2000)))
            f.write(b"INFO 09-21 03:11:40 [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 tokens/s\n" * 21000)
    assert log.stat().st_size > 290 * 10 ** 6
    code, out, err, rss = explain(["--json", str(log)], timeout=600)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["files"][0]["cut_lines"] == 100 and doc["files"][0]["dropped_hits"] > 0
    assert rss < RSS_LIMIT_MB, rss
