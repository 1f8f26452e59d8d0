"""doctor/plan/closure.py and the check after a resolved plan, on plain data: the resolved
closure without what only CUDA uses (issue 20: vllm 0.11.0 -> ray[cgraph] -> cupy-cuda12x,
xgrammar -> triton on x86_64), and a plan refuted when check would fail it."""
from __future__ import annotations

from doctor.findings import FAIL, INFO, OK, WARN, Finding, Verdict
from doctor.i18n import T
from doctor.parse.pipreport import Resolved
from doctor.plan import resolve
from doctor.plan.closure import is_cuda_only, prune, residual_cuts

from rules import build as b

from .test_resolve import EXACT, FRESH, fresh_plan
from .test_fixers import Pip
from shipped import matrix as shipped_matrix

CUDA = ("nvidia-*", "cupy-cuda*", "triton", "xformers", "flashinfer-*")
X86 = b.python().markers
ARM = dict(X86, platform_machine="aarch64")

RAY = Resolved("ray", "2.50.0", requires=["click>=7", 'cupy-cuda12x; extra == "cgraph"',
                                          'fastapi; extra == "serve"'])
CUPY = Resolved("cupy-cuda12x", "13.6.0", requires=["numpy<2.6,>=1.22", "fastrlock>=0.5"])
FASTRLOCK = Resolved("fastrlock", "0.8.4")
XGRAMMAR = Resolved("xgrammar", "0.1.25", requires=["torch>=1.10", 'triton; platform_machine == "x86_64"',
                                                    "pydantic", "ninja"])
TRITON = Resolved("triton", "3.4.0")
REST = [Resolved("click", "8.1.8"), Resolved("pydantic", "2.11.0", requires=["typing-extensions>=4"]),
        Resolved("typing-extensions", "4.14.0"), Resolved("ninja", "1.13.0"), Resolved("fastapi", "0.115.0")]
ALL = [RAY, CUPY, FASTRLOCK, XGRAMMAR, TRITON] + REST
ROOTS = ["ray[cgraph]>=2.48.0", 'xgrammar==0.1.25; platform_machine == "x86_64" or platform_machine == "aarch64"']


def names(rs):
    return sorted(r.name for r in rs)


def test_cuda_only_names_are_left_out_with_what_only_they_need():
    p = prune(ROOTS, ALL, CUDA, X86)
    assert names(p.dropped) == ["cupy-cuda12x", "fastapi", "fastrlock", "triton"]  # fastapi: an extra nobody asked for
    assert names(p.kept) == ["click", "ninja", "pydantic", "ray", "typing-extensions", "xgrammar"]
    by = {(c.requirer, c.excluded): c.extra for c in p.cuts}
    assert by == {("ray", "cupy-cuda12x"): "cgraph", ("xgrammar", "triton"): None}
    # an extra dropped is silent afterwards (pip check does not check extras); a plain one is not
    assert [(c.requirer, c.excluded) for c in residual_cuts(p)] == [("xgrammar", "triton")]


def test_markers_decide_what_is_cut():
    """xgrammar asks for triton on x86_64 only: on aarch64 nothing is cut, nothing is reported."""
    p = prune(ROOTS, ALL, CUDA, ARM)
    assert ("xgrammar", "triton") not in {(c.requirer, c.excluded) for c in p.cuts}
    assert "triton" in names(p.dropped)  # the resolver's x86_64 answer: nothing on aarch64 reaches it


def test_a_distribution_reached_another_way_stays():
    """numpy is cupy's requirement too, and the plan's own: kept."""
    numpy = Resolved("numpy", "1.26.4")
    p = prune(ROOTS + ["numpy<2.0.0"], ALL + [numpy], CUDA, X86)
    assert "numpy" in names(p.kept) and "cupy-cuda12x" in names(p.dropped)


def test_an_extra_requested_later_is_walked_too():
    p = prune(["ray>=2", "click", "ray[serve]"], ALL, CUDA, X86)
    assert "fastapi" in names(p.kept) and "cupy-cuda12x" in names(p.dropped) and not p.cuts


def test_patterns_are_the_matrix_ones():
    from doctor.matrix.query import package_set

    patterns = package_set(shipped_matrix(), "cuda_only")
    assert all(is_cuda_only(n, patterns) for n in ("cupy-cuda12x", "nvidia-cublas-cu12", "triton", "xformers",
                                                    "flashinfer-python", "cuda-bindings"))
    assert not any(is_cuda_only(n, patterns) for n in ("triton-ascend", "torch", "cupy", "ray", "numba"))


