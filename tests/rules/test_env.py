"""doctor/rules/env.py: the process environment, pip check and shadowing."""
import pytest

from doctor.facts import ShadowFact, WorkdirFacts
from doctor.rules import env as rules
from doctor.rules.pipcheck import Conflict

from .build import (SOURCED_ENV, absent, cann, context, dist, expect, facts, judge, nnal, packages, release, stack)


def env(**changes):
    out = dict(SOURCED_ENV)
    for k, v in changes.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


# -- CANN and NNAL variables ------------------------------------------------------------------------


def test_cann_env_ok():
    expect(judge(rules.cann_env, context()), "env.cann_env", "ok")


def test_cann_not_sourced_fails_at_run_time_and_warns_in_a_build():
    f = facts(env={})
    found = expect(judge(rules.cann_env, context(f)), "env.cann_env", "fail")
    assert "toolkit lib64 is not on LD_LIBRARY_PATH" in found.title.text("en")
    assert "ASCEND_OPP_PATH" in str(found.observed) and "driver libraries" in str(found.observed)
    assert found.title.text("zh").startswith("CANN 环境变量未生效：") and "；" in found.title.text("zh")
    built = expect(judge(rules.cann_env, context(f, stage="build")), "env.cann_env", "warn")
    assert "driver libraries" not in str(built.observed)  # the build stage has no driver to look for


def test_a_stale_home_variable_is_named():
    f = expect(judge(rules.cann_env, context(facts(env=env(ASCEND_TOOLKIT_HOME="/opt/old")))), "env.cann_env", "fail")
    assert "ASCEND_TOOLKIT_HOME=/opt/old does not exist" in str(f.observed)


def test_cann_env_not_judged_without_cann():
    absent(judge(rules.cann_env, context(facts(cann=cann(found=False)))), "env.cann_env")


def test_nnal_env():
    expect(judge(rules.nnal_env, context()), "env.nnal_env", "ok")
    expect(judge(rules.nnal_env, context(facts(env=env(ATB_HOME_PATH=None)))), "env.nnal_env", "fail")
    expect(judge(rules.nnal_env, context(facts(env=env(ATB_HOME_PATH=None)), stage="build")), "env.nnal_env", "warn")
    other_abi = env(ATB_HOME_PATH="/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1")
    expect(judge(rules.nnal_env, context(facts(env=other_abi))), "env.nnal_env", "warn")
    absent(judge(rules.nnal_env, context(facts(cann=cann(nnal=nnal(found=False))))), "env.nnal_env")


# -- vLLM variables -------------------------------------------------------------------------------------


def test_vllm_version_override():
    expect(judge(rules.vllm_version_override, context(facts(env=env(VLLM_VERSION="0.11.0")))),
           "env.vllm_version_override", "ok")
    f = expect(judge(rules.vllm_version_override, context(facts(env=env(VLLM_VERSION="0.18.0")))),
               "env.vllm_version_override", "fail")
    assert f.expected == "0.11.0"
    absent(judge(rules.vllm_version_override, context()), "env.vllm_version_override")


def test_a_vllm_version_exported_by_the_launch_script_is_judged():
    """The environment every rule reads is the host's with the launch script's exports applied:
    a stale VLLM_VERSION the script exports is what the serving processes see."""
    from doctor.facts import TuningFacts
    from doctor.parse.serving import read_command

    script = "export VLLM_VERSION=0.18.0\nvllm serve /models/q\n"
    f = facts(env=env(VLLM_VERSION=None), tuning=TuningFacts(serve=read_command(script, {}, "launch.sh")))
    found = expect(judge(rules.vllm_version_override, context(f)), "env.vllm_version_override", "fail")
    assert found.observed == "0.18.0" and found.expected == "0.11.0"
    # the script's export wins over the host's, as in the shell that runs it
    f = facts(env=env(VLLM_VERSION="0.11.0"), tuning=TuningFacts(serve=read_command(script, {}, "launch.sh")))
    expect(judge(rules.vllm_version_override, context(f)), "env.vllm_version_override", "fail")
    f = facts(env=env(VLLM_VERSION="0.18.0"),
              tuning=TuningFacts(serve=read_command("export VLLM_VERSION=0.11.0\nvllm serve /m\n", {}, "launch.sh")))
    expect(judge(rules.vllm_version_override, context(f)), "env.vllm_version_override", "ok")


def test_vllm_target_device():
    expect(judge(rules.vllm_target_device, context(facts(env=env(VLLM_TARGET_DEVICE="cuda")))),
           "env.vllm_target_device", "warn")
    for ok in ("empty", "npu", None):
        absent(judge(rules.vllm_target_device, context(facts(env=env(VLLM_TARGET_DEVICE=ok)))), "env.vllm_target_device")


# -- the working directory ------------------------------------------------------------------------------


def _shadow(is_package, same=False):
    return WorkdirFacts(cwd="/work", shadows=[ShadowFact("vllm", "/work/vllm", is_package, same)])


