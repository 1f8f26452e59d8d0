"""Vendor versions that are not versions: taken out of the facts before anything judges them.

A version file is host-controlled text. ``8.3.RC2;touch${IFS}/tmp/x;#`` in
ascend_toolkit_install.info, or ``8.3.RC2`` followed by bytes that are not UTF-8, must never be
compared as a version nor pasted into a command the user copies: the version is dropped and the
section says why (``malformed``), so the layer reports a malformed file with its path instead.
Runs once after the probes (collect) and on every snapshot read (``check --from``), which is
input of the same kind.
"""
from __future__ import annotations

from doctor.facts import Facts, ProbeError
from doctor.versions import version_problem


def reject_malformed_versions(facts: Facts) -> None:
    d = facts.driver
    if d is not None and d.version:
        why = version_problem(d.version)
        if why:
            d.version, d.malformed = None, f"{d.version_path}: Version= {why}"
    fw = facts.firmware
    if fw is not None and fw.version:
        why = version_problem(fw.version)
        if why:
            fw.version, fw.malformed = None, f"{fw.version_path}: Version= {why}"
    c = facts.cann
    if c is not None:
        if c.version:
            why = version_problem(c.version)
            if why:
                c.version, c.malformed = None, f"{c.install_info_path or c.home}: version= {why}"
        if c.ops_version:
            why = version_problem(c.ops_version)
            if why:
                c.ops_version, c.ops_malformed = None, f"{c.ops_path}: version= {why}"
        for name, value in list(c.components.items()):
            if version_problem(value):
                del c.components[name]  # version.cfg is a fallback only: a bad line is not used
        n = c.nnal
        if n.version:
            why = version_problem(n.version)
            if why:
                n.version, n.malformed = None, f"{n.path}/latest/version.info: {why}"
    dev = facts.devices
    info = dev.npu_smi_info if dev is not None else None
    if info is not None:
        for attr in ("driver_version", "tool_version"):
            value = getattr(info, attr)
            why = version_problem(value) if value else None
            if why:
                setattr(info, attr, None)
                facts.probe_errors.append(ProbeError(probe="devices", error=f"npu-smi info header: {why}"))
