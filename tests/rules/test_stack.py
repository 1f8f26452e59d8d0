"""doctor/rules/stack.py: torch, torch-npu, vllm and vllm-ascend against the release row."""
import pytest

from doctor.matrix.model import KnownProblem, TorchNpu
from doctor.rules import stack as rules

from .build import absent, cann, context, dist, expect, facts, judge, matrix, packages, release, stack


def with_stack(**versions):
    return facts(packages=packages(stack(**versions)))


def with_dists(**extra):
    """The healthy stack plus (or with replaced) distributions."""
    dists = stack()
    for d in extra.values():  # keyed by the distribution's own name, not the keyword
        dists[d.name] = d
    return facts(packages=packages(dists))


# -- torch -------------------------------------------------------------------------------------------


def shells(f) -> str:
    """A finding's commands as printed, one per line."""
    return "\n".join(c.shell() for c in f.commands)


def test_torch_version():
    f = expect(judge(rules.torch_version, context()), "torch.version", "ok")
    assert f.expected == "2.7.1"
    expect(judge(rules.torch_version, context(row=None)), "torch.version", "info")


def test_torch_moved_by_vllm_names_the_culprit():
    f = with_dists(torch=dist("torch", "2.8.0"), vllm=dist("vllm", "0.11.0", requires=["torch==2.8.0"]))
    found = expect(judge(rules.torch_version, context(f)), "torch.version", "fail")
    assert "(vllm 0.11.0 pins torch 2.8.0: installing it replaced torch)" in found.title.text("en")
    lines = shells(found).splitlines()
    assert found.fixable == "auto" and lines[0] == "ascend-doctor fix --apply --python /env/bin/python"
    assert lines[1] == ("/env/bin/python -m pip install --no-deps --extra-index-url https://download.pytorch.org/whl/cpu "
                        "torch==2.7.1+cpu")  # the CPU build, from the index that has it, by the judged interpreter
    assert [c.label.key for c in found.commands if c.label] == ["cmd.fix_apply", "cmd.by_hand"]
    assert "torch-npu" not in shells(found)  # the installed torch-npu 2.7.1 is one the release accepts: kept


def test_torch_companions_are_judged_against_the_torch_the_release_needs():
    """torch 2.8.0 pulled in by vllm: the installed torchvision 0.22.1 is torch 2.7.1's, the one
    the plan puts back, so there is nothing to change (not "install 0.23.0" against the plan);
    a torchvision 0.23.0 that came with it goes back to 0.22.1, and torch.version's hand steps say so."""
    moved = with_dists(torch=dist("torch", "2.8.0"), torchvision=dist("torchvision", "0.22.1"))
    expect(judge(rules.torch_companions, context(moved)), "torch.companions", "ok")
    both = with_dists(torch=dist("torch", "2.8.0"), torchvision=dist("torchvision", "0.23.0"))
    f = expect(judge(rules.torch_companions, context(both)), "torch.companions", "fail")
    assert "does not belong to torch 2.7.1 (needs 0.22.1)" in f.title.text("en") and "torchvision==0.22.1" in shells(f)
    root = expect(judge(rules.torch_version, context(both)), "torch.version", "fail")
    assert "torch==2.7.1+cpu torchvision==0.22.1+cpu" in shells(root)


def test_torch_moved_by_a_companion_names_it():
    f = with_dists(torch=dist("torch", "2.8.0"), torchaudio=dist("torchaudio", "2.8.0", requires=["torch==2.8.0"]))
    found = expect(judge(rules.torch_version, context(f)), "torch.version", "fail")
    assert "(torchaudio 2.8.0 pins torch 2.8.0: installing it replaced torch)" in found.title.text("en")


def test_torch_missing():
    f = expect(judge(rules.torch_version, context(with_stack(torch=None))), "torch.version", "fail")
    assert f.observed == "not installed" and "torch==2.7.1" in f.hint.text("en")
    absent(judge(rules.torch_version, context(with_stack(torch=None), row=None)), "torch.version")
    absent(judge(rules.torch_build, context(with_stack(torch=None))), "torch.build")


