"""KV connector names a vllm-ascend (or vLLM) install registers, read from its source files.

vllm-ascend registers its connectors with ``KVConnectorFactory.register_connector("Name",
"module.path", "Class")`` in ``vllm_ascend/distributed/__init__.py`` (<= v0.13) or
``vllm_ascend/distributed/kv_transfer/__init__.py`` (>= v0.15); importing the package to ask
would import vllm and torch, so we read the text instead.
"""
from __future__ import annotations

import posixpath
import re
from typing import Dict, Iterable, List, Optional, Tuple
from urllib.parse import unquote, urlparse

from doctor.shell.host.root import Host

REGISTER = re.compile(
    r"""(?:register_connector|_register_with_class_name_alias)\(\s*["']([A-Za-z_]\w*)["']\s*,\s*["']([\w.]+)["']""")
MAX_FILES = 4000
MAX_SIZE = 2 * 1024 * 1024


def registered(text: str) -> Dict[str, str]:
    return {name: module for name, module in REGISTER.findall(text)}


def package_dir(host: Host, name: str, candidates: Iterable[str]) -> Optional[str]:
    """The first ``<dir>/<name>/__init__.py`` among candidate directories."""
    for d in candidates:
        if d and host.is_file(posixpath.join(d, name, "__init__.py")):
            return posixpath.join(d, name)
    return None


def editable_root(direct_url: Optional[str]) -> Optional[str]:
    if not direct_url or not direct_url.startswith("file://"):
        return None
    return unquote(urlparse(direct_url).path) or None


def scan_package(host: Host, pkg_dir: str, sub: str = "distributed") -> Tuple[Dict[str, str], List[str], List[str]]:
    """(name -> module, files that register, module names under <pkg>.<sub>)."""
    names: Dict[str, str] = {}
    files: List[str] = []
    modules: List[str] = []
    roots = [posixpath.join(pkg_dir, "__init__.py")]
    base = posixpath.join(pkg_dir, sub)
    count = 0
    for dirpath, dirnames, filenames in host.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if not fn.endswith(".py"):
                continue
            count += 1
            if count > MAX_FILES:
                break
            path = posixpath.join(dirpath, fn)
            rel = posixpath.relpath(path, posixpath.dirname(pkg_dir))[:-3].replace("/", ".")
            modules.append(rel[:-len(".__init__")] if rel.endswith(".__init__") else rel)
            roots.append(path)
    for path in roots:
        text = host.read_text(path, limit=MAX_SIZE)
        if text is None:
            continue
        found = registered(text)
        if found:
            names.update(found)
            files.append(path)
    return names, files, sorted(modules)
