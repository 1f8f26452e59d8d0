"""Run the probes against a Host and gather one Facts object.

Probes that wait on a process (the interpreter, npu-smi) run in threads of their own; everything
that burns CPU stays on this thread (a thread doing many small file reads next to a busy one
would queue for the GIL at every read). A probe runs once the probes it reads are done.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Dict, Optional, Sequence

from doctor import __version__
from doctor.facts import Facts, ProbeError, redact_env
from doctor.probes.base import Probe, ProbeOptions
from doctor.probes.host_info import probe_host
from doctor.probes.malformed import reject_malformed_versions
from doctor.shell.host.root import Host


def collect(host: Host, options: ProbeOptions, while_waiting: Optional[Callable[[], None]] = None,
            probes: Optional[Sequence[Probe]] = None) -> Facts:
    """All facts of the host. ``while_waiting`` runs on this thread while the slow probes wait
    for their processes (the check loads the matrix and its rules there)."""
    if probes is None:
        from doctor.probes.all_probes import PROBES

        probes = PROBES
    facts = Facts(
        tool_version=__version__,
        # datetime.now(timezone.utc).isoformat(timespec="seconds"), without datetime's import
        collected_at=time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
        host=probe_host(host),
        env=redact_env(host.env),
    )

    def run(probe: Probe) -> None:
        start = time.perf_counter()
        try:
            setattr(facts, probe.name, probe.run(host, facts, options))
        except Exception as e:  # a crashing probe is a finding, not a crash of the doctor
            facts.probe_errors.append(ProbeError(probe=probe.name, error=f"{type(e).__name__}: {e}"))
        facts.timings_ms[f"probe.{probe.name}"] = round((time.perf_counter() - start) * 1000, 2)

    lanes: Dict[str, threading.Thread] = {}
    for p in probes:
        if p.waits and not p.after:
            lanes[p.name] = threading.Thread(target=run, args=(p,), name=f"probe-{p.name}", daemon=True)
            lanes[p.name].start()
    waited = False
    for p in probes:
        if p.name in lanes:
            continue
        if while_waiting is not None and not waited and any(d in lanes for d in p.after):
            waited = True
            while_waiting()
        for dep in p.after:
            if dep in lanes:
                lanes[dep].join()
        run(p)
    if while_waiting is not None and not waited:
        while_waiting()
    for lane in lanes.values():
        lane.join()
    for problem in host.problems:  # symlink chains that would have led out of --root: not read
        facts.probe_errors.append(ProbeError(probe="root", error=problem))
    reject_malformed_versions(facts)
    return facts
