"""doctor/rules/stack.py and commands.py: torch-npu builds only the Ascend mirror has; the hand
fix carries the matrix's mirror, torch the CPU index only where it is the CPU build."""

import pytest

from doctor.rules import stack

from .build import (_shipped, python, context, expect, facts, judge, stack as dists, packages)


# -- torch-npu builds only the Ascend mirror has -----------------------------------------------------


def _row():
    return next(r for r in _shipped().releases if r.vllm_ascend == "0.11.0rc3")


@pytest.mark.parametrize("fid,check,versions", [
    ("torch_npu.version", stack.torch_npu_version, dict(torch="2.8.0+cpu", torch_npu="2.8.0")),
    ("torch.version", stack.torch_version, dict(torch="2.8.0+cpu", torch_npu="2.8.0")),
])
def test_hand_fix_for_a_post_build_carries_the_mirror_of_the_matrix(fid, check, versions):
    m = _shipped()
    r = _row()
    assert r.torch_npu_recommended == "2.7.1.post1" and r.extra_index_urls
    ctx = context(facts(packages=packages(dists(**versions))), m=m, row=r)
    f = expect(judge(check, ctx), fid, "fail")
    argv = next(list(c.argv) for c in f.commands if "torch-npu==2.7.1.post1" in c.argv)
    assert "--extra-index-url" in argv and argv[argv.index("--extra-index-url") + 1] in r.extra_index_urls


def test_a_mirror_only_build_gets_the_mirror_even_without_a_row():
    from doctor.rules.commands import install_specs

    m = _shipped()
    r = _row()
    assert r.extra_index_urls
    ctx = context(facts(python=python(machine="aarch64")), m=m, row=None)
    assert install_specs(ctx, ["torch-npu==2.7.1"])[1] == []  # on PyPI
    assert len(install_specs(ctx, ["torch-npu==2.7.1.post1"])[1]) == 1  # the Ascend mirror, from the matrix


def test_torch_needs_the_cpu_index_only_where_it_is_the_cpu_build():
    from doctor.rules.commands import CPU_INDEX, install_specs

    arm = context(facts(python=python(machine="aarch64")), row=None)
    assert install_specs(arm, ["torch==2.7.1", "torchvision==0.22.1"]) == (["torch==2.7.1", "torchvision==0.22.1"], [])
    x86 = context(facts(python=python(machine="x86_64")), row=None)
    assert install_specs(x86, ["torch==2.7.1"]) == (["torch==2.7.1+cpu"], [CPU_INDEX])
