"""The vendor part of a plan (pure planning on fake hosts, no pip): the old host of the deployment
walk-through gets the whole ordered path and the cheapest reachable release, a machine with no
CANN gets the vendor layers and no pip installs, and every step kind shows and touches through
its StepKind."""
import json
import sys

import pytest
from fakehost import REPO, FakeHost
from fakehost.dists import Stub

from doctor.plan.builder import PlanOptions, Step, plan_for
from doctor.plan.steps import KINDS, kind_of
from doctor.plan.vendor import cheapest, path_to
from doctor.rules.engine import make_context, run_rules
from doctor.shell.install.installer import Installer
from doctor.usecases.check import CheckOptions, gather
from doctor.findings import msg
import doctor_fork
from shipped import matrix as shipped_matrix


def old_host(base) -> FakeHost:
    """As the deployment walk-through describes it: driver 23.0.0, CANN 7.0.RC1, torch 2.1.0,
    torch-npu 2.1.0rc1, transformers 4.36.2."""
    fake = FakeHost(base)
    fake.driver_version("23.0.0", fw_range="[6.0.0,7.0.99]").firmware().toolkit("7.0.RC1").devices().npu_smi().sourced()
    fake.venv({"torch": Stub("torch", "2.1.0", requires=[]),
               "torch-npu": Stub("torch-npu", "2.1.0rc1", requires=["torch==2.1.0"]),
               "transformers": Stub("transformers", "4.36.2", requires=[]),
               "numpy": Stub("numpy", "1.26.4", requires=[])})
    return fake


def planned(fake, **kw):
    matrix = shipped_matrix()
    facts = gather(CheckOptions(root=str(fake.root), python=str(fake.python), cwd=str(fake.workdir)), env=dict(fake.env))
    ctx = make_context(facts, matrix, "auto")
    opts = PlanOptions(installer=Installer("pip", str(fake.python), (str(fake.python), "-m", "pip")), **kw)
    return plan_for(facts, matrix, lambda v: run_rules(make_context(facts, matrix, "auto", v)), ctx.hardware, opts), \
        facts, matrix, ctx


def test_old_host_gets_the_whole_ordered_path(tmp_path):
    fake = old_host(tmp_path)
    p, facts, matrix, ctx = planned(fake)
    assert p.choice == "vendor-upgrade"
    kinds = [(s.kind, s.finding) for s in p.steps]
    vendor = [f for k, f in kinds if k == "vendor"][:5]
    assert vendor == ["driver.driver", "driver.firmware", "cann.toolkit", "cann.ops", "cann.nnal"]
    first_pip = next(i for i, (k, _) in enumerate(kinds) if k == "pip")
    assert all(k == "vendor" for k, _ in kinds[:first_pip])  # the vendor layers come first
    row = next(r for r in matrix.releases if r.vllm_ascend == p.target)
    cann = row.cann_for(ctx.hardware)[0]
    hdk = next(c for c in matrix.cann_driver if c.cann == cann).paired
    assert f"-> {hdk}" in p.steps[0].why.text("en") and f"-> {cann}" in p.steps[2].why.text("en")
    # the newest release among the cheapest, and what each other way costs
    best, others = cheapest(matrix, facts, ctx.hardware)
    assert best.release.vllm_ascend == p.target and all(o.cost >= best.cost for o in others)
    assert p.alternatives and all("vendor layer" in a["how"].text("en") for a in p.alternatives[:len(others)])


def test_old_host_with_a_target_upgrades_the_hdk_too(tmp_path):
    fake = old_host(tmp_path)
    p, *_ = planned(fake, target="0.11.0")
    vendor = [s.finding for s in p.steps if s.kind == "vendor"]
    assert vendor[:2] == ["driver.driver", "driver.firmware"], vendor
    # CANN 8.3.RC2's notes list no HDK: the step names whose pairing it takes, never claims one
    driver = next(s for s in p.steps if s.finding == "driver.driver").why.text("en")
    assert "no HDK is documented for CANN 8.3.RC2" in driver and "nearest documented pairing" in driver
    assert "transformers" in p.ranges  # the resolver must bring transformers under vllm's floor


