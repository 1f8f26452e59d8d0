"""The parts that make check fast keep its answers: regexes compiled on first use match as
compiled ones do, the header scan finds the same header, and the matrix rows cached by file
identity are the file's rows, whatever is planted in the cache (issue 26)."""
from __future__ import annotations

import importlib
import itertools
import os
import re
from pathlib import Path

import pytest

from doctor.lazyre import _Lazy, lazy
from doctor.matrix import load as matrix_load
from doctor.shell.host import cache

SAMPLES = ["", "a", "TOKEN=abc123def456", "https://user:pw@example.org/x?token=s3cr3t", "--api-key sk-1234567890abcdef",
           "Authorization: Bearer abcdefghijkl", '{"password": "x", "a": 1}', "export HF_TOKEN=hf_abcdefghijklmnop",
           "npu-smi 24.1.rc2 Version: 24.1.rc2", "link status: UP\nnet health status: Success", "ipaddr:29.1.1.1",
           "1024 kB", "\x1b[31mred\x1b[0m \u202e", "vllm serve /m --tensor-parallel-size 2 --dtype bfloat16"]
LAZY_MODULES = ["doctor.parse.redact", "doctor.parse.serveargs", "doctor.parse.npusmi", "doctor.parse.procfs",
                "doctor.parse.hccn", "doctor.parse.sizes", "doctor.parse.master_http", "doctor.probes.mooncake",
                "doctor.probes.cann", "doctor.rules.mooncake_config", "doctor.matrix.schema", "doctor.textsafe"]


def _lazy_patterns():
    for name in LAZY_MODULES:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if isinstance(value, _Lazy):
                yield f"{name}.{attr}", value


def test_a_lazy_pattern_matches_as_the_compiled_one_does():
    found = list(_lazy_patterns())
    assert len(found) >= 40
    for name, pattern in found:
        pattern_text, flags = pattern.__dict__["_args"]
        compiled = re.compile(pattern_text, flags)
        for text in SAMPLES:
            assert [m.span() for m in pattern.finditer(text)] == [m.span() for m in compiled.finditer(text)], name
            assert pattern.sub("<x>", text) == compiled.sub("<x>", text), name
            assert bool(pattern.match(text)) == bool(compiled.match(text)), name
        assert (pattern.pattern, pattern.flags, pattern.groups) == (compiled.pattern, compiled.flags, compiled.groups)


def test_a_lazy_pattern_is_compiled_once_on_first_use_only():
    p = lazy(r"(a+)(b)?", re.I)
    assert "search" not in p.__dict__  # nothing compiled yet
    assert p.search("xAAb").groups() == ("AA", "b")
    assert p.__dict__["search"].__self__ is p.__dict__["sub"].__self__  # one compiled pattern, kept
    with pytest.raises(re.error):
        lazy("(").match("x")  # a broken pattern still says so, when used


def test_the_header_scan_ends_where_the_first_blank_line_is():
    from doctor.parse.metadata import header_block

    def first_blank_line(data: bytes) -> bytes:  # the definition: the earlier of LF LF and LF CR LF
        ends = [i for i in (data.find(b"\n\n"), data.find(b"\n\r\n")) if i >= 0]
        return data[: min(ends)] if ends else data

    for n in range(9):
        for parts in itertools.product((b"a", b"\n", b"\r"), repeat=n):
            data = b"".join(parts)
            assert header_block(data) == first_blank_line(data), data
    head = b"Name: x\nVersion: 1\n\n" + b"long description\r\n\r\n" * 1000
    assert header_block(head) == b"Name: x\nVersion: 1"


# -- the matrix rows, cached by file identity ---------------------------------------------------

MATRIX = """schema_version = 1

[[threshold]]
name = "a"
version = "{value}.0"
meaning = "m"
source = "https://example.org/a"
"""


