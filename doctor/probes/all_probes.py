"""Every probe, in the order check runs them (an explicit list, as pre-commit's
``all_languages.py``): adding a layer means a Facts section, a probe module and a line here."""
from __future__ import annotations

from typing import Tuple

from doctor.facts import Facts
from doctor.probes.base import Probe, ProbeOptions
from doctor.shell.host.root import Host


def _python(host: Host, facts: Facts, options: ProbeOptions):
    from doctor.probes.python_env import python_from_site_packages, python_in_root, target_python

    if options.site_packages:
        host.add_given(options.site_packages)
        return python_from_site_packages(options.site_packages)
    if options.python is None and not host.is_live:
        return python_in_root(host)  # nothing inside --root runs: its site-packages are read
    return target_python(host, options.python, options.python_timeout)


def _devices(host: Host, facts: Facts, options: ProbeOptions):
    from doctor.probes.devices import probe_devices

    return probe_devices(host, facts.host, options.npu_smi_timeout, options.npu_smi, facts.not_run)


def _driver(host: Host, facts: Facts, options: ProbeOptions):
    from doctor.probes.driver import probe_driver

    return probe_driver(host, facts.host)


def _firmware(host: Host, facts: Facts, options: ProbeOptions):
    from doctor.probes.driver import probe_firmware

    return probe_firmware(host, facts.driver, facts.host) if facts.driver else None


def _cann(host: Host, facts: Facts, options: ProbeOptions):
    from doctor.probes.cann import probe_cann

    return probe_cann(host, facts.host.machine, facts.host)


def _packages(host: Host, facts: Facts, options: ProbeOptions):
    from doctor.facts import ProbeError
    from doctor.probes.packages import scan

    # No sys.path when the interpreter could not run: "nothing installed" would be a false verdict.
    py = facts.python
    readable = py is not None and (py.found or py.source == "site-packages")
    if not readable or py is None:
        return None
    found = scan(host, py.sys_path)
    for problem in found.malformed:  # its own warning, never a crash of the doctor
        facts.probe_errors.append(ProbeError(probe="packages", error=problem))
    return found


def _workdir(host: Host, facts: Facts, options: ProbeOptions):
    from doctor.probes.workdir import probe_workdir

    return probe_workdir(host.live, host.cwd, facts.packages)


def _mooncake(host: Host, facts: Facts, options: ProbeOptions):
    from doctor.probes.mooncake import MooncakeOptions, probe_mooncake

    return probe_mooncake(host, facts, MooncakeOptions(
        serve_args=options.serve_args, serve_args_file=options.serve_args_file,
        master=options.mooncake_master, timeout=options.mooncake_timeout, stage=options.stage))


def _imports(host: Host, facts: Facts, options: ProbeOptions):
    from doctor.probes.imports import probe_imports

    return probe_imports(host, facts)


def _hccn(host: Host, facts: Facts, options: ProbeOptions):
    if options.skip_idle:
        from doctor.probes.inputs import hccn_wanted

        if not hccn_wanted(host, options):
            return None
    from doctor.probes.hccn import HccnOptions, parse_ping_pairs, probe_hccn

    return probe_hccn(host, facts.devices, HccnOptions(tool=options.hccn_tool, timeout=options.hccn_timeout,
                                                       pings=parse_ping_pairs(options.ping_npu)))


def _tuning(host: Host, facts: Facts, options: ProbeOptions):
    if options.skip_idle:
        from doctor.probes.inputs import tuning_wanted

        if not tuning_wanted(facts, options):
            return None
    from doctor.probes.tuning import probe_tuning

    return probe_tuning(host, facts, options.serve_args, options.serve_args_file)


def _model(host: Host, facts: Facts, options: ProbeOptions):
    if options.model is None and (facts.tuning is None or facts.tuning.serve is None):
        return None  # no --model and no serve command to name one (model_location would say None)
    from doctor.probes.model import model_location, probe_model

    where = model_location(host, options.model, facts.tuning.serve if facts.tuning else None)
    if where is None:
        return None
    return probe_model(*where, verify=options.verify_weights, sample=options.verify_sample,
                       progress=options.progress)


PROBES: Tuple[Probe, ...] = (
    # the two that wait on processes first, so that they start at once
    Probe("python", "python", _python, waits=True),
    Probe("devices", "devices", _devices, waits=True),
    Probe("driver", "driver", _driver),
    Probe("firmware", "firmware", _firmware, after=("driver",)),
    Probe("cann", "cann", _cann),
    Probe("packages", "python", _packages, after=("python",)),
    Probe("workdir", "env", _workdir, after=("packages",)),
    Probe("mooncake", "mooncake", _mooncake, after=("packages", "devices", "driver", "cann", "python")),
    Probe("imports", "env", _imports, after=("packages", "mooncake")),  # the serve script's PYTHONPATH
    Probe("hccn", "hccn", _hccn, after=("devices",), waits=True),
    Probe("tuning", "tuning", _tuning, after=("devices",)),
    Probe("model", "tuning", _model, after=("tuning",)),
)
