"""PEP 668 (issue 22): on an interpreter marked EXTERNALLY-MANAGED (Debian's /usr/bin/python3,
outside a virtualenv) pip 23.0+ refuses to install or uninstall unless told
--break-system-packages, pip's documented override. The commands the doctor prints for such a
judged interpreter (check's hints, fix's steps, guard's "run instead") carry it; a venv's and an
older pip's do not."""
from __future__ import annotations

import glob
import json
import subprocess
import sys

import pytest
from kitrun import kit_run, run_cli

from doctor.shell.host.root import Host
from doctor.shell.install.installer import PIP, break_system, choose

DEBIAN = "/usr/bin/python3"
MARKED = bool(glob.glob("/usr/lib/python3*/EXTERNALLY-MANAGED")) and bool(glob.glob("/usr/lib/python3/dist-packages/pip"))


def test_the_flag_only_where_pip_enforces_the_marker():
    assert break_system(True, "23.0.1") == ["--break-system-packages"]
    assert break_system(True, "26.3") == ["--break-system-packages"]
    assert break_system(True, "22.3.1") == []  # pip before 23.0 ignores the marker, and knows no such option
    assert break_system(False, "26.3") == []
    assert break_system(True, "23") == ["--break-system-packages"]  # a version of one part is X.0 (issue 21)
    assert break_system(True, "24") == ["--break-system-packages"]
    assert break_system(True, "22") == []
    choice = choose(PIP, DEBIAN, sys.executable, True, None, None, system=break_system(True, "23.0.1"))
    assert choice.installer.install(["vllm==0.11.0"])[:5] == [DEBIAN, "-m", "pip", "install", "--break-system-packages"]
    venv = choose(PIP, "/v/bin/python", sys.executable, True, None, None)
    assert "--break-system-packages" not in venv.installer.install(["vllm==0.11.0"])


@pytest.mark.skipif(not MARKED, reason="no EXTERNALLY-MANAGED system interpreter on this machine")
def test_the_probe_sees_the_marker_of_a_system_interpreter_and_not_in_a_venv():
    from doctor.probes.python_env import probe_python

    assert probe_python(Host(), DEBIAN).externally_managed is True
    assert probe_python(Host(), sys.executable).externally_managed is False  # the tests' venv


@pytest.mark.skipif(not MARKED, reason="no EXTERNALLY-MANAGED system interpreter on this machine")
@pytest.mark.slow  # ~1 s of CPU or more: real pip
def test_checks_pip_commands_for_a_marked_interpreter_run_there(tmp_path):
    """Seed 001's snapshot, its interpreter marked as the system's: every pip command of check
    --from carries the flag, and that spelling is what Debian's own pip accepts (an uninstall of
    a name that is not installed: exit 0 with the flag, the PEP 668 refusal without it)."""
    fake = kit_run("seed_001_official_image").fake
    snap = tmp_path / "node.json"
    code, _, err = run_cli(fake, ("snapshot", "--output", str(snap)), lang=None)
    assert code == 0, err
    doc = json.loads(snap.read_text())
    doc["python"]["externally_managed"] = True
    snap.write_text(json.dumps(doc))
    code, out, err = _check_from(fake, snap)
    pips = [c["argv"] for f in json.loads(out)["findings"] for c in f.get("commands", []) if "pip" in c["argv"]]
    assert pips, out[:500]
    for argv in pips:
        sub = next(a for a in argv if a in ("install", "uninstall"))
        assert argv[argv.index(sub) + 1] == "--break-system-packages", argv
    doc["python"]["externally_managed"] = False
    snap.write_text(json.dumps(doc))
    code, out, _ = _check_from(fake, snap)
    assert not [c for f in json.loads(out)["findings"] for c in f.get("commands", [])
                if "--break-system-packages" in c["argv"]]

    def uninstall(*flag: str) -> subprocess.CompletedProcess:
        return subprocess.run([DEBIAN, "-m", "pip", "uninstall", *flag, "-y", "no-such-package-ascend-doctor"],
                              capture_output=True, text=True, timeout=120)

    refused, ok = uninstall(), uninstall("--break-system-packages")
    assert refused.returncode != 0 and "externally-managed-environment" in refused.stderr + refused.stdout
    assert ok.returncode == 0, ok.stderr


def _check_from(fake, snap):
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from doctor.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = None
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(["check", "--from", str(snap), "--json"])
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()
