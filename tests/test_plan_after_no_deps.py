"""Advice agrees with itself and with the plan (issue 22): after the user's own
``pip install --no-deps vllm==0.11.0`` on seed 001's image, vllm's own requirements (fastapi,
openai, ... 47 of them, from vllm 0.11.0's recorded Requires-Dist) are missing. check fails on
them and points at fix; fix must then have something to run (the missing requirements, never
torch), and once those are in, check no longer fails on them."""
from __future__ import annotations

import json

from fakehost import FakeHost
from fakehost.dists import Stub, index_metadata
from fakehost.kit import SCENARIOS
from kitrun import run_cli
from packaging.requirements import Requirement


def _host(tmp_path) -> FakeHost:
    fake = FakeHost(tmp_path / "host")
    SCENARIOS["seed_001_official_image"](fake)
    fake.install({"vllm": Stub("vllm", "0.11.0", requires=index_metadata()[("vllm", "0.11.0")]["requires_dist"])})
    return fake


def test_fix_installs_what_a_no_deps_vllm_left_out_and_check_agrees_afterwards(tmp_path):
    fake = _host(tmp_path)
    code, out, _ = run_cli(fake, ("check", "--json"))
    doc = json.loads(out)
    pip_check = next(f for f in doc["findings"] if f["id"] == "env.pip_check")
    assert code == 3 and pip_check["status"] == "fail" and doc["summary"]["root_cause"] == "env.pip_check"
    assert [c["argv"][1] for c in pip_check["commands"]] == ["fix"]

    code, out, _ = run_cli(fake, ("fix", "--offline", "--json"))
    plan = json.loads(out)
    steps = [s for s in plan["steps"] if s.get("finding") == "env.pip_check"]
    assert len(steps) == 1 and steps[0]["action"] == "install" and not steps[0].get("no_deps"), plan["steps"]
    names = {Requirement(p).name.lower() for p in steps[0]["packages"]}
    assert {"fastapi", "openai", "regex", "pydantic"} <= names
    assert not names & {"torch", "torchvision", "torchaudio", "torch-npu", "vllm", "vllm-ascend", "xformers"}, names
    assert "vllm" in steps[0]["why"]

    code, text, _ = run_cli(fake, ("fix", "--offline"))
    assert "nothing in the plan is for ascend-doctor to run" not in text and " --apply " in text, text
    code, text, _ = run_cli(fake, ("fix", "--offline"), lang="zh")
    assert "计划中没有需要 ascend-doctor 执行的步骤" not in text and " --apply " in text, text

    # what the step installs, in: check has nothing left to fail on
    wanted = [Requirement(p) for p in steps[0]["packages"]]
    fake.install({r.name: Stub(r.name, _a_version(r), requires=[]) for r in wanted})
    code, out, _ = run_cli(fake, ("check", "--json"))
    after = {f["id"]: f["status"] for f in json.loads(out)["findings"]}
    assert after["env.pip_check"] != "fail" and code != 3, after


def _a_version(req: Requirement) -> str:
    """A version that satisfies the requirement (the exact pin, else the lower bound, else 1.0)."""
    for s in req.specifier:
        if s.operator == "==":
            return s.version
    for s in req.specifier:
        if s.operator == ">=":
            return s.version
    return next(v for v in ("1.0.0", "0.7.11") if req.specifier.contains(v, prereleases=True))