@pytest.fixture
def private(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "m.toml"
    path.write_text(MATRIX.format(value=1))
    return path


def _settle(path: Path) -> None:
    """Wait for the event the cache waits for: the file's identity settled (a few ms here)."""
    import time

    while not matrix_load.settled(matrix_load._identity(path), time.time_ns()):
        time.sleep(0.001)


def _values(path: Path):
    _settle(path)
    return [t.version for t in matrix_load.parse_file(path, cache)["threshold"]]


def _entries() -> list:
    d = cache._dir("matrix")
    return sorted(d.glob("*.json")) if d.is_dir() else []


def test_a_second_load_takes_the_rows_without_reading_the_file(private, monkeypatch):
    assert _values(private) == ["1.0"]
    assert len(_entries()) == 1

    def no_read(self):
        raise AssertionError(f"read {self}")

    monkeypatch.setattr(Path, "read_bytes", no_read)
    assert _values(private) == ["1.0"]


def test_an_edited_file_is_read_again(private):
    assert _values(private) == ["1.0"]
    st = os.stat(private)
    private.write_text(MATRIX.format(value=2))  # same size, same mtime: the change time still moves
    os.utime(private, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _values(private) == ["2.0"]


def test_no_rows_are_kept_for_an_identity_a_same_size_edit_could_share(private):
    """Two writes in one tick of the file system's clock stamp the same times: rows kept for the
    first would be taken for the second (issue 21: an overlay edited within that tick)."""
    st = os.stat(private)
    written = max(st.st_mtime_ns, st.st_ctime_ns)
    matrix_load.parse_file(private, cache, clock=lambda: written)  # still the tick it was written in
    assert _entries() == []
    matrix_load.parse_file(private, cache, clock=lambda: written + 2 * matrix_load.TICK_NS)
    assert len(_entries()) == 1


def test_an_identity_settles_after_two_ticks_of_its_file_systems_clock():
    fine = [1, 2, 30, 1_700_000_000_123_456_789, 1_700_000_000_123_456_789]
    assert not matrix_load.settled(fine, fine[4])
    assert not matrix_load.settled(fine, fine[4] + matrix_load.TICK_NS)
    assert matrix_load.settled(fine, fine[4] + 2 * matrix_load.TICK_NS)
    seconds = [1, 2, 30, 1_700_000_000_000_000_000, 1_700_000_001_000_000_000]  # whole seconds: a coarse file system
    assert not matrix_load.settled(seconds, seconds[4] + 2 * matrix_load.TICK_NS)
    assert not matrix_load.settled(seconds, seconds[4] + 3_999_999_999)
    assert matrix_load.settled(seconds, seconds[4] + 4_000_000_000)
    assert not matrix_load.settled([1, 2, 30, seconds[4] + 10**9, 0], seconds[4] + 10**9)  # a later mtime counts too


@pytest.mark.parametrize("planted", [b"", b"not json", b"[1, 2]", b'{"release": [["x"]]}', b'{"threshold": [[{"name": 1}, "o"]]}',
                                     b'{"nope": []}', b"[" * 100000])
def test_a_corrupt_or_planted_entry_is_a_miss(private, planted):
    assert _values(private) == ["1.0"]
    (entry,) = _entries()
    entry.write_bytes(planted)
    assert _values(private) == ["1.0"]


def test_a_symlink_or_fifo_planted_in_the_cache_is_neither_followed_nor_waited_on(private, tmp_path):
    assert _values(private) == ["1.0"]
    (entry,) = _entries()
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"threshold": [[{"name": "a", "version": "666", "meaning": "m", "source": "s"}, "o"]]}')
    entry.unlink()
    entry.symlink_to(elsewhere)
    assert _values(private) == ["1.0"]  # not followed: a miss, and the entry written anew
    assert not entry.is_symlink() and elsewhere.read_text().count("666") == 1
    entry.unlink()
    os.mkfifo(entry)
    assert _values(private) == ["1.0"]


def _thresholds(path: Path):
    _settle(path)
    m = matrix_load.load_matrix([path], user_overlays=False, cache=cache, error_knowledge=False)
    return [t.version for t in m.thresholds if t.name == "a"]


def test_a_process_builds_a_files_rows_once_and_sees_an_edit(private, monkeypatch):
    """load_matrix again in one process (fleet's nodes, guard's steps) takes the rows it built,
    by the file's identity; an edit is a new identity, read again."""
    assert _thresholds(private) == ["1.0"]
    m = matrix_load.load_matrix([private], user_overlays=False, cache=cache, error_knowledge=False)
    m.thresholds.clear()  # a caller's own list: the next load is not emptied

    def no_parse(*_a, **_k):
        raise AssertionError("parsed again")

    with monkeypatch.context() as mp:
        mp.setattr(matrix_load, "parse_file", no_parse)
        assert _thresholds(private) == ["1.0"]
    st = os.stat(private)
    private.write_text(MATRIX.format(value=2))  # same size, same mtime: the change time still moves
    os.utime(private, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _thresholds(private) == ["2.0"]


def test_the_cache_never_writes_through_a_file_planted_at_its_temporary_name(private, tmp_path):
    d = cache._dir("matrix")
    d.mkdir(parents=True)
    k = cache.key("x")
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (d / f".{k}.{os.getpid()}.tmp").symlink_to(victim)
    cache.write("matrix", k, {"a": 1})
    assert victim.read_text() == "keep"
    assert cache.read("matrix", k) is None  # not written at all: a later run writes it


def test_the_doctors_own_which_is_shutils(tmp_path, monkeypatch):
    import shutil

    from doctor.cli.invocation import _which

    for d in ("plain", "dir", "exe", "dangling"):
        (tmp_path / d).mkdir()
    (tmp_path / "plain" / "tool").write_text("")
    (tmp_path / "dir" / "tool").mkdir()
    (tmp_path / "exe" / "tool").write_text("")
    (tmp_path / "exe" / "tool").chmod(0o755)
    (tmp_path / "dangling" / "tool").symlink_to(tmp_path / "nowhere")
    monkeypatch.chdir(tmp_path)
    t = str(tmp_path)
    for path in (f"{t}/plain:{t}/dir:{t}/exe", f"{t}/dangling:{t}/exe", ":exe", "exe:exe", f"{t}/plain", "::",
                 "exe/../exe", f"{t}/exe/"):
        assert _which("tool", path) == shutil.which("tool", path=path), path


def test_a_process_builds_the_click_command_once_and_again_when_a_command_is_replaced(monkeypatch, capsys):
    import typer

    from doctor.cli import main as cli

    built = []
    real = typer.main.get_command
    monkeypatch.setattr(typer.main, "get_command", lambda app: built.append(app) or real(app))
    monkeypatch.setattr(cli, "_COMMANDS", {})
    for _ in range(3):
        with pytest.raises(SystemExit):
            cli.main(["version"])
    assert len(built) == 1 and capsys.readouterr().out.count("ascend-doctor ") == 3
    monkeypatch.setattr(cli.app.registered_commands[-1], "callback", lambda: print("replaced"))
    with pytest.raises(SystemExit):
        cli.main(["version"])
    assert len(built) == 2 and capsys.readouterr().out == "replaced\n"