def test_cwd_shadow():
    f = expect(judge(rules.cwd_shadow, context(facts(workdir=_shadow(False)))), "env.cwd_shadow", "fail")
    assert "unknown location" in f.title.text("en")
    expect(judge(rules.cwd_shadow, context(facts(workdir=_shadow(True)))), "env.cwd_shadow", "warn")
    absent(judge(rules.cwd_shadow, context(facts(workdir=_shadow(True, same=True)))), "env.cwd_shadow")
    absent(judge(rules.cwd_shadow, context()), "env.cwd_shadow")


# -- pip check -----------------------------------------------------------------------------------------


def conflict(requirer, required, spec="==1.0", installed="2.0"):
    return Conflict(requirer, "1.0", f"{required}{spec}", required, spec, installed)


def test_pip_check_clean():
    f = expect(judge(rules.pip_check, context(pip_conflicts=[])), "env.pip_check", "ok")
    assert f.observed == "7 distributions"
    expect(judge(rules.vllm_ascend_requirements, context(pip_conflicts=[])), "vllm_ascend.requirements", "ok")


def test_pip_check_computed_when_the_caller_gave_none():
    pk = packages(dict(stack(), foo=dist("foo", "1.0", requires=["bar>=2"])))
    f = expect(judge(rules.pip_check, context(facts(packages=pk))), "env.pip_check", "warn")
    assert "foo 1.0 requires bar>=2, which is not installed" in f.evidence


def test_a_broken_stack_requirement_fails_an_unrelated_one_warns():
    f = expect(judge(rules.pip_check, context(pip_conflicts=[conflict("transformers", "tokenizers")])), "env.pip_check", "fail")
    assert f.fixable == "auto"
    f = expect(judge(rules.pip_check, context(pip_conflicts=[conflict("foo", "bar")])), "env.pip_check", "warn")
    assert f.fixable == "manual"


def test_the_expected_vllm_residual_is_information():
    # vllm from the index pins a newer torch; with torch at the release's pin that is expected
    f = expect(judge(rules.pip_check, context(pip_conflicts=[conflict("vllm", "torch", "==2.8.0", "2.7.1+cpu")])),
               "env.pip_check", "info")
    assert f.source == rules.RESIDUAL_SOURCE
    # ... but not when torch itself is off the release's pin
    f = facts(packages=packages(stack(torch="2.8.0")))
    expect(judge(rules.pip_check, context(f, pip_conflicts=[conflict("vllm", "torch", "==2.9.0", "2.8.0")])),
           "env.pip_check", "fail")


def test_vllm_ascend_requirements():
    own = [conflict("vllm-ascend", "pybind11", ">=2.0", None)]
    f = expect(judge(rules.vllm_ascend_requirements, context(pip_conflicts=own)), "vllm_ascend.requirements", "fail")
    assert f.fixable == "auto" and f.commands[-1].shell() == "/env/bin/python -m pip install 'pybind11>=2.0'"
    # requirements a dedicated finding reports (torch) are not counted twice
    covered = [conflict("vllm-ascend", "torch", "==2.7.1", "2.8.0")]
    expect(judge(rules.vllm_ascend_requirements, context(pip_conflicts=covered)), "vllm_ascend.requirements", "ok")
    for name in ("torch-npu", "numpy", "transformers", "triton-ascend", "torchvision", "torchaudio"):  # and these
        covered = [conflict("vllm-ascend", name)]
        expect(judge(rules.vllm_ascend_requirements, context(pip_conflicts=covered)), "vllm_ascend.requirements", "ok")
    absent(judge(rules.vllm_ascend_requirements, context(facts(packages=packages(stack(vllm_ascend=None))))),
           "vllm_ascend.requirements")


def test_no_packages_section():
    ctx = context(facts(packages=None))
    absent(judge(rules.pip_check, ctx), "env.pip_check")
    for check in (rules.pip_check, rules.vllm_ascend_requirements, rules.shadowed_dists):
        assert judge(check, ctx) == []


# -- shadowed distributions ------------------------------------------------------------------------------


def test_shadowed_distributions_warn():
    second = dist("numpy", "2.1.0", location="/usr/lib/python3/dist-packages")
    f = expect(judge(rules.shadowed_dists, context(facts(packages=packages(shadowed=[second])))), "env.shadowed_dists", "warn")
    assert f.observed == "numpy 2.1.0 in /usr/lib/python3/dist-packages" and f.evidence == [second.metadata_path]
    assert f.title.text("zh").endswith("numpy 2.1.0")


def test_no_shadowed_distributions_no_finding():
    absent(judge(rules.shadowed_dists, context()), "env.shadowed_dists")


@pytest.mark.parametrize("release_row", [None, release()])
def test_env_rules_do_not_need_a_release(release_row):
    ctx = context(row=release_row, pip_conflicts=[])
    expect(judge(rules.pip_check, ctx), "env.pip_check", "ok")
