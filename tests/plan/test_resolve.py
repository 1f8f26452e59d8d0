"""doctor/plan/resolve.py on plain data: a plan for a fresh host, and resolver answers written
out by hand (tests/test_plan_resolved.py runs the real pip)."""
from __future__ import annotations

import copy

from doctor.parse.pipreport import Resolved
from doctor.plan import builder, resolve
from doctor.rules.engine import make_context, run_rules

from rules import build as b

from .test_fixers import Pip
from .test_outputs import MATRIX

FRESH = b.facts(cann=b.cann(version="8.5.0"), packages=b.packages({}))
EXACT = [Resolved("torch", "2.8.0+cpu", size=100, requested=True), Resolved("torchvision", "0.23.0+cpu", requested=True),
         Resolved("torch-npu", "2.8.0", requested=True, requires=["torch==2.8.0", "pyyaml"]),
         Resolved("vllm", "0.13.0", requested=True, requires=["torch==2.8.0", "xformers", "requests>=2"]),
         Resolved("vllm-ascend", "0.13.0", requested=True, requires=["numpy<2", "pybind11"]),
         Resolved("triton-ascend", "3.2.0", requested=True)]
DEPS = [Resolved("transformers", "4.57.1", size=10, requested=True), Resolved("pybind11", "2.13.6", requested=True),
        Resolved("numpy", "1.26.4"), Resolved("requests", "2.32.3"), Resolved("pyyaml", "6.0.2")]


def fresh_plan():
    return builder.plan_for(FRESH, MATRIX, lambda v: run_rules(make_context(FRESH, MATRIX, "auto", v)), "A2",
                            builder.PlanOptions(installer=Pip()))


def test_the_two_asks():
    plan = fresh_plan()
    exact = resolve.exact_ask(plan)
    assert exact.requirements == ["torch==2.8.0+cpu", "torchvision==0.23.0+cpu", "torch-npu==2.8.0", "vllm==0.13.0",
                                  "vllm-ascend==0.13.0", "triton-ascend==3.2.0"]
    assert exact.no_deps and exact.ignore_installed
    deps = resolve.deps_ask(plan, FRESH, EXACT, b.python().markers)
    # the plan's ranges, then what the resolved files require (less the pinned stack)
    # (every requirer's specifier, also for a name the plan asks for: vllm-ascend's plain "pybind11"
    # beside the row's "pybind11>=2.0", as vllm 0.11.0's "numba==0.61.2" beside vllm-ascend's "numba")
    assert deps.requirements == ["transformers>=4.57.0", "pybind11>=2.0", "pyyaml", "requests>=2", "numpy<2",
                                 "pybind11"]
    assert "torch==2.8.0+cpu" in deps.constraints and "transformers>=4.57.0" in deps.constraints
    assert not deps.no_deps and not deps.ignore_installed  # against the installed environment ...
    assert resolve.deps_ask(plan, FRESH, EXACT, b.python().markers, bundle=True).ignore_installed  # ... or none


def test_after_plan_carries_what_the_files_require():
    post = resolve.after_plan(FRESH, fresh_plan(), EXACT)
    assert post["vllm"].requires == ["torch==2.8.0", "xformers", "requests>=2"] and post["vllm"].version == "0.13.0"


def test_only_files_that_change_something_are_needed():
    have = b.facts(packages=b.packages(b.stack()))
    files = [Resolved("numpy", "1.26.4"), Resolved("numpy", "1.26.3"), Resolved("torch", "2.7.1+cpu", requested=True),
             Resolved("requests", "2.32.3")]
    assert [(r.name, r.version) for r in resolve.needed(files, have)] == [
        ("numpy", "1.26.3"), ("torch", "2.7.1+cpu"), ("requests", "2.32.3")]


def test_apply_installs_the_resolved_files_and_leaves_the_plan_alone():
    plan = fresh_plan()
    before = copy.deepcopy(plan)
    out = resolve.apply(plan, FRESH, EXACT, DEPS, Pip(), b.python().markers)
    assert [(s.kind, s.action, s.packages) for s in plan.steps] == [(s.kind, s.action, s.packages) for s in before.steps]
    assert plan.pins == before.pins and plan.resolution == before.resolution
    pip = [(s.action, s.packages) for s in out.steps if s.kind == "pip"]
    assert pip == [("install", ["torch==2.8.0+cpu", "torchvision==0.23.0+cpu"]), ("install", ["torch-npu==2.8.0"]),
                   ("install", ["vllm==0.13.0"]), ("install", ["vllm-ascend==0.13.0"]),
                   ("install", ["triton-ascend==3.2.0"]), ("install", ["transformers==4.57.1", "pybind11==2.13.6"]),
                   # the requirements step: what the files require, exact, without dependencies
                   ("install", ["numpy==1.26.4", "requests==2.32.3", "pyyaml==6.0.2"])]
    assert all(s.no_deps for s in out.steps if s.kind == "pip")
    assert [s.kind for s in out.steps if s.kind != "pip"] == [s.kind for s in plan.steps if s.kind != "pip"]
    assert out.pins["transformers"] == "4.57.1" and out.resolution["status"] == resolve.RESOLVED
    assert out.resolution["download_bytes"] == 110 and out.resolution["unknown_sizes"] == 9


def test_not_resolved_says_why_on_a_copy():
    plan = fresh_plan()
    out = resolve.not_resolved(plan, "no-cann")
    assert out.resolution == {"status": resolve.NOT_RESOLVED, "why": "no-cann"} and plan.resolution != out.resolution


def test_remedies_for_an_unreachable_index_and_a_missing_build():
    from doctor.parse.pipreport import CONFLICT, MISSING, PROXY, UNREACHABLE, Failure, HostFailure
    from doctor.plan.indexes import ASCEND_MIRROR, TORCH_CPU_INDEX, remedies

    reqs = ["torch==2.8.0+cpu", "vllm==0.13.0"]
    down = Failure(UNREACHABLE, "x", hosts=[HostFailure("download.pytorch.org:443", PROXY, "x")])
    r = remedies(down, reqs, ["/env/bin/python", "-m", "pip", "install", "--no-deps"])
    assert [c.shell() for c in r.commands] == [
        "/env/bin/python -m pip install --no-deps torch==2.8.0+cpu vllm==0.13.0 --find-links "
        "https://mirrors.aliyun.com/pytorch-wheels/cpu/",
        "ascend-doctor snapshot --output node.json",
        "ascend-doctor fix --bundle ascend-bundle --from node.json",
        "ascend-doctor fix --apply --bundle ascend-bundle"]
    assert "download.pytorch.org:443" in r.notes[0].text("en")
    npu = remedies(Failure(MISSING, "x", requirement="torch_npu==2.8.0.post1"), reqs)
    assert [c.argv[-3:] for c in npu.commands] == [("torch_npu==2.8.0.post1", "--extra-index-url", ASCEND_MIRROR)]
    cpu = remedies(Failure(MISSING, "x", requirement="torch==2.8.0+cpu"), reqs)
    assert [c.argv[-2:] for c in cpu.commands] == [("--extra-index-url", TORCH_CPU_INDEX)]
    other = remedies(Failure(MISSING, "x", requirement="foo>=1"), reqs)
    assert not other.commands and "foo>=1" in other.notes[0].text("en")
    assert not remedies(Failure(CONFLICT, "x"), reqs).commands
