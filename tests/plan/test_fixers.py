"""The plan repairs what the rules say it can: Rule.fixer names a fixer of doctor.plan.builder."""
from doctor.findings import FAIL, Finding, Verdict
from doctor.i18n import T
from doctor.plan import builder
from doctor.rules.all_rules import RULES

from rules.build import facts, matrix, packages, stack


class Pip:
    """An Installer (the plan's protocol) spelling plain pip commands."""

    kind, python = "pip", "/env/bin/python"

    def _cmd(self, sub):
        return [self.python, "-m", "pip", sub]

    def install(self, specs, *, no_deps=True, extra_index_urls=(), constraint=None):
        return self._cmd("install") + (["--no-deps"] if no_deps else []) + list(specs)

    def uninstall(self, names):
        return self._cmd("uninstall") + ["-y"] + list(names)


def test_every_fixer_a_rule_names_is_known_to_the_plan():
    named = {r.fixer for r in RULES if r.fixer}
    assert named <= set(builder.FIXERS), sorted(named - set(builder.FIXERS))
    assert set(builder.FIXERS) <= named, f"fixers no rule names: {sorted(set(builder.FIXERS) - named)}"


def test_the_plan_fixes_what_it_used_to():
    # the findings the plan's steps repair (the former HANDLED list of plan.py)
    assert set(builder.fixed_by_plan()) == {
        "torch.version", "torch.build", "torch.companions", "torch_npu.version", "vllm.version",
        "vllm_ascend.installed", "vllm_ascend.plugin", "vllm_ascend.triton", "vllm_ascend.numpy",
        "vllm_ascend.transformers", "vllm_ascend.requirements", "mooncake.installed", "mooncake.transport",
        "env.pip_check"}


def _plan(findings):
    f = facts(packages=packages(stack()))
    opts = builder.PlanOptions(installer=Pip(), constraint_file="/s/c.txt", src_dir="/s/src")
    return builder.plan_for(f, matrix(), lambda version: Verdict(findings, None), "A2", opts)


def test_an_auto_fixable_finding_without_a_fixer_is_reported_not_changed():
    unfixed = Finding("devices.hardware_support", FAIL, T("devices.hardware_support.first_910"), fixable="auto")
    fixed = Finding("vllm.version", FAIL, T("stack.missing", name="vllm"), fixable="auto")
    notes = [builder.note_text(n, "en") for n in _plan([unfixed, fixed]).notes]
    assert any(n.startswith("not changed by the plan: devices.hardware_support") for n in notes)
    assert not any("vllm.version" in n for n in notes)
    zh = [builder.note_text(n, "zh") for n in _plan([unfixed]).notes]
    assert any(n.startswith("计划不处理：devices.hardware_support（vllm-ascend 不支持第一代 Ascend 910）") for n in zh)


def test_a_healthy_stack_gives_an_empty_plan():
    assert _plan([]).empty


def test_only_vllm_requirements_are_excluded_as_not_on_ascend():
    cuda_only = ("xformers", "nvidia-*")
    assert builder.excluded("vllm", "nvidia-nccl-cu12", ["torch"], cuda_only)
    assert builder.excluded("vllm-ascend", "Torch", ["torch"], cuda_only)  # a pinned stack package, any owner
    assert not builder.excluded("vllm-ascend", "xformers", ["torch"], cuda_only)  # its own requirements all count
    assert not builder.excluded("vllm", "numpy", ["torch"], cuda_only)


def test_fixers_recognise_no_finding_by_its_id():
    """A fixer acts on what the rules that name it say (Rule.fixer, Rule.reinstall), never on a
    finding id written in the planner."""
    import ast
    from pathlib import Path

    src = Path(builder.__file__).read_text(encoding="utf-8")
    for n in ast.walk(ast.parse(src)):
        literal = isinstance(n, ast.Compare) and any(
            isinstance(c, ast.Constant) or (isinstance(c, (ast.Tuple, ast.Set, ast.List)) and
                                            all(isinstance(e, ast.Constant) for e in c.elts)) for c in n.comparators)
        if literal and isinstance(n.left, ast.Attribute) and n.left.attr == "id":
            raise AssertionError(f"plan/builder.py:{n.lineno}: {ast.unparse(n)}")
    asked = {r.id for r in RULES if r.reinstall}
    assert asked == {"vllm_ascend.plugin", "vllm_ascend.requirements", "mooncake.transport"}
    assert all(r.fixer for r in RULES if r.reinstall)


def test_a_reinstall_rule_makes_its_fixer_act_on_the_right_version():
    broken = Finding("vllm_ascend.plugin", FAIL, T("vllm_ascend.plugin.missing"), fixable="auto")
    by_hand = Finding("vllm_ascend.plugin", FAIL, T("vllm_ascend.plugin.missing"), fixable="manual")
    assert [s.finding for s in _plan([broken]).steps if s.finding == "vllm_ascend.installed"]
    assert not [s.finding for s in _plan([by_hand]).steps if s.finding == "vllm_ascend.installed"]
