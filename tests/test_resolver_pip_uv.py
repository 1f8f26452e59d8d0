"""pip and uv resolve every scenario of the fix tests to the same pins and the same files
(issue 20): the default resolver (uv, the user's pip configuration carried over) proves the same
plan pip would. Real pip and real uv against the metadata-faithful wheelhouse."""
import json

import pytest
from fakehost import wheelhouse as wh

from test_fix_apply import build, doctor, pip_env


def resolved(fake, house, installer, extra, env):
    # a generous npu-smi timeout: a probe that times out on a loaded machine changes the plan
    proc = doctor(fake, house, "fix", "--json", "--installer", installer, "--npu-smi-timeout", "60", *extra, env=env)
    doc = json.loads(proc.stdout)
    res = doc["resolution"]
    assert res["status"] == "resolved" and res["installer"] == installer, (installer, res, proc.stderr[-2000:])
    files = sorted((f["name"], f["version"], f["filename"]) for f in res["files"])
    steps = [(s["kind"], s.get("action"), s.get("packages")) for s in doc["steps"] if s["kind"] == "pip"]
    return doc["pins"], files, steps


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(wh.SCENARIOS))
def test_pip_and_uv_give_the_same_pins(name, tmp_path, house):
    fake = build(name, tmp_path, house)
    extra = wh.SCENARIOS[name][1]
    env = pip_env(fake, house)
    # one cache per installer: the second must resolve, not take the first one's answer
    pip = resolved(fake, house, "pip", extra, dict(env, XDG_CACHE_HOME=str(tmp_path / "c-pip")))
    uv = resolved(fake, house, "uv", extra, dict(env, XDG_CACHE_HOME=str(tmp_path / "c-uv")))
    assert pip[0] == uv[0], "pins"
    assert pip[1] == uv[1], "files"
    assert [s[:2] for s in pip[2]] == [s[:2] for s in uv[2]] and [s[2] for s in pip[2]] == [s[2] for s in uv[2]]


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