def test_torch_build():
    expect(judge(rules.torch_build, context()), "torch.build", "ok")
    cuda = with_dists(torch=dist("torch", "2.7.1", details={"cuda": "12.6"}),
                      nv=dist("nvidia-cublas-cu12", "12.6.4.1"))
    f = expect(judge(rules.torch_build, context(cuda)), "torch.build", "fail")
    assert "and 1 nvidia-* packages" in f.title.text("en")
    assert "/env/bin/python -m pip uninstall -y torch nvidia-cublas-cu12" in shells(f).splitlines()
    expect(judge(rules.torch_build, context(with_stack(torch="2.7.1+cu126"))), "torch.build", "fail")
    expect(judge(rules.torch_build, context(with_stack(torch="2.7.1+rocm6.3"))), "torch.build", "fail")
    leftovers = with_dists(nv=dist("nvidia-nccl-cu12", "2.26.2"))
    f = expect(judge(rules.torch_build, context(leftovers)), "torch.build", "warn")
    assert shells(f) == "/env/bin/python -m pip uninstall -y nvidia-nccl-cu12"


def test_torch_companions():
    expect(judge(rules.torch_companions, context()), "torch.companions", "ok")
    f = expect(judge(rules.torch_companions, context(with_stack(torchvision="0.23.0"))), "torch.companions", "fail")
    assert f.expected == "0.22.1" and shells(f).endswith("torchvision==0.22.1+cpu")
    absent(judge(rules.torch_companions, context(with_stack(torchvision=None))), "torch.companions")


# -- torch-npu -----------------------------------------------------------------------------------------


def test_torch_npu_version():
    expect(judge(rules.torch_npu_version, context()), "torch_npu.version", "ok")
    f = expect(judge(rules.torch_npu_version, context(with_stack(torch_npu="2.6.0"))), "torch_npu.version", "fail")
    assert str(f.expected) == "2.7.1 or 2.7.1.post1" and f.expected.text("zh") == "2.7.1 或 2.7.1.post1"
    f = expect(judge(rules.torch_npu_version, context(with_stack(torch_npu=None))), "torch_npu.version", "fail")
    assert "torch-npu==2.7.1.post1" in f.hint.text("en") and shells(f).startswith("ascend-doctor fix --apply")
    absent(judge(rules.torch_npu_version, context(with_stack(torch_npu=None), row=None)), "torch_npu.version")


def test_torch_npu_pins_another_torch():
    f = with_dists(torch=dist("torch", "2.6.0"), torch_npu=dist("torch-npu", "2.7.1.post1", requires=["torch==2.7.1"]))
    found = expect(judge(rules.torch_npu_version, context(f, row=None)), "torch_npu.version", "fail")
    assert (found.observed, found.expected) == ("2.6.0", "2.7.1")


def test_torch_npu_not_the_recommended_build_is_information_with_the_mirror():
    f = expect(judge(rules.torch_npu_version, context(with_stack(torch_npu="2.7.1"))), "torch_npu.version", "info")
    assert shells(f) == ("/env/bin/python -m pip install --no-deps --extra-index-url "
                         "https://mirrors.huaweicloud.com/ascend/repos/pypi torch-npu==2.7.1.post1")
    expect(judge(rules.torch_npu_version, context(row=None)), "torch_npu.version", "info")


def test_torch_npu_cann():
    expect(judge(rules.torch_npu_cann, context()), "torch_npu.cann", "ok")
    f = expect(judge(rules.torch_npu_cann, context(facts(cann=cann(version="8.2.RC1")))), "torch_npu.cann", "fail")
    assert f.expected == ">=8.3.RC1" and f.fixable == "vendor"
    expect(judge(rules.torch_npu_cann, context(with_stack(torch_npu="9.9.9"))), "torch_npu.cann", "info")
    absent(judge(rules.torch_npu_cann, context(facts(cann=cann(version=None)))), "torch_npu.cann")
    absent(judge(rules.torch_npu_cann, context(with_stack(torch_npu=None))), "torch_npu.cann")


# -- vllm ------------------------------------------------------------------------------------------------


