"""The interpreter probe writes its own JSON and reads platform's values from os.uname() and
sys.version (importing json, re and platform doubled its cost). What it prints must be what
json.dumps of platform's own answers would print, in a real interpreter, whatever its sys.path
holds."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

from doctor.shell.runtime.prefetch import PYTHON_PROBE

# What the probe said before it stopped importing them: the reference it must still agree with.
REFERENCE = r"""
import json, os, platform, sys
print(json.dumps({
    "executable": sys.executable,
    "version": platform.python_version(),
    "machine": platform.machine(),
    "sys_path": [p for p in sys.path[1:] if p],
    "markers": {
        "platform_machine": platform.machine(),
        "platform_python_implementation": platform.python_implementation(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "python_version": ".".join(platform.python_version_tuple()[:2]),
    },
}))
"""

PATHS = [
    b"/opt/plain",
    b"/tmp/quote\"and\\backslash",
    b"/tmp/\x1b[31mred\x07",  # control characters: escaped, never raw on the line
    "/tmp/caf\u00e9/\u4e2d\u6587/\U0001f600".encode(),  # non-ASCII, one outside the BMP
    b"/tmp/\xff\xfe-not-utf8",  # decoded with surrogateescape: lone surrogates
]


def _run(code: str, pythonpath: bytes) -> bytes:
    env = dict(os.environb)
    env[b"PYTHONPATH"] = pythonpath
    return subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=60, check=True).stdout


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.decode("utf-8", "replace")[:20])
def test_the_probe_prints_what_json_and_platform_would(path):
    printed = _run(PYTHON_PROBE, path)
    got = json.loads(printed)
    want = json.loads(_run(REFERENCE, path))
    for key in ("executable", "version", "machine", "sys_path"):
        assert got[key] == want[key], key
    for key, value in want["markers"].items():
        assert got["markers"][key] == value, key
    assert printed.isascii() and printed.count(b"\n") == 1  # one line, as json.dumps writes it
    assert printed.strip() == json.dumps(got).encode()  # byte for byte what json.dumps writes


def test_the_probe_imports_neither_json_nor_re_nor_platform():
    code = PYTHON_PROBE + "\nprint(sorted({'json', 're', 'platform'} & set(sys.modules)))"
    printed = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=60,
                             check=True).stdout.splitlines()
    assert printed[-1] == "[]"
    assert json.loads(printed[0])["markers"]["platform_system"] == platform.system()
