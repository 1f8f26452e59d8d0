"""fix --site-packages DIR where no interpreter owns DIR: the plan says what changes and prints no
pip command, since pip run by any interpreter the doctor could name would change another
environment."""
import json
import shutil

import pytest
from kitrun import kit_run, run_cli


@pytest.fixture(scope="module")
def unowned(tmp_path_factory):
    fake = kit_run("seed_001_naive_fix").fake
    dirs = tmp_path_factory.mktemp("unowned") / "lib" / "python3.11" / "site-packages"
    shutil.copytree(fake.site, dirs, symlinks=True)  # the packages without their interpreter
    return fake, dirs


@pytest.mark.parametrize("lang,words", [("en", "no interpreter was found that owns"), ("zh", "没有找到拥有")])
def test_the_steps_of_unowned_directories_carry_no_command(unowned, lang, words):
    fake, dirs = unowned
    code, out, err = run_cli(fake, ("fix", "--offline", "--root", str(fake.root), "--site-packages", str(dirs)),
                             lang=lang, target=False)
    assert code == 3 and "Traceback" not in err, out + err
    assert " -m pip " not in out and "--python python3" not in out, out
    steps = [x for x in out.splitlines() if x.startswith(("1. [pip/install]", "2. [pip/install]"))]
    assert len(steps) == 2, out  # what changes is still said
    assert words in out and str(dirs) in out


def test_json_has_no_argv_for_unowned_directories_and_the_owned_ones_name_their_interpreter(unowned):
    fake, dirs = unowned
    code, out, _ = run_cli(fake, ("fix", "--offline", "--json", "--root", str(fake.root), "--site-packages", str(dirs)),
                           lang=None, target=False)
    doc = json.loads(out)
    runs = [s for s in doc["steps"] if s["kind"] == "pip"]
    assert runs and all(s["argv"] is None for s in runs), runs
    assert any("--python" in n and "--site-packages" in n for n in doc["notes"]), doc["notes"]
    # the same packages in their venv: the owner is found beside them and the commands name it
    code, out, _ = run_cli(fake, ("fix", "--offline", "--json", "--site-packages", str(fake.site)), lang=None, target=False)
    owned = [s for s in json.loads(out)["steps"] if s["kind"] == "pip"]
    venv_bin = str(fake.python.parent)
    assert owned and all(s["argv"][s["argv"].index("--python") + 1].startswith(venv_bin) for s in owned), owned


def test_a_snapshot_of_directories_gets_no_commands_from_this_hosts_interpreters(unowned, tmp_path):
    """The snapshot of directories is read on another host: an interpreter here beside the same
    path would be this host's, not the owner there."""
    fake, _ = unowned
    snap = tmp_path / "dirs.json"
    code, _, err = run_cli(fake, ("snapshot", "--site-packages", str(fake.site), "--output", str(snap)), lang=None,
                       target=False)
    assert code in (0, None), err
    code, out, _ = run_cli(fake, ("fix", "--offline", "--json", "--from", str(snap)), lang=None, target=False)
    doc = json.loads(out)
    steps = [s for s in doc["steps"] if s["kind"] == "pip"]
    assert steps and all(s["argv"] is None for s in steps), steps  # its venv exists here, yet is not named
    assert any(str(fake.site) in n for n in doc["notes"]), doc["notes"]  # the note names the snapshot's directories
