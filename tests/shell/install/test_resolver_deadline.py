"""The resolver runs like every command of the doctor (shell.proc: an argv list, a process group
of its own killed at the deadline) and a plan is proven under ONE total deadline, not one per
ask. A fake pip (a script: the answers are not the point here, the clock is) stands in for pip."""
import json
import os
import re
import sys
import time

import pytest

from fakehost import official_image
from fakehost.scenarios import ascend_host

from doctor.shell.install.installer import Choice, Downloader, Installer
from doctor.shell.install.resolver import Request, resolve_pip
from doctor.usecases.prove import prove
from shipped import matrix as shipped_matrix


def script(path, body: str) -> str:
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(0o755)
    return str(path)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_hung_resolver_and_its_children_end_at_the_deadline(tmp_path):
    pidfile = tmp_path / "grandchild"
    pip = script(tmp_path / "pip", f"""
import subprocess, time
child = subprocess.Popen(["sleep", "60"])  # keeps running unless its group is killed
open({str(pidfile)!r}, "w").write(str(child.pid))
time.sleep(60)
""")
    began = time.monotonic()
    r = resolve_pip([pip], Request(requirements=["vllm==0.11.0"]), dict(os.environ), timeout=1.5)
    took = time.monotonic() - began
    assert not r.ok and "did not finish resolving within 1.5 s" in r.failure.message
    assert took < 5, took
    grandchild = int(pidfile.read_text())
    for _ in range(20):
        if not alive(grandchild):
            break
        time.sleep(0.1)
    assert not alive(grandchild), "the resolver's group outlived its deadline"


def plan_and_facts(fake):
    from doctor.plan.builder import PlanOptions, plan_for
    from doctor.rules.engine import make_context, run_rules
    from doctor.usecases.check import CheckOptions, gather

    facts = gather(CheckOptions(root=str(fake.root), python=str(fake.python), cwd=str(fake.workdir),
                                npu_smi=fake.npu_smi_binary()), env=dict(fake.env))
    mx = shipped_matrix()
    ctx = make_context(facts, mx, "auto")
    opts = PlanOptions(installer=Installer("pip", str(fake.python), (str(fake.python), "-m", "pip")),
                       doctor_python=sys.executable)
    return plan_for(facts, mx, lambda v: run_rules(make_context(facts, mx, "auto", v)), ctx.hardware, opts), facts


REPORT = {"version": "1", "install": [{
    "metadata": {"name": "vllm", "version": "0.11.0", "requires_dist": ["not-installed-anywhere>=1"]},
    "download_info": {"url": "https://example.invalid/vllm-0.11.0-py3-none-any.whl",
                      "archive_info": {"hashes": {"sha256": "0" * 64}}},
    "requested": True}]}


@pytest.mark.slow  # ~0.5 s of CPU or more: two asks that each take 0.6 of the deadline
def test_both_asks_share_one_total_deadline(fake, tmp_path):
    """seed 001's plan needs two asks (vllm --no-deps, then vllm's unmet requirements). Each
    answer takes 0.6 T: with a deadline of T per ask both would pass; under one total deadline
    of T the second ask gets what is left (at most 0.4 T) and fails, and the whole takes ~T.

    The clock is the machine's, so the first ask ends at a fixed point of it (0.6 T after the
    proof began, whatever the work before the ask took), and only the second sleeps 0.6 T of its
    own. On a machine so loaded that the work before the first ask eats the whole deadline there
    is no second ask; the fake pip counts its calls, such a run proves nothing either way and is
    made again with T doubled."""
    ascend_host(fake, "0.11.0rc3")
    fake.install(official_image(workspace=tmp_path / "ws"))
    plan, facts = plan_and_facts(fake)
    calls = tmp_path / "calls"
    pip = script(tmp_path / "pip", f"""
import json, time
first = not open({str(calls)!r}).read()
open({str(calls)!r}, "a").write("ask\\n")
answer = json.load(open({str(tmp_path / "answer")!r}))
time.sleep(max(0.0, answer["first_until"] - time.monotonic()) if first else answer["then"])
print({json.dumps(json.dumps(REPORT))})
""")
    choice = Choice(Installer("pip", str(fake.python), (pip,)), Downloader((pip,)))
    tried = []
    for total in (2.0, 4.0, 8.0, 16.0):
        calls.write_text("")
        began = time.monotonic()
        (tmp_path / "answer").write_text(json.dumps({"first_until": began + 0.6 * total, "then": 0.6 * total}))
        # never the proof cache: a run whose tmp_path is that of an earlier run would read that run's proof
        proven = prove(plan, facts, choice, dict(os.environ), timeout=total, reuse=False)
        took = time.monotonic() - began
        if calls.read_text().count("ask") >= 2:
            break
        tried.append((total, round(took, 2), proven.resolution))
    else:
        raise AssertionError(f"the second ask never started, even with a total deadline of 16 s: {tried}")
    assert proven.resolution["status"] == "failed", proven.resolution
    message = proven.resolution["failure"]["message"]
    left = re.search(r"did not finish resolving within (\d+(?:\.\d+)?) s", message)
    assert left, message
    assert 0 < float(left.group(1)) <= 0.4 * total + 0.001, message  # what was left, not a fresh T
    assert took < 1.5 * total, took
    roomy = prove(plan, facts, choice, dict(os.environ), timeout=3 * total, reuse=False)  # the same asks with room
    assert roomy.resolution["status"] == "resolved", roomy.resolution