def test_unknown_driver_pairing_is_no_upgrade(tmp_path):
    """driver 25.0.rc1 with CANN 8.3.RC2 is not documented either way: no HDK step."""
    from fakehost.scenarios import ascend_host

    fake = FakeHost(tmp_path)
    ascend_host(fake, "0.11.0rc3")
    p, facts, matrix, ctx = planned(fake)
    row = next(r for r in matrix.releases if r.vllm_ascend == "0.11.0rc3")
    assert path_to(matrix, facts, row, ctx.hardware).layers == []
    assert not [s for s in p.steps if s.kind == "vendor"]


def test_no_cann_plans_vendor_layers_and_no_pip(tmp_path):
    fake = FakeHost(tmp_path)  # an empty machine: no driver, no CANN
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "fix", "--json", "--root", str(fake.root)],
                          env=dict(fake.env, PYTHONPATH=str(REPO)), cwd=fake.workdir, capture_output=True, text=True,
                          timeout=120)
    doc = json.loads(proc.stdout)
    assert [s["kind"] for s in doc["steps"]] == ["vendor"] * 5
    assert doc["pins"] == {} and "--python" in doc["notes"][0]


def test_every_step_kind_is_registered_and_shown():
    from doctor.shell.steps import appliers

    assert set(KINDS) == {"pip.remove", "pip.install", "pip.requirements", "build.source", "build.mooncake", "fetch",
                          "manual", "vendor"}
    # every kind that runs has its shell half (how it is fetched and applied), and only those
    assert set(appliers()) == {k for k, kind in KINDS.items() if kind.runs}
    assert all(a.round in ("exact", "source", "deps") for a in appliers().values())
    why = msg("w", "w")
    pip = Step("pip", why, "install", argv=["python", "-m", "pip", "install", "--no-deps", "a b==1"], packages=["torch==2.7.1"])
    assert kind_of(pip).show(pip, "en") == ["python -m pip install --no-deps 'a b==1'"]
    assert kind_of(pip).touches(pip, ["torch", "numpy"]) == {"torch"}
    build = Step("build", why, "build", argv=["x"], touches_family="mooncake")
    assert kind_of(build).key == "build.mooncake"
    assert kind_of(build).touches(build, ["mooncake-transfer-engine", "torch"]) == {"mooncake-transfer-engine"}
    remove = Step("pip", why, "remove", argv=["pip", "uninstall", "-y", "triton"], removes=["triton"])
    assert kind_of(remove).touches(remove, ["triton", "torch"]) == {"triton"}
    reqs = Step("pip", why, "requirements", requirements_of=["vllm==0.11.0"])
    assert kind_of(reqs).key == "pip.requirements" and kind_of(reqs).show(reqs, "en") == []
    env = Step("build", why, "build", argv=["pip", "install", "."], env={"VLLM_TARGET_DEVICE": "empty"})
    assert kind_of(env).show(env, "en") == ["VLLM_TARGET_DEVICE=empty pip install ."] and kind_of(env).key == "build.source"
    manual = Step("manual", why, command="source /usr/local/Ascend/ascend-toolkit/set_env.sh")
    assert not manual.runs and kind_of(manual).show(manual, "en") == [manual.command]
    assert Step("fetch", why, "fetch", argv=["git"]).runs and not Step("vendor", why).runs
    with pytest.raises(ValueError):
        kind_of(Step("teleport", why))


def test_pins_and_requirements_are_decoded_once():
    from doctor.plan.pins import Pin, Spec, constraint_lines, exact_names, names

    values = {"torch": "2.7.1+cpu", "transformers": ">=4.57.3,<5", "numpy": "any", "vllm": "0.11.2+empty"}
    assert exact_names(values) == ["torch", "vllm"]
    assert constraint_lines(values) == ["torch==2.7.1+cpu", "transformers>=4.57.3,<5", "vllm==0.11.2+empty"]
    assert Pin("numpy", "any").requirement() == "numpy" and Pin("numpy", "any").constraint() is None
    assert Pin("Torch_NPU", "2.7.1").requirement() == "torch-npu==2.7.1"
    assert Spec.parse("ray[cgraph]>=2.48").name == "ray" and Spec.parse("vllm==0.11.0").exact == "0.11.0"
    assert Spec.parse("numpy<2").exact is None and Spec.parse("not a requirement!") is None
    assert names(["Torch_NPU==2.7.1", "bad spec!", "vllm"]) == ["torch-npu", "vllm"]
