"""Run every probe against a Host and gather one Facts object.

Each probe is isolated: an exception becomes a ProbeError and the run goes on.
"""
from __future__ import annotations

import datetime
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, List, Optional

from doctor import __version__
from doctor.facts import Facts, HostFacts, ProbeError, redact_env
from doctor.shell.host import Host
from doctor.probes.cann import probe_cann
from doctor.probes.devices import probe_devices
from doctor.probes.driver import probe_driver, probe_firmware
from doctor.probes.packages import scan
from doctor.shell.prefetch import default_python
from doctor.probes.python_env import probe_python, python_from_site_packages
from doctor.probes.workdir import probe_workdir


@dataclass
class ProbeOptions:
    python: Optional[str] = None  # --python
    site_packages: List[str] = field(default_factory=list)  # --site-packages (no interpreter)
    npu_smi_timeout: float = 5.0
    python_timeout: float = 15.0
    serve_args: Optional[str] = None  # --serve-args: the user's `vllm serve ...` command line
    serve_args_file: Optional[str] = None  # --serve-args-file: a file holding it (or a launch script)
    mooncake_master: Optional[str] = None  # --mooncake-master host:port[:metrics_port]
    mooncake_timeout: float = 2.0  # per network call to the master


def _groups(host: Host) -> dict:
    text = host.read_text("/etc/group") or ""
    out = {}
    for line in text.splitlines():
        bits = line.split(":")
        if len(bits) >= 3 and bits[2].isdigit():
            out[bits[0]] = int(bits[2])
    return out


def probe_host(host: Host) -> HostFacts:
    import getpass

    try:
        user = getpass.getuser()
    except Exception:  # no passwd entry in a container: the uid is what matters
        user = str(os.getuid())
    gids = sorted(set([os.getgid()] + os.getgroups()))
    in_container = host.exists("/.dockerenv") or host.exists("/run/.containerenv")
    return HostFacts(
        root=str(host.root), cwd=host.cwd, uid=os.getuid(), gids=gids, user=user,
        groups=_groups(host), machine=os.uname().machine, in_container=in_container,
    )


def collect(host: Host, options: ProbeOptions, while_waiting: Optional[Callable[[], None]] = None) -> Facts:
    """All facts of the host. ``while_waiting`` runs on this thread while the slow probes wait
    for their processes (the check loads the matrix and its rules there)."""
    facts = Facts(
        tool_version=__version__,
        collected_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        host=probe_host(host),
        env=redact_env(host.env),
    )

    def run(name: str, fn: Callable[[], object], attr: Optional[str]) -> None:
        start = time.perf_counter()
        try:
            value = fn()
            if attr:
                setattr(facts, attr, value)
        except Exception as e:  # a crashing probe is a finding, not a crash of the doctor
            facts.probe_errors.append(ProbeError(probe=name, error=f"{type(e).__name__}: {e}"))
        facts.timings_ms[f"probe.{name}"] = round((time.perf_counter() - start) * 1000, 2)

    # The interpreter and npu-smi are the slow probes, waiting on their processes: they wait in
    # threads of their own. Everything that burns CPU stays on this thread (a thread doing many
    # small file reads next to a busy one would queue for the GIL at every read).
    lanes = [threading.Thread(target=run, args=(name, fn, name), name=f"probe-{name}", daemon=True)
             for name, fn in (("python", lambda: _python(host, options)),
                              ("devices", lambda: probe_devices(host, facts.host, options.npu_smi_timeout)))]
    for lane in lanes:
        lane.start()
    run("driver", lambda: probe_driver(host), "driver")
    run("firmware", lambda: probe_firmware(host, facts.driver) if facts.driver else None, "firmware")
    run("cann", lambda: probe_cann(host, facts.host.machine), "cann")
    if while_waiting is not None:
        while_waiting()
    lanes[0].join()
    # No sys.path when the interpreter could not run: "nothing installed" would be a false verdict.
    readable = facts.python is not None and (facts.python.found or facts.python.source == "site-packages")
    run("packages", lambda: scan(facts.python.sys_path) if readable else None, "packages")
    run("workdir", lambda: probe_workdir(host.cwd, facts.packages), "workdir")
    lanes[1].join()
    run("mooncake", lambda: _mooncake(host, facts, options), "mooncake")
    return facts


def _python(host: Host, options: ProbeOptions):
    if options.site_packages:
        return python_from_site_packages(options.site_packages)
    return probe_python(host, options.python or default_python(host.env), options.python_timeout)


def _mooncake(host: Host, facts: Facts, options: ProbeOptions):
    from doctor.probes.mooncake import MooncakeOptions, probe_mooncake  # imported while the other probes wait

    return probe_mooncake(host, facts, MooncakeOptions(
        serve_args=options.serve_args, serve_args_file=options.serve_args_file,
        master=options.mooncake_master, timeout=options.mooncake_timeout))
