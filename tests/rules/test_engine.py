"""doctor/rules/engine.py: the stage, the release row, and running the records."""
from doctor.facts import ProbeError
from doctor.findings import FAIL, Finding
from doctor.i18n import T
from doctor.rules import engine
from doctor.rules.base import STAGE_BUILD_AUTO, STAGE_FORCED, STAGE_RUNTIME_AUTO, Rule

from .build import absent, context, devices, driver, expect, facts, matrix, release, stack, packages


def test_stage():
    assert engine.decide_stage(facts(), "auto") == ("runtime", STAGE_RUNTIME_AUTO)
    assert engine.decide_stage(facts(driver=None, devices=devices(count=0)), "auto") == ("build", STAGE_BUILD_AUTO)
    assert engine.decide_stage(facts(driver=driver(found=False), devices=None), "auto") == ("build", STAGE_BUILD_AUTO)
    assert engine.decide_stage(facts(), "build") == ("build", STAGE_FORCED)
    assert engine.decide_stage(facts(), "runtime") == ("runtime", STAGE_FORCED)
    # either the device nodes or the driver make a runtime host
    assert engine.decide_stage(facts(driver=None), "auto") == ("runtime", STAGE_RUNTIME_AUTO)
    assert engine.decide_stage(facts(devices=None), "auto") == ("runtime", STAGE_RUNTIME_AUTO)
    assert engine.decide_stage(facts(driver=None, devices=devices(count=2, davinci=[])), "auto")[0] == "build"
    ctx = engine.make_context(facts(driver=None, devices=None), matrix())
    assert (ctx.stage, ctx.stage_reason) == ("build", STAGE_BUILD_AUTO)


def test_context_picks_the_installed_release_or_the_target():
    m = matrix([release(), release(vllm_ascend="0.13.0")])
    ctx = engine.make_context(facts(), m)
    assert ctx.release.vllm_ascend == "0.11.0rc3" and ctx.release_note is None and ctx.hardware == "A2"
    assert engine.make_context(facts(), m, target="0.13.0").release.vllm_ascend == "0.13.0"
    dev = engine.make_context(facts(packages=packages(stack(vllm_ascend="0.13.1.dev3+g1234"))), m)
    assert dev.release.vllm_ascend == "0.13.0" and "development build" in dev.release_note
    assert engine.make_context(facts(packages=packages(stack(vllm_ascend=None))), m).release is None


def test_a_crashed_probe_is_a_warning_of_its_layer():
    v = engine.run_rules(context(facts(probe_errors=[ProbeError("packages", "boom")])), rules=())
    f = expect(v.findings, "python.probe_error", "warn")
    assert f.observed == "boom" and "packages" in f.title.text("en")
    absent(engine.run_rules(context(), rules=()).findings, "python.probe_error")


def test_a_crashed_rule_is_reported_and_the_others_still_run():
    def broken(ctx):
        raise ValueError("bad data")

    def fine(ctx):
        return [Finding("torch.version", FAIL, T("stack.missing", name="torch"))]

    v = engine.run_rules(context(), rules=(Rule("torch.build", "torch", broken), Rule("torch.version", "torch", fine)))
    f = expect(v.findings, "torch.rule_error", "warn")
    assert "ValueError: bad data" in f.title.text("en")
    expect(v.findings, "torch.version", "fail")
    assert v.root_cause == "torch.version"
    absent(engine.run_rules(context(), rules=(Rule("torch.version", "torch", fine),)).findings, "torch.rule_error")


SECTIONS = ("driver", "firmware", "cann", "devices", "python", "packages", "workdir", "imports", "mooncake", "hccn",
            "tuning", "model", "image")


def _rule_errors(f, stage):
    v = engine.run_rules(context(f, stage=stage))
    return [(x.id, x.title.text("en")) for x in v.findings if x.id.endswith(".rule_error")]


def test_every_rule_survives_a_section_that_was_not_read():
    # A probe that crashed (or a snapshot from an older doctor) leaves its section None: the rules
    # of that layer say nothing or what they can, and no rule crashes on it.
    for stage in ("runtime", "build"):
        assert _rule_errors(facts(**{name: None for name in SECTIONS}), stage) == []
        for name in SECTIONS:
            assert _rule_errors(facts(**{name: None}), stage) == [], name