def test_vllm_version():
    expect(judge(rules.vllm_version, context()), "vllm.version", "ok")
    f = expect(judge(rules.vllm_version, context(with_stack(vllm="0.11.2+empty"))), "vllm.version", "fail")
    # the plan only: vllm --no-deps by hand would leave its other requirements uninstalled
    assert str(f.expected) == "0.11.0" and "pip install" not in shells(f)
    assert shells(f).splitlines() == ["ascend-doctor fix --apply --python /env/bin/python",
                                      "ascend-doctor fix --apply --vllm-from source --python /env/bin/python"]
    expect(judge(rules.vllm_version, context(with_stack(vllm=None))), "vllm.version", "fail")
    expect(judge(rules.vllm_version, context(row=None)), "vllm.version", "info")
    absent(judge(rules.vllm_version, context(with_stack(vllm=None), row=None)), "vllm.version")
    expect(judge(rules.vllm_version, context(row=release(vllm_alternatives=("0.11.1",)), f=with_stack(vllm="0.11.1"))),
           "vllm.version", "ok")


def test_editable_vllm_says_where():
    f = with_dists(vllm=dist("vllm", "0.12.0", editable=True, direct_url="file:///src/vllm"))
    assert "(/src/vllm)" in expect(judge(rules.vllm_version, context(f)), "vllm.version", "fail").title.text("en")


def test_vllm_local_version():
    f = expect(judge(rules.vllm_local_version, context(with_stack(vllm="0.11.0+empty"))), "vllm.local_version", "info")
    assert shells(f) == "export VLLM_VERSION=0.11.0"
    absent(judge(rules.vllm_local_version, context()), "vllm.local_version")
    overridden = facts(packages=packages(stack(vllm="0.11.0+empty")), env={"VLLM_VERSION": "0.11.0"})
    absent(judge(rules.vllm_local_version, context(overridden)), "vllm.local_version")
    absent(judge(rules.vllm_local_version, context(with_stack(vllm="0.12.0+empty"))), "vllm.local_version")


# -- vllm-ascend -------------------------------------------------------------------------------------------


def test_vllm_ascend_installed():
    expect(judge(rules.vllm_ascend_installed, context()), "vllm_ascend.installed", "ok")
    f = expect(judge(rules.vllm_ascend_installed, context(with_stack(vllm_ascend=None))), "vllm_ascend.installed", "fail")
    assert f.fixable == "auto"
    expect(judge(rules.vllm_ascend_installed, context(row=None)), "vllm_ascend.installed", "warn")
    f = expect(judge(rules.vllm_ascend_installed, context(release_note="a dev build")), "vllm_ascend.installed", "warn")
    assert f.fixable == "none"
    expect(judge(rules.vllm_ascend_installed, context(row=release(curated=False))), "vllm_ascend.installed", "info")
    absent(judge(rules.vllm_ascend_installed, context(facts(packages=None))), "vllm_ascend.installed")


def test_vllm_ascend_missing_on_a_machine_without_cann_offers_no_install():
    """A bare machine (the README's first check on a laptop): the finding printed `ascend-doctor
    fix --apply --python X`, which installs torch, torch-npu, vllm and vllm-ascend into X with no
    CANN to run them, and its hint spoke of 'this CANN'."""
    bare = with_stack(vllm_ascend=None)
    bare.cann = cann(found=False, version=None)
    f = expect(judge(rules.vllm_ascend_installed, context(bare)), "vllm_ascend.installed", "fail")
    assert f.commands == [] and "CANN first" in f.hint.text("en") and "this CANN" not in f.hint.text("en")
    with_cann = expect(judge(rules.vllm_ascend_installed, context(with_stack(vllm_ascend=None))),
                       "vllm_ascend.installed", "fail")
    assert [tuple(c.argv[:3]) for c in with_cann.commands] == [("ascend-doctor", "fix", "--apply")]


def test_plugin():
    expect(judge(rules.vllm_ascend_plugin, context()), "vllm_ascend.plugin", "ok")
    f = with_dists(vllm_ascend=dist("vllm-ascend", "0.11.0rc3"))
    expect(judge(rules.vllm_ascend_plugin, context(f)), "vllm_ascend.plugin", "fail")
    narrowed = facts(env={"VLLM_PLUGINS": "lora"})
    expect(judge(rules.vllm_ascend_plugin, context(narrowed)), "vllm_ascend.plugin", "fail")
    other = with_dists(x=dist("vllm-other", "1.0", entry_points={"vllm.platform_plugins": {"other": "x:y"}}))
    expect(judge(rules.vllm_ascend_plugin, context(other)), "vllm_ascend.plugin", "warn")
    absent(judge(rules.vllm_ascend_plugin, context(row=None)), "vllm_ascend.plugin")


