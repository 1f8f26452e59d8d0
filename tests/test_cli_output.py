"""What the command line says and how it ends (issue 10): the default report (problems in full,
passing layers collapsed, a quiet verdict), no padding when piped, -h and --version everywhere,
one line and exit 2 for bad input, and fix --apply's last lines."""
from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path
from typing import List
from contextlib import redirect_stderr, redirect_stdout

import pytest
from kitrun import kit_run, names, run_cli

from doctor.findings import FAIL, INFO, OK, WARN, Finding, cmd, judge
from doctor.i18n import T
from shipped import matrix as shipped_matrix


def main(*argv: str):
    from doctor.cli.main import main as entry

    out, err = io.StringIO(), io.StringIO()
    code = None
    with redirect_stdout(out), redirect_stderr(err):
        try:
            entry(list(argv))
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


# -- the report --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", names())
def test_reports_are_not_padded(name):
    for key, (_, text, _err) in kit_run(name).out.items():
        if key.endswith(".txt"):
            assert not [line for line in text.splitlines() if line != line.rstrip()], f"{name}/{key} pads its lines"


def test_passing_layers_collapse_and_problems_show_in_full():
    code, text, _ = kit_run("seed_001_naive_fix").out["check.en.txt"]
    lines = text.splitlines()
    # the verdict first, then the root cause and what to run, then the detail
    assert code == 3 and lines[0].startswith("ascend-doctor ")
    assert lines[1] == "✗ Broken: 4 check(s) fail, 1 warn (exit 3); the root cause comes first"
    assert lines[2].startswith("Root cause: torch.version")
    assert lines[3] == "    repair it with the plan (one transaction, which can be rolled back):"
    assert lines[4].startswith("      ") and lines[4].split()[1:3] == ["fix", "--apply"]
    assert lines[5] == "    or by hand:"
    assert "✓ driver, cann (6 checks)" in lines  # a run of passing layers is one line (the firmware note aside)
    problem = lines.index(next(x for x in lines if x.startswith("✗ torch.version ")))
    assert lines[problem + 1] == "    the root cause: what to run is above"
    other = lines.index(next(x for x in lines if x.startswith("✗ torch_npu.version ")))
    assert lines[other + 2] == "    repair it with the plan (one transaction, which can be rolled back):"
    # notes that ask for nothing are left out, by id; -v shows everything
    assert lines[-2].startswith("i 4 note(s) with nothing to do: firmware.installed, devices.busy")
    assert "devices.busy" not in "".join(x for x in lines if x.startswith("i devices"))
    assert lines[-1] == "24 ok · 1 warn · 4 fail · 0 skipped · 4 info  →  exit 3"
    verbose = run_cli(kit_run("seed_001_naive_fix").fake, ("check", "-v"))[1]
    doc = json.loads(kit_run("seed_001_naive_fix").out["check.json"][1])
    assert all(f"{f['id']} " in verbose for f in doc["findings"])
    assert "· source: https://" in verbose and "expected: 2.7.1" in verbose


def test_a_note_that_asks_for_something_is_shown():
    text = kit_run("healthy_a2_container").out["check.en.txt"][1]
    assert "i torch_npu.version" in text  # fixable: the recommended build, with its command
    assert "i devices.busy" not in text


def test_a_healthy_host_gets_a_short_quiet_verdict():
    verdict = judge([Finding(f"{layer}.x", OK, T("render.healthy")) for layer in ("driver", "cann", "torch", "vllm")]
                    + [Finding("devices.busy", INFO, T("render.healthy"))])
    from doctor.render import print_check

    out = io.StringIO()
    print_check(verdict, stage="runtime", target_row="v0.11.0rc3", timings={}, lang="en", verbose=False, exit_code=0,
                file=out)
    assert out.getvalue().splitlines() == [
        "ascend-doctor 0.1.0 · runtime stage · judged against vllm-ascend v0.11.0rc3",
        "✓ All good: everything checked is consistent.",
        "✓ driver, cann, torch, vllm (4 checks)",
        "i 1 note(s) with nothing to do: devices.busy (-v shows them)",
        "4 ok · 0 warn · 0 fail · 0 skipped · 1 info  →  exit 0"]
    code, text, _ = kit_run("build_stage").out["check.en.txt"]
    assert code == 0 and len(text.splitlines()) <= 9 and "All good" in text  # a build: one more line, the skips