def test_the_resolved_plan_leaves_them_out_and_says_why():
    plan = fresh_plan()
    plan.cuda_only = CUDA
    vllm = Resolved("vllm", "0.13.0", requested=True, requires=["ray[cgraph]>=2.48.0", "xgrammar==0.1.25"])
    exact = [vllm if r.name == "vllm" else r for r in EXACT]
    deps = ALL + [Resolved("transformers", "4.57.1", requested=True), Resolved("pybind11", "2.13.6", requested=True),
                  Resolved("numpy", "1.26.4"), Resolved("pyyaml", "6.0.2")]
    out = resolve.apply(plan, FRESH, exact, deps, Pip(), X86)
    installed = {p.split("==")[0] for s in out.steps if s.kind == "pip" for p in s.packages}
    assert not installed & {"cupy-cuda12x", "fastrlock", "triton", "fastapi"}
    assert {"ray", "xgrammar", "pydantic"} <= installed
    assert {e["name"]: e["why"] for e in out.resolution["excluded"]} == {
        "cupy-cuda12x": "cuda-only", "fastrlock": "needed only by what is left out", "triton": "cuda-only",
        "fastapi": "needed only by what is left out"}
    notes = [n.text("en") for n in out.notes if hasattr(n, "text")]
    assert any("ray 2.50.0 is installed without its extra [cgraph]" in n and "cupy-cuda12x" in n for n in notes)
    assert any("xgrammar 0.1.25 is installed without triton" in n for n in notes)
    residual = [m.text("en") for m in out.expected_residual]
    assert any(m.startswith("xgrammar 0.1.25 requires triton") and "built for CUDA only" in m for m in residual)
    assert not out.resolution["unexpected_after"]  # pip check's xgrammar -> triton is expected


def finding(fid, status, fixable="none"):
    return Finding(fid, status, T("plan.have", name=fid, version="x"), fixable=fixable)


def test_a_plan_check_would_fail_is_refuted():
    before = Verdict([finding("vllm.version", FAIL, "auto"), finding("cann.version", WARN, "vendor"),
                      finding("env.pip_check", INFO)], None)
    good = Verdict([finding("vllm.version", OK), finding("cann.version", WARN, "vendor"), finding("env.pip_check", INFO)], None)
    assert resolve.unexpected_after(before, good, ["vllm.version", "env.pip_check"]) == []
    # a repaired finding still failing, and something the plan made worse, refute it
    bad = Verdict([finding("vllm.version", FAIL, "auto"), finding("cann.version", WARN, "vendor"),
                   finding("env.pip_check", WARN, "manual"), finding("torch.cuda", FAIL, "auto")], None)
    ids = [f.id for f in resolve.unexpected_after(before, bad, ["vllm.version", "env.pip_check"])]
    assert ids == ["vllm.version", "torch.cuda"]  # a manual pip-check warning is the user's to act on
    plan = fresh_plan()
    plan.resolution = {"status": resolve.RESOLVED}
    out = resolve.refuted(plan, resolve.unexpected_after(before, bad, ["vllm.version"]))
    assert out.resolution["status"] == resolve.FAILED and out.resolution["failure"]["kind"] == resolve.CHECK
    assert "torch.cuda" in out.resolution["failure"]["message"] and plan.resolution["status"] == resolve.RESOLVED


def test_torch_npu_x86_64_wheels_require_the_cpu_build_of_torch():
    """torch-npu 2.7.1's x86_64 wheel requires torch==2.7.1+cpu, its aarch64 wheel torch==2.7.1
    (wheel METADATA, matrices/torch-npu.toml torch_x86_64): a plain 2.7.1 is replaced on x86_64 only."""
    from doctor.findings import Verdict
    from doctor.plan import builder

    mx = shipped_matrix()
    row = next(r for r in mx.torch_npu if r.version == "2.7.1")
    assert row.torch_x86_64 == "2.7.1+cpu"
    assert next(r for r in mx.torch_npu if r.version == "2.12.0").torch_x86_64 is None

    def torch_steps(machine):
        f = b.facts(python=b.python(machine=machine, markers=dict(X86, platform_machine=machine)),
                    packages=b.packages(b.stack(torch="2.7.1", torch_npu="2.7.1")))
        plan = builder.plan_for(f, mx, lambda v: Verdict([], None), "A2", builder.PlanOptions(installer=Pip()))
        return [p for s in plan.steps for p in s.packages if p.startswith("torch==")], plan.pins["torch"]

    assert torch_steps("x86_64") == (["torch==2.7.1+cpu"], "2.7.1+cpu")
    assert torch_steps("aarch64") == ([], "2.7.1")
