"""Whether a check has anything for a probe to ask, decided before the probe's module (and its
parsers) is imported. Only check asks (``ProbeOptions.skip_idle``): a snapshot records every
layer, for a later judge that may want it."""
from __future__ import annotations

from doctor.facts import Facts
from doctor.probes.base import ProbeOptions
from doctor.rules.gates import HCCN_ENV
from doctor.shell.host.root import Host

HCCN_DIRS = ("/usr/local/Ascend/driver/tools", "/usr/local/bin", "/usr/bin", "/usr/local/sbin", "/usr/sbin")


def hccn_wanted(host: Host, options: ProbeOptions) -> bool:
    """hccn_tool will run (named, or found on the live host), pings are asked, a serve command is
    given, or the environment sets a control-plane variable: else the NPU network rules have
    nothing to judge (doctor/rules/gates.py) and the probe's facts would go unread."""
    if options.hccn_tool or options.ping_npu or options.serve_args is not None or options.serve_args_file:
        return True
    if any(k in host.env for k in HCCN_ENV):
        return True
    return host.is_live and host.which("hccn_tool", HCCN_DIRS) is not None


def tuning_wanted(facts: Facts, options: ProbeOptions) -> bool:
    """The tuning probe reads the host's settings, judged at run time only, and the serve
    command: at the build stage without a serve command no tuning or serve rule reads what it
    would gather (the environment they judge is in the facts already). The stage is the one
    the check will judge at: the devices and the driver are probed by now."""
    from doctor.rules.engine import decide_stage

    if options.serve_args is not None or options.serve_args_file:
        return True
    return decide_stage(facts, options.stage)[0] != "build"