def test_a_command_is_never_wrapped_however_narrow_the_terminal():
    verdict = judge([Finding("torch.version", FAIL, T("render.healthy"),
                             commands=[cmd("/a/very/long/path/" + "x" * 150 + "/bin/python", "-m", "pip", "install",
                                           "--no-deps", "torch==2.7.1+cpu")])])
    from rich.console import Console

    from doctor import render

    out = io.StringIO()
    console = Console(file=out, width=40, force_terminal=True, color_system=None, soft_wrap=True)
    render.print_commands(render.Lines(console), verdict.findings[0].commands, "en")
    assert out.getvalue().splitlines()[0].strip() == verdict.findings[0].commands[0].shell()


# -- the command line --------------------------------------------------------------------------


def _commands(group, path=()):
    for name, command in getattr(group, "commands", {}).items():
        yield path + (name,)
        yield from _commands(command, path + (name,))


def test_dash_h_is_help_on_every_command_and_version_prints_the_version():
    import typer.main

    from doctor import __version__
    from doctor.cli.main import make_app

    every = list(_commands(typer.main.get_command(make_app())))
    assert len(every) >= 15 and ("matrix", "show") in every and ("fleet", "compare") in every
    for path in [()] + every:
        code, out, err = main(*path, "-h")
        assert code == 0 and out.startswith("Usage: ascend-doctor"), (path, err)
    assert main("--version") == (0, f"ascend-doctor {__version__}\n", "")