TRITON_ROW = release(vllm_ascend="0.13.0", triton_ascend="3.2.0")


@pytest.mark.parametrize("extra,hardware,status", [
    ({"triton-ascend": "3.2.0"}, "A2", "ok"),
    ({"triton-ascend": "3.2.0", "triton": "3.3.0"}, "A2", "fail"),  # both own the 'triton' package
    ({}, "A2", "fail"),  # the row pins triton-ascend
    ({"triton-ascend": "3.1.0"}, "A2", "fail"),
    ({"triton-ascend": "3.2.0"}, "310P", "warn"),  # not supported there
])
def test_triton_with_a_row_that_pins_it(extra, hardware, status):
    dists = stack(vllm_ascend="0.13.0")
    for name, v in extra.items():
        dists[name] = dist(name, v)
    ctx = context(facts(packages=packages(dists)), m=matrix([TRITON_ROW]), hardware=hardware)
    expect(judge(rules.vllm_ascend_triton, ctx), "vllm_ascend.triton", status)


def test_triton_with_a_row_that_does_not_use_it():
    expect(judge(rules.vllm_ascend_triton, context(with_dists(t=dist("triton", "3.3.0")))), "vllm_ascend.triton", "warn")
    expect(judge(rules.vllm_ascend_triton, context(with_dists(t=dist("triton-ascend", "3.2.0")))), "vllm_ascend.triton", "warn")
    absent(judge(rules.vllm_ascend_triton, context()), "vllm_ascend.triton")
    absent(judge(rules.vllm_ascend_triton, context(m=matrix([TRITON_ROW]), hardware="310P",
                                                  f=with_stack(vllm_ascend="0.13.0"))), "vllm_ascend.triton")


def test_numpy_and_transformers():
    expect(judge(rules.vllm_ascend_numpy, context()), "vllm_ascend.numpy", "ok")
    f = expect(judge(rules.vllm_ascend_numpy, context(with_stack(numpy="2.2.0"))), "vllm_ascend.numpy", "fail")
    assert "numpy 2 removed np.float_" in f.title.text("en") and shells(f) == "/env/bin/python -m pip install --no-deps 'numpy<2.0.0'"
    expect(judge(rules.vllm_ascend_numpy, context(with_stack(numpy=None))), "vllm_ascend.numpy", "fail")
    absent(judge(rules.vllm_ascend_numpy, context(row=release(numpy=None))), "vllm_ascend.numpy")
    expect(judge(rules.vllm_ascend_transformers, context()), "vllm_ascend.transformers", "ok")
    f = expect(judge(rules.vllm_ascend_transformers, context(with_stack(transformers="4.40.0"))),
               "vllm_ascend.transformers", "fail")
    assert "numpy" not in f.title.text("en")
    absent(judge(rules.vllm_ascend_transformers, context(row=None)), "vllm_ascend.transformers")


def test_known_problems():
    row = release(known_problems=(KnownProblem("KV cache corrupts on A3", "https://example.org/1",
                                               summary_zh="A3 上 KV cache 损坏"),))
    f = expect(judge(rules.vllm_ascend_known_problems, context(row=row)), "vllm_ascend.known_problems", "info")
    assert "KV cache corrupts on A3" in f.title.text("en") and "A3 上 KV cache 损坏" in f.title.text("zh")
    assert [str(e) for e in f.evidence] == ["KV cache corrupts on A3 (https://example.org/1)"]
    assert f.to_json("zh")["evidence"] == ["KV cache corrupts on A3 (https://example.org/1)"]  # data: English in JSON
    absent(judge(rules.vllm_ascend_known_problems, context()), "vllm_ascend.known_problems")


def test_torch_npu_row_on_the_mirror_fixture():
    assert any(isinstance(t, TorchNpu) and t.index == "ascend-mirror" for t in matrix().torch_npu)
