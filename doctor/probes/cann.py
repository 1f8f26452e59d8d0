"""CANN toolkit, ops/kernels package and NNAL/ATB, in both install layouts.

<= 8.3: /usr/local/Ascend/ascend-toolkit/latest/<arch>-linux/ascend_toolkit_install.info
>= 8.5: /usr/local/Ascend/cann -> cann-<ver>, same info file; ops in ascend_ops_install.info.
"""
from __future__ import annotations

import posixpath
import re
from typing import List, Optional, Tuple

from doctor.facts import CannFacts, DeniedPath, HostFacts, NnalFacts
from doctor.probes.access import denied_path
from doctor.shell.host.root import Host
from doctor.parse.kvfile import parse_colon, parse_equals
from doctor.lazyre import lazy

DEFAULT_HOMES = (
    "/usr/local/Ascend/cann",
    "/usr/local/Ascend/ascend-toolkit/latest",
)
_VERSION_DIR = lazy(r"^(cann-)?\d+\.\d+\.[\w.\-]+$", re.IGNORECASE)


def _candidates(host: Host) -> List[Tuple[str, str]]:
    out = []
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
        value = (host.env.get(var) or "").strip()
        if value:
            out.append((value.rstrip("/") or "/", var))
    for home in DEFAULT_HOMES:
        out.append((home, home))
    user_home = host.env.get("HOME")
    if user_home:
        # Non-root installs default to ~/Ascend.
        for sub in ("Ascend/cann", "Ascend/ascend-toolkit/latest"):
            p = posixpath.join(user_home, sub)
            out.append((p, p))
    return out


def _arch_dirs(host: Host, home: str, machine: str) -> List[str]:
    names = [n for n in host.listdir(home) if n.endswith("-linux")]
    # arm64-linux is a symlink to aarch64-linux; prefer the machine's own arch.
    names.sort(key=lambda n: (not n.startswith(machine), n == "arm64-linux", n))
    return names


def probe_cann(host: Host, machine: str, me: Optional[HostFacts] = None) -> CannFacts:
    facts = CannFacts()
    denied: Optional[DeniedPath] = None
    for home, how in _candidates(host):
        facts.searched.append(home)
        if not host.is_dir(home):
            # a home that is there but may not be searched is not "not installed"
            denied = denied or denied_path(host, home, me)
            continue
        facts.found = True
        facts.home, facts.how = home, how
        _read_toolkit(host, facts, machine, me)
        break
    if not facts.found:
        facts.denied = denied
    facts.other_versions = _installed_versions(host)
    base = _ascend_base(facts.home) if facts.home else "/usr/local/Ascend"
    facts.nnal = probe_nnal(host, base)
    return facts


