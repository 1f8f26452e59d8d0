"""Driver and firmware: /etc/ascend_install.info, driver/version.info, firmware/version.info."""
from __future__ import annotations

import posixpath
from typing import Optional

from doctor.facts import DriverFacts, FirmwareFacts, HostFacts
from doctor.probes.access import denied_path
from doctor.shell.host.root import Host
from doctor.parse.kvfile import parse_equals
from doctor.versions import parse_ranges

INSTALL_INFO = "/etc/ascend_install.info"
DEFAULT_BASE = "/usr/local/Ascend"
DCMI_PATHS = ("/usr/local/dcmi/libdcmi.so",)


def probe_driver(host: Host, me: Optional[HostFacts] = None) -> DriverFacts:
    facts = DriverFacts(install_info_path=INSTALL_INFO)
    text = host.read_text(INSTALL_INFO)
    if text is not None:
        facts.install_info_found = True
        facts.install_info = parse_equals(text)
    # The installer records where it put the driver; Huawei's readers match the key
    # case-insensitively, and so do we (parse_equals lower-cases keys).
    facts.base = facts.install_info.get("driver_install_path_param") or DEFAULT_BASE
    driver_dir = posixpath.join(facts.base, "driver")
    facts.version_path = posixpath.join(driver_dir, "version.info")
    facts.lib_dir = posixpath.join(driver_dir, "lib64")
    facts.hal_lib_found = any(
        host.exists(posixpath.join(facts.lib_dir, sub, "libascend_hal.so")) for sub in ("driver", "")
    )
    facts.dcmi_found = any(host.exists(p) for p in DCMI_PATHS + (posixpath.join(facts.lib_dir, "libdcmi.so"),))
    text = host.read_text(facts.version_path)
    if text is None:
        facts.denied = denied_path(host, facts.version_path, me)
        return facts
    facts.found = True
    kv = parse_equals(text)
    facts.version = kv.get("version") or kv.get("package_version") or None
    facts.package_version = kv.get("package_version")
    facts.innerversion = kv.get("innerversion")
    facts.compatible_fw = [list(r) for r in parse_ranges(kv.get("compatible_version_fw", ""))]
    if not facts.version:
        facts.malformed = "no Version= line"
    return facts


def probe_firmware(host: Host, driver: DriverFacts, me: Optional[HostFacts] = None) -> FirmwareFacts:
    base = driver.install_info.get("firmware_install_path_param") or driver.base
    facts = FirmwareFacts(version_path=posixpath.join(base, "firmware", "version.info"))
    text = host.read_text(facts.version_path)
    if text is None:
        facts.denied = denied_path(host, facts.version_path, me)
        return facts
    facts.found = True
    kv = parse_equals(text)
    facts.version = kv.get("version") or None
    facts.package_version = kv.get("package_version")
    facts.compatible_drv = [list(r) for r in parse_ranges(kv.get("compatible_version_drv", ""))]
    if not facts.version:
        facts.malformed = "no Version= line"
    return facts
