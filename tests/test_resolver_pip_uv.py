"""The resolution a dry run made is the one `fix --apply` takes (real pip and uv against the
metadata-faithful wheelhouse). That pip and uv resolve every scenario of the fix tests to the
same pins and files (issue 20) is asserted by test_fix_apply_makes_the_stack_consistent, on the
apply's own resolution."""
import json

import pytest

from fakehost import wheelhouse as wh

from test_fix_apply import build, doctor, pip_env


@pytest.mark.slow  # ~0.5 s of CPU or more: real pip against the wheelhouse
def test_a_dry_run_then_apply_resolves_once(tmp_path, house):
    """fix then fix --apply waits once: the apply takes the dry run's resolution (same target,
    indexes and plan); a change in the index configuration resolves again."""
    fake = build("numpy_2", tmp_path, house)
    env = dict(pip_env(fake, house), XDG_CACHE_HOME=str(tmp_path / "cache"))
    slow = ("--npu-smi-timeout", "60")  # a probe timing out on a loaded machine would change the plan
    first = json.loads(doctor(fake, house, "fix", "--json", *slow, env=env).stdout)["resolution"]
    again = json.loads(doctor(fake, house, "fix", "--json", *slow, env=env).stdout)["resolution"]
    assert not first.get("reused") and again["reused"] and again["files"] == first["files"]
    other = dict(env, PIP_FIND_LINKS=env["PIP_FIND_LINKS"] + " " + str(tmp_path))  # another index configuration
    assert not json.loads(doctor(fake, house, "fix", "--json", *slow, env=other).stdout)["resolution"].get("reused")
    proc = doctor(fake, house, "fix", "--apply", "--yes", "--no-smoke", "--json", *slow, env=env)
    doc = json.loads(proc.stdout)
    assert proc.returncode in (0, 4), proc.stderr[-2000:]
    assert doc["resolution"]["reused"] and doc["result"]["applied"]
    assert wh.versions(fake.site)["numpy"] == "1.26.4"


def test_a_wheel_rebuilt_in_a_local_folder_is_resolved_again(tmp_path, house):
    """A wheelhouse (find-links) whose numpy wheel is rebuilt under the same name: the next dry
    run resolves again and names the new file's hash, not the kept one (which pip would refuse
    at install time: "Expected sha256 ... Got ...")."""
    import hashlib
    import shutil
    import zipfile

    fake = build("numpy_2", tmp_path, house)
    dirs = [tmp_path / "links" / name for name in (wh.PYPI, wh.CPU, wh.ASCEND)]
    for name, d in zip((wh.PYPI, wh.CPU, wh.ASCEND), dirs):
        shutil.copytree(house["dirs"][name], d)
    env = dict(wh.pip_env(fake.env, dirs), XDG_CACHE_HOME=str(tmp_path / "cache"))
    slow = ("--npu-smi-timeout", "60")

    def numpy_file(resolution):
        return next(f for f in resolution["files"] if f["name"] == "numpy")

    first = json.loads(doctor(fake, house, "fix", "--json", *slow, env=env).stdout)["resolution"]
    wheel = dirs[0] / numpy_file(first)["filename"]
    with zipfile.ZipFile(wheel, "a") as z:  # the same name, other bytes: a rebuilt wheel
        z.comment = b"rebuilt"
    again = json.loads(doctor(fake, house, "fix", "--json", *slow, env=env).stdout)["resolution"]
    assert not again.get("reused")
    assert numpy_file(again)["hashes"]["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert numpy_file(again)["hashes"]["sha256"] != numpy_file(first)["hashes"]["sha256"]
    kept = json.loads(doctor(fake, house, "fix", "--json", *slow, env=env).stdout)["resolution"]
    assert kept["reused"]  # nothing changed since: the resolution is reused again