def _read_toolkit(host: Host, facts: CannFacts, machine: str, me: Optional[HostFacts] = None) -> None:
    home = facts.home or ""
    real = host.realpath(home)
    facts.real_home = real
    facts.layout = "cann" if re.search(r"/cann(-[^/]*)?$", real) or "/cann-" in real else "ascend-toolkit"
    arch_dirs = _arch_dirs(host, home, machine)
    denied = None if arch_dirs else denied_path(host, home, me)  # a home that may not be listed
    for arch_dir in arch_dirs:
        info_path = posixpath.join(home, arch_dir, "ascend_toolkit_install.info")
        text = host.read_text(info_path)
        if text is None:
            denied = denied or denied_path(host, info_path, me)
            continue
        kv = parse_equals(text)
        facts.install_info_path = info_path
        facts.version = kv.get("version") or None
        facts.innerversion = kv.get("innerversion")
        facts.arch = kv.get("arch") or arch_dir[: -len("-linux")]
        ops = host.read_text(posixpath.join(home, arch_dir, "ascend_ops_install.info"))
        if ops is not None:
            okv = parse_equals(ops)
            facts.ops_found = True
            facts.ops_package = okv.get("package_name")
            facts.ops_version = okv.get("version")
            facts.ops_path = posixpath.join(home, arch_dir, "ascend_ops_install.info")
        break
    cfg = host.read_text(posixpath.join(home, "version.cfg"))
    if cfg is not None:
        facts.components = _parse_version_cfg(cfg)
    if facts.install_info_path is None and denied is not None:
        facts.denied = denied  # not "no version": this user may not read it (no guessing either)
    elif not facts.version:
        # The install info is missing or has no version: fall back to the version directory
        # the component links point at (latest/runtime -> ../8.2.RC2/runtime).
        facts.version = _version_from_links(host, home, real) or facts.components.get("toolkit")
        facts.malformed = "no ascend_toolkit_install.info with a version= line under " + home
    if not facts.ops_found:
        kernel = host.read_text(posixpath.join(home, "opp_kernel", "version.info"))
        if kernel is not None:
            kv = parse_equals(kernel)
            facts.ops_found = True
            facts.ops_package = "Ascend-cann-kernels"
            facts.ops_version = kv.get("version_dir") or kv.get("version")
            facts.ops_path = posixpath.join(home, "opp_kernel", "version.info")
        elif "opp_kernel" in facts.components:
            facts.ops_found = True
            facts.ops_package = "Ascend-cann-kernels"
            facts.ops_version = facts.components["opp_kernel"]
            facts.ops_path = posixpath.join(home, "version.cfg")
    for lib in ("libascendcl.so", "libhccl.so"):
        facts.libs[lib] = host.exists(posixpath.join(home, "lib64", lib))
    for candidate in (posixpath.join(home, "set_env.sh"), posixpath.join(posixpath.dirname(home), "set_env.sh")):
        if host.exists(candidate):
            facts.set_env = candidate
            break


def _parse_version_cfg(text: str) -> dict:
    """``runtime_installed_version=[8.2.0.2.220:8.2.RC2]`` -> {"runtime": "8.2.RC2"}."""
    out = {}
    for key, value in parse_equals(text).items():
        m = re.match(r"^(.*)_installed_version$", key)
        v = re.search(r":([^\]:]+)\]", value)
        if m and v:
            out[m.group(1)] = v.group(1).strip()
    return out


def _version_from_links(host: Host, home: str, real_home: str) -> Optional[str]:
    for comp in ("runtime", "compiler", "toolkit"):
        target = host.realpath(posixpath.join(home, comp))
        parent = posixpath.basename(posixpath.dirname(target))
        if _VERSION_DIR.match(parent) and parent != posixpath.basename(real_home):
            return re.sub(r"^cann-", "", parent)
    name = posixpath.basename(real_home)
    if _VERSION_DIR.match(name):
        return re.sub(r"^cann-", "", name)
    return None


def _installed_versions(host: Host) -> List[str]:
    found = []
    for parent, prefix in (("/usr/local/Ascend/ascend-toolkit", ""), ("/usr/local/Ascend", "cann-")):
        for name in host.listdir(parent):
            if name.startswith(prefix) and _VERSION_DIR.match(name) and host.is_dir(posixpath.join(parent, name)):
                found.append(name[len(prefix):] if prefix else name)
    return sorted(set(found))


def _ascend_base(home: str) -> str:
    parts = home.split("/")
    if "Ascend" in parts:
        return "/".join(parts[: parts.index("Ascend") + 1])
    return "/usr/local/Ascend"


def probe_nnal(host: Host, base: str) -> NnalFacts:
    facts = NnalFacts(path=posixpath.join(base, "nnal", "atb"))
    if not host.is_dir(facts.path):
        return facts
    facts.found = True
    set_env = posixpath.join(facts.path, "set_env.sh")
    facts.set_env = set_env if host.exists(set_env) else None
    text = host.read_text(posixpath.join(facts.path, "latest", "version.info"))
    if text is not None:
        kv = parse_colon(text)
        facts.version = kv.get("ascend-cann-atb") or kv.get("version")
    else:
        versions = [n for n in host.listdir(facts.path) if _VERSION_DIR.match(n)]
        facts.version = versions[-1] if versions else None
    return facts
