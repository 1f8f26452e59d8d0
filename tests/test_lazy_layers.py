"""A layer with no input is neither probed nor judged by check, and its modules are never
imported (doctor/rules/gates.py, doctor/probes/inputs.py): the gates must only ever skip what
would have said nothing, and the laziness must hold (a module imported by accident is ~15 ms
of every check)."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from typing import Dict, List, Tuple

import pytest

from doctor.record import replace
from doctor.rules import gates
from doctor.rules.base import Context
from shipped import matrix as shipped_matrix

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GATED_MODULES = ("doctor.rules.hccn", "doctor.rules.tuning", "doctor.rules.tuning_serve", "doctor.rules.tuning_model",
                 "doctor.rules.tuning_common", "doctor.parse.hccn", "doctor.parse.serving", "doctor.probes.hccn",
                 "doctor.probes.model", "doctor.parse.safetensors", "doctor.probes.tuning", "doctor.parse.procfs")


def _contexts() -> List[Tuple[str, Context]]:
    """Every literal host of the rules' unit goldens (hccn, tuning, serve and model cases among
    them), each at both stages."""
    from doctor.rules.engine import make_context
    from rules import build as b
    from rules.test_outputs import cases
    from rules.test_tuning_outputs import cases as tuning_cases
    from rules.test_tuning import facts

    out = [(name, b.context(**kw)) for name, kw in cases().items()]
    matrix = shipped_matrix()
    out += [(name, make_context(facts(**kw), matrix, "runtime", release)) for name, (kw, release) in tuning_cases().items()]
    out += [(f"{name} (plain env)", make_context(replace(facts(**kw), env={"PATH": "/usr/bin"}), matrix, "build", None))
            for name, (kw, release) in tuning_cases().items()]
    both = []
    for name, ctx in out:
        both.append((f"{name} @{ctx.stage}", ctx))
        other = "build" if ctx.stage == "runtime" else "runtime"
        both.append((f"{name} @{other}", replace(ctx, stage=other, memo={})))
    return both


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs with their imports recorded
def test_a_gate_that_says_no_input_skips_only_rules_that_would_say_nothing():
    said: Dict[str, int] = {m: 0 for m in gates.GATES}
    skipped: Dict[str, int] = {m: 0 for m in gates.GATES}
    for name, ctx in _contexts():
        for module, gate in gates.GATES.items():
            rules = importlib.import_module(f"doctor.rules.{module}").RULES
            if gate(ctx):
                said[module] += any(list(r.check(replace(ctx, memo={}))) for r in rules)
                continue
            skipped[module] += 1
            for r in rules:  # a crash would have been a finding (rule_error) too
                assert list(r.check(replace(ctx, memo={}))) == [], (name, module, r.id)
    # not vacuous: every gate both skipped hosts and let through hosts its rules spoke about
    assert all(n >= 5 for n in skipped.values()), skipped
    assert all(n >= 3 for n in said.values()), said


def test_check_selects_the_rules_in_the_order_of_every_rule():
    from doctor.rules import all_rules
    from rules import build as b

    ctx = b.context()
    chosen = all_rules.rules_for(ctx)
    every = all_rules.RULES
    assert [r for r in every if r in chosen] == list(chosen)
    assert len(all_rules.eager()) < len(chosen) <= len(every)


def _imported(argv: List[str], env: Dict[str, str], cwd: str) -> Tuple[dict, List[str]]:
    probe = ("import atexit, sys\n"
             f"atexit.register(lambda: print(sorted(m for m in sys.modules if m in {GATED_MODULES!r}), file=sys.stderr))\n"
             "sys.argv = ['ascend-doctor'] + sys.argv[1:]\n"
             "from doctor.entry import main; main()\n")
    proc = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=120)
    return json.loads(proc.stdout), eval(proc.stderr.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def build_host():
    from kitrun import kit_run

    return kit_run("build_stage").fake


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs with their imports recorded
def test_check_of_a_host_without_network_tuning_or_model_input_imports_none_of_their_modules(build_host, tmp_path):
    fake = build_host
    env = dict(fake.env, PYTHONPATH=REPO, HOME=str(tmp_path))
    doc, loaded = _imported(["check", "--json", *fake.args()], env, str(fake.workdir))
    assert doc["stage"] == "build" and doc["findings"]
    assert loaded == []


@pytest.mark.parametrize("extra, env_extra, wanted", [
    (["--serve-args", "vllm serve /m -tp 2"], {}, {"doctor.rules.tuning", "doctor.rules.tuning_serve", "doctor.parse.serving",
                                                   "doctor.probes.tuning"}),
    ([], {"HCCL_IF_IP": "10.0.0.1"}, {"doctor.rules.hccn", "doctor.probes.hccn", "doctor.parse.hccn"}),
    ([], {"TASK_QUEUE_ENABLE": "0"}, {"doctor.rules.tuning"}),
    (["--stage", "runtime"], {}, {"doctor.rules.tuning", "doctor.rules.tuning_serve", "doctor.probes.tuning"}),
])
@pytest.mark.slow  # ~1 s of CPU or more: subprocess checks per layer
def test_a_layer_with_input_is_judged(build_host, tmp_path, extra, env_extra, wanted):
    fake = build_host
    env = dict(fake.env, PYTHONPATH=REPO, HOME=str(tmp_path), **env_extra)
    doc, loaded = _imported(["check", "--json", *fake.args(), *extra], env, str(fake.workdir))
    assert wanted <= set(loaded), loaded
    if env_extra.get("TASK_QUEUE_ENABLE") == "0":
        assert any(f["id"] == "tuning.env_harmful" for f in doc["findings"])
    if "HCCL_IF_IP" in env_extra:
        assert any(f["id"] == "hccn.hccl_if_ip" for f in doc["findings"])


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs with their imports recorded
def test_at_the_build_stage_without_a_serve_command_no_rule_reads_the_tuning_probe():
    """check skips the tuning probe there (doctor/probes/inputs.py): every rule must say the same
    with the host's settings as without them."""
    from doctor.rules import all_rules

    compared = 0
    for name, ctx in _contexts():
        t = ctx.facts.tuning
        if not ctx.build or t is None or t.serve is not None:
            continue
        without = replace(ctx, facts=replace(ctx.facts, tuning=None), memo={})
        for module in all_rules.NAMES:
            for r in importlib.import_module(f"doctor.rules.{module}").RULES:
                assert list(r.check(replace(ctx, memo={}))) == list(r.check(replace(without, memo={}))), (name, r.id)
        compared += 1
    assert compared >= 10, compared