# -- bad input: one line, exit 2, fast ---------------------------------------------------------


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory):
    base = tmp_path_factory.mktemp("snapshots")
    fake = kit_run("healthy_a2").fake
    code, text, _ = run_cli(fake, ("snapshot",), lang=None)
    good = json.loads(text)
    null = dict(good, packages=None)
    (base / "null.json").write_text(json.dumps(null))
    (base / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    raw = json.dumps(good).encode()
    (base / "bytes.json").write_bytes(raw[:100] + b"\xff\xfe" + raw[100:])
    empty = base / "empty-site"
    empty.mkdir()
    hang = base / "hang"
    hang.write_text("#!/bin/sh\nsleep 60\n")
    hang.chmod(0o755)
    return base


BAD_INPUT = [
    (("--site-packages", "{base}/nonexistent"), "--site-packages {base}/nonexistent: not a directory"),
    (("--python", "/bin/ls"), "--python /bin/ls: an executable without a Python runtime in it"),
    (("--python", "{base}/hang"), "a script that did not start a Python within 3 s"),
    (("--python", "no-such-python3"), "--python no-such-python3: not found on PATH"),
    (("--from", "{base}/deep.json"), "nested too deeply"),
    (("--from", "{base}/bytes.json"), "is not UTF-8 text (byte 0xff at offset 100)"),
    (("--from", "{base}/null.json"), "has no 'packages' section"),
]


# fix validates its options with check's code: the 3 s wait for a hanging script is paid once
@pytest.mark.parametrize("command,args,words", [(c, a, w) for c in ("check", "fix") for a, w in BAD_INPUT
                                                if not (c == "fix" and "hang" in a[1])])
def test_bad_input_is_one_line_and_exit_2_fast(command, args, words, snapshots):
    args = tuple(a.format(base=snapshots) for a in args)
    words = words.format(base=snapshots)  # a path of the test's own (a machine may have a /nonexistent)
    started = time.monotonic()
    code, out, err = main(command, *args)
    assert code == 2 and out == "" and err.count("\n") == 1 and words in err, err
    assert err.startswith("ascend-doctor: error: ") and args[1] in err  # names what, and why
    assert time.monotonic() - started < 10  # never a probe's 15 s timeout


def test_an_empty_site_packages_is_judged_not_refused_as_both_languages_of_check_md_say(snapshots):
    """`--site-packages` is exit 2 only when it is not a directory: an empty one is an environment
    with nothing installed, judged (exit 3). docs/check.md says so in English and in Chinese."""
    code, out, err = main("check", "--site-packages", str(snapshots / "empty-site"))
    assert code == 3 and "vllm-ascend" in out, (out, err)
    doc = (Path(__file__).resolve().parents[1] / "docs" / "check.md").read_text(encoding="utf-8")
    en, zh = doc.split("# `ascend-doctor check`（中文）")
    assert "`--site-packages` that is not a directory" in en
    assert "`--site-packages` 不是目录" in zh and "没有已安装的包" not in zh


# a sample of the option and input errors, raised through the CLI: shown in the user's language
ZH_ERRORS = [
    (("check", "--site-packages", "/nonexistent"), "--site-packages /nonexistent：不是目录"),
    (("check", "--python", "no-such-python3"), "--python no-such-python3：在 PATH 中找不到"),
    (("check", "--stage", "later"), "--stage 'later'：请使用 auto、build 或 runtime"),
    (("check", "--from", "{base}/null.json"), "读取了解释器，却没有 'packages' 部分"),
    (("check", "--from", "{base}/deep.json", "--python", "python3"), "--from 评判已保存的快照，不能与"),
    (("check", "--target", "nonsense==1"), "--target 'nonsense==1'：应为 vllm-ascend==<版本>"),
    (("fix", "--installer", "conda"), "--installer 'conda'：请使用 auto、pip 或 uv"),
    (("fix", "--tuning-patch", "{base}/x.diff"), "--tuning-patch 写出启动脚本的 diff"),
    (("profile",), "请给出 profile 目录或文件"),
    (("profile", "{base}/empty-site"), "empty-site：这里没有 profile（没有 *_ascend_pt/ASCEND_PROFILER_OUTPUT"),
    (("profile", "--collect", "--endpoint", "ftp://h:1", "--profile-dir", "{base}"), "--endpoint ftp://h:1：应为 vllm 服务的 http:// URL"),
    (("check", "--from", "{base}/empty-site"), "empty-site：不是普通文件"),
    (("snapshot", "--ping-npu", "0-29.1.1.1"), "--ping-npu '0-29.1.1.1'：应为 DEVICE:IPV4"),
    (("smoke", "--duration", "soon"), "--duration：时长 'soon'：请写成 2h、90m、1h30m 或 600s"),
    (("mooncake", "build", "--tag", "latest"), "--tag 'latest'：应为 Mooncake 标签"),
]


@pytest.mark.parametrize("args,words", ZH_ERRORS, ids=[" ".join(a[:2]) for a, _ in ZH_ERRORS])
def test_an_option_error_is_shown_in_chinese_with_lang_zh(args, words, snapshots, monkeypatch):
    args = tuple(a.format(base=snapshots) for a in args)
    if args[0] == "snapshot":  # no --lang (its output is JSON): the language of the environment
        for name in ("LC_ALL", "LC_MESSAGES"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    else:
        args += ("--lang", "zh")
    code, out, err = main(*args)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith("ascend-doctor: error: ") and words in err, err


def test_every_float_option_refuses_nan_and_inf_in_one_line():
    """A timeout of nan seconds "fires" at once (nan compares false) and inf overflows the waits:
    every float option of every command refuses them, as it refuses -1."""
    import typer.main

    from doctor.cli.main import make_app

    top = typer.main.get_command(make_app())
    seen = []
    for path in _commands(top):
        command = top
        for name in path:
            command = command.commands[name]  # type: ignore[attr-defined]
        for param in getattr(command, "params", []):
            if getattr(param.type, "name", "").startswith("float") and param.opts[0].startswith("--"):
                seen.append(param.opts[0])
                for value in ("nan", "inf", "-inf", "1e309", "1e18", "-1e308"):  # (1e18 crashed a probe: issue 21)
                    code, out, err = main(*path, param.opts[0], value)
                    assert code == 2 and out == "" and err.count("\n") == 1, (path, param.opts, value, err)
                    assert param.opts[0] in err and ("finite" in err or "range" in err), err
    assert {"--npu-smi-timeout", "--hccn-timeout", "--timeout", "--sample-every", "--step-timeout"} <= set(seen)


def test_a_smoke_duration_too_long_for_a_float_is_refused():
    code, out, err = main("smoke", "--device", "cpu", "--duration", "9" * 400)
    assert code == 2 and err.count("\n") == 1 and "duration" in err, err


# -- fix --apply's last lines ------------------------------------------------------------------


def _verdict(*statuses):
    return judge([Finding(f"{layer}.x", s, T("render.healthy")) for layer, s in zip(("torch", "vllm", "env"), statuses)])


def test_fix_apply_names_every_failing_stage_in_its_last_line():
    from doctor.cli.fix_render import apply_verdict_lines

    smoke_failed = {"exit_code": 3, "why": "smoke.import", "stages": [{"name": "import", "status": FAIL},
                                                                     {"name": "device", "status": "skip"}]}
    lines = list(apply_verdict_lines(_verdict(OK, OK), smoke_failed, False, True, 3, "en"))
    assert lines[0] == "check after the fix: ✓ consistent (2 ok · 0 warn · 0 fail · 0 skipped · 0 info)"
    assert lines[-1] == "✗ failing: smoke (import)  →  exit 3"
    assert not any("All good" in x or "consistent." in x for x in lines)
    lines = list(apply_verdict_lines(_verdict(FAIL, OK), smoke_failed, False, True, 3, "en"))
    assert lines[-1] == "✗ failing: the check after the fix; smoke (import)  →  exit 3"
    assert list(apply_verdict_lines(_verdict(OK, WARN), {"exit_code": 0, "stages": [{"name": "import", "status": OK}]},
                                    False, True, 4, "zh"))[-1] == "! 已修复，仍有警告  →  退出码 4"
    assert list(apply_verdict_lines(_verdict(OK), None, False, False, 0, "en"))[-2:] == [
        "smoke test skipped: --no-smoke", "✓ fixed: every stage passes  →  exit 0"]
    broken_config = {"exit_code": 2, "why": "unknown table [endpoit]"}
    assert list(apply_verdict_lines(_verdict(OK), broken_config, False, True, 3, "en"))[-1] == \
        "✗ failing: smoke (unknown table [endpoit])  →  exit 3"


def test_the_summary_of_a_plain_check_is_never_all_good_with_a_failing_exit():
    from doctor.render import print_check

    out = io.StringIO()
    print_check(_verdict(OK), stage="runtime", target_row=None, timings={}, lang="en", verbose=False, exit_code=3,
                file=out)
    assert "All good" not in out.getvalue()


def test_the_dry_run_starts_with_its_verdict_and_the_command_that_carries_it_out():
    code, text, _ = kit_run("numpy_2").out["fix.en.txt"]
    lines = text.rstrip().splitlines()
    assert lines[0].startswith("Plan for vllm-ascend 0.11.0rc3")
    assert lines[1] == "dry run: nothing changed. To carry out the plan:"
    assert lines[2].startswith("  ") and lines[2].split()[1:3] == ["fix", "--root"] and " --apply " in lines[2] + " "
    assert "--python " + str(kit_run("numpy_2").fake.python) in lines[2]


def test_snapshot_output_writes_the_file_the_bundle_steps_read(tmp_path):
    fake = kit_run("healthy_a2").fake
    target = tmp_path / "node.json"
    code, out, err = run_cli(fake, ("snapshot", "--output", str(target)), lang=None)
    assert code in (0, None) and out == "" and json.loads(target.read_text())["host"]
    code, _, err = run_cli(fake, ("snapshot", "-o", str(tmp_path / "no" / "such" / "dir.json")), lang=None)
    assert code == 2 and err.startswith("ascend-doctor: error: --output ")


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs on a kit scenario
def test_snapshot_output_replaces_only_a_regular_file(tmp_path):
    """--output renames a new file over the path: over a FIFO, a device or a symlink to a file
    descriptor that would replace them with a file (as root, /dev/null). Those are exit 2 and
    left as they were; a symlink to a regular file is followed and its target replaced."""
    import os
    import stat

    fake = kit_run("healthy_a2").fake
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    (tmp_path / "real.json").write_text("old")
    links = {"fd1": "/proc/self/fd/1", "to-fifo": "fifo", "to-dir": "dir", "dangling": "nowhere/x.json",
             "to-real": "real.json"}
    for name, target in links.items():
        (tmp_path / name).symlink_to(target)
    for name in ("fifo", "dir", "fd1", "to-fifo", "to-dir", "dangling"):
        before = os.lstat(tmp_path / name)
        proc = fake.run("snapshot", "--output", str(tmp_path / name), timeout=120)
        assert proc.returncode == 2 and proc.stdout == "", (name, proc.stderr)
        assert proc.stderr.startswith(f"ascend-doctor: error: --output {tmp_path / name}: ")
        assert len(proc.stderr.splitlines()) == 1 and "not a regular file" in proc.stderr, proc.stderr
        after = os.lstat(tmp_path / name)
        assert (stat.S_IFMT(after.st_mode), after.st_ino) == (stat.S_IFMT(before.st_mode), before.st_ino), name
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["fifo", "dir", "real.json", *links])
    proc = fake.run("snapshot", "--output", str(tmp_path / "to-real"), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "to-real").is_symlink() and json.loads((tmp_path / "real.json").read_text())["host"]


def fits(out: str, columns: int) -> List[str]:
    """The lines wider than ``columns`` that are more than one word (a word is never split, so a
    URL longer than the line has a line of its own)."""
    from rich.cells import cell_len

    return [x for x in out.splitlines() if cell_len(x) > columns and len(x.split()) > 1]


@pytest.mark.parametrize("columns", ["240", "100", "60"])
def test_matrix_tables_fit_the_terminal_and_never_split_a_version_or_a_url(columns, monkeypatch):
    """COLUMNS is the width: the table fits it, with every version and URL whole (a column is as
    wide as its longest word); too narrow for that, one record per row, wrapped between words at
    the width."""

    monkeypatch.setenv("COLUMNS", columns)
    code, out, _ = main("matrix", "show")
    assert code == 0
    assert not fits(out, int(columns)), fits(out, int(columns))[:3]
    words = set(out.split())
    for r in shipped_matrix().releases:
        assert r.vllm_ascend in words and r.torch_npu in words, r.vllm_ascend
    if columns == "240":
        assert "┃" in out and max(len(x) for x in out.splitlines()) <= 240
    else:
        assert "┃" not in out
    code, out, _ = main("matrix", "show", "--release", "0.11.0rc3")
    assert code == 0 and "https://github.com/vllm-project/vllm-ascend/blob/" in out
    table_part = re.split(r"^(?:Known problem|Notes): ", out, flags=re.M)[0]  # then prose, which the terminal wraps
    assert table_part.count("\n") > 10 and not fits(table_part, int(columns)), fits(table_part, int(columns))[:3]
    for url in (w for w in out.split() if w.startswith("https://")):
        assert url.count("/") >= 4, url  # not cut
    table = [x for x in out.splitlines() if x[:1] in "┏┃┡│└"]
    assert all(len(x) <= int(columns) for x in table) and (bool(table) == (columns == "240"))


@pytest.mark.parametrize("command", [("check",), ("fix", "--offline")])
@pytest.mark.slow  # ~1 s of CPU or more: waits on a pseudo-terminal
def test_a_long_wait_shows_a_line_on_a_terminal_and_nothing_in_a_pipe(tmp_path, command):
    """check and fix waiting on a slow npu-smi: a spinner line on the terminal's stderr after 2 s,
    and nothing on stderr when it is a pipe. The fake npu-smi answers only once the terminal shows
    the line (or after 60 s), so the test waits on the line, not on a fixed sleep."""
    import os
    import pty
    import select
    import subprocess
    import sys
    import time

    fake = kit_run("healthy_a2_documented").fake
    release = tmp_path / "answer-now"
    slow = tmp_path / "npu-smi"
    slow.write_text("#!/bin/sh\ni=0\n"
                    f'while [ ! -e "{release}" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n'
                    f'cat "{fake.root / "usr/local/bin/.npu-smi-output"}"\n')
    slow.chmod(0o755)
    argv = [sys.executable, "-m", "doctor", *command, "--root", str(fake.root), "--python", str(fake.python),
            "--npu-smi", str(slow), "--npu-smi-timeout", "90"]
    env = dict(fake.env, PYTHONPATH=str(__import__("fakehost").REPO))
    # the piped run and the terminal run wait on their npu-smi at the same time
    piped = subprocess.Popen(argv, env=env, cwd=fake.workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(argv, env=env, cwd=fake.workdir, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=secondary)
    os.close(secondary)
    seen, end = b"", time.monotonic() + 120
    while time.monotonic() < end:
        ready, _, _ = select.select([primary], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(primary, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
            if b"probing the stack" in seen:
                release.touch()
        elif proc.poll() is not None:
            break
    release.touch()
    proc.wait(timeout=60)
    os.close(primary)
    assert "probing the stack".encode() in seen
    out, err = piped.communicate(timeout=120)
    assert err == "" and out.startswith(("ascend-doctor ", "Plan for ")), out[:300]


@pytest.mark.parametrize("argv", [("matrix", "explain", "0.13.0"),  # the typer commands (rich, click's main loop)
                                  ("check", "--stage", "build"),  # the check front end, text
                                  ("check", "--stage", "build", "--json")])  # one JSON document at the end
@pytest.mark.slow  # ~1 s of CPU or more: subprocess pipes
def test_a_stdout_its_reader_closed_is_exit_141_not_the_doctors_failure(argv):
    """`ascend-doctor ... | head -1`: the reader went, the doctor did not fail. Exit 141 (128 +
    SIGPIPE, what the shell shows for a writer a closed pipe stopped), never 1 ("the doctor itself
    failed"), and nothing on stderr (README, docs/check.md)."""
    import os
    import subprocess
    import sys

    from fakehost import REPO

    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first write: every write is EPIPE
    try:
        proc = subprocess.run([sys.executable, "-m", "doctor", *argv], stdout=w, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=str(REPO), LANG="C.UTF-8"), timeout=120)
    finally:
        os.close(w)
    assert proc.returncode == 141 and proc.stderr == "", proc
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    check_md = (Path(__file__).resolve().parents[1] / "docs" / "check.md").read_text(encoding="utf-8")
    assert "141" in readme and "| 141 |" in check_md


@pytest.mark.slow  # ~1 s of CPU or more: venvs and subprocess checks
def test_the_header_names_the_interpreter_the_doctor_chose_itself(tmp_path):
    """Without --python the doctor judges the active virtualenv, else python3 on PATH, passing
    over its own venv (the README's set-up activates it): the header names the one it ran, in
    both languages; with --python (the user chose) it does not."""
    import os
    import subprocess as sp
    import sys

    import doctor_fork

    venv = tmp_path / "serving"
    sp.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")

    def header(*args: str) -> str:
        proc = doctor_fork.run([sys.executable, "-m", "doctor", "check", "--stage", "runtime", *args], env=env,
                               cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert proc.returncode in (0, 3, 4), proc.stderr
        return proc.stdout.splitlines()[0]

    version = ".".join(str(x) for x in sys.version_info[:3])
    want = f"Python {version} {venv / 'bin' / 'python3'}"
    assert header().endswith(f" · {want} (the default; --python names another)"), header()
    assert header("--lang", "zh").endswith(f" · {want}（默认；用 --python 指定其他解释器）")
    assert "the default" not in header("--python", str(venv / "bin" / "python3"))
    # the doctor's own venv active (the README's shell): passed over, and the header says which
    own = dict(env, VIRTUAL_ENV=sys.prefix, PATH=f"{os.path.dirname(sys.executable)}{os.pathsep}{env['PATH']}")
    env.clear()
    env.update(own)
    assert f" · Python {version} {venv / 'bin' / 'python3'}" in header(), header()
