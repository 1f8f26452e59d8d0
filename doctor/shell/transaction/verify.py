"""Before a transaction commits: do the distributions it installed work? Each one's files are
checked against its RECORD (present, right size), and its top-level packages are imported in
the target interpreter (a subprocess with a timeout: the doctor never imports them itself).

What can be imported depends on the stage. At the build stage (a ``docker build``: no NPU, no
driver mounted) torch_npu and everything that loads CANN or driver libraries at import time
cannot be imported; they are only located (``importlib.util.find_spec``) and said to be so, and
torch is imported with ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` (else it autoloads torch_npu). An
import that fails only because the driver library (libascend_hal.so) is missing is "not
verified", never a reason to roll back: the driver comes with the machine, not the image.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence

from doctor.facts import Distribution
from doctor.parse import metadata
from doctor.shell.runtime import proc
from doctor.shell.host.files import read_text

IMPORT_TIMEOUT = 300.0
MAX_RECORD = 64 * 1024 * 1024
MAX_MODULES_PER_DIST = 3

# Modules that load CANN or the NPU driver when imported: at the build stage (no NPU) they are
# only located. torch_npu dlopens libascend_hal.so; triton-ascend's backend and the Mooncake NPU
# build link CANN (libascendcl) and the driver.
NEEDS_NPU = frozenset({"torch_npu", "triton", "mooncake"})
# Import names that differ from the distribution name.
MODULE_OF = {"triton-ascend": "triton", "mooncake-transfer-engine": "mooncake",
             "mooncake-transfer-engine-npu": "mooncake", "mooncake-transfer-engine-non-cuda": "mooncake"}
# The driver is missing, not the package broken (the message of the dlopen that failed).
DRIVER_MISSING = re.compile(r"libascend_hal\.so|libdrvdsmi_host\.so|libdcmi\.so")

# Runs in the target interpreter (any CPython >= 3.6, stdlib only): one JSON line per module.
SCRIPT = r"""
import importlib, importlib.util, json, sys, traceback
for item in json.loads(sys.argv[1]):
    out = {"module": item["module"], "how": item["how"], "ok": False, "detail": ""}
    print(json.dumps(dict(out, started=True)), flush=True)
    try:
        if item["how"] == "import":
            mod = importlib.import_module(item["module"])
            out["detail"] = getattr(mod, "__file__", None) or ""
        else:
            spec = importlib.util.find_spec(item["module"])
            if spec is None:
                raise ImportError("No module named %r" % item["module"])
            out["detail"] = spec.origin or ", ".join(spec.submodule_search_locations or [])
        out["ok"] = True
    except BaseException as e:
        out["detail"] = "%s: %s" % (type(e).__name__, e)
        out["trace"] = traceback.format_exc()[-2000:]
    print(json.dumps(out), flush=True)
"""


@dataclass
class Check:
    dist: str
    module: str
    how: str  # "import" or "locate"
    ok: bool = False
    detail: str = ""
    driver_missing: bool = False  # failed only for the missing driver: not verified, not a failure

    @property
    def failed(self) -> bool:
        return not self.ok and not self.driver_missing

    def to_json(self) -> Dict[str, object]:
        return {"dist": self.dist, "module": self.module, "how": self.how, "ok": self.ok,
                "detail": self.detail, "driver_missing": self.driver_missing}


@dataclass
class Verification:
    checks: List[Check] = field(default_factory=list)
    record_problems: List[str] = field(default_factory=list)  # files missing or of the wrong size
    error: Optional[str] = None  # the interpreter could not run, hung or died

    @property
    def failed(self) -> List[str]:
        out = list(self.record_problems)
        out += [f"{'import' if c.how == 'import' else 'find_spec'} {c.module} ({c.dist}): {c.detail}"
                for c in self.checks if c.failed]
        if self.error:
            out.append(self.error)
        return out

    def to_json(self) -> Dict[str, object]:
        return {"checks": [c.to_json() for c in self.checks], "record_problems": self.record_problems,
                "error": self.error}


def modules_of(dist: Distribution, record: Sequence[str]) -> List[str]:
    """The packages to import for a distribution: its own module when it has one, else the
    top-level packages its RECORD installs (at most a few)."""
    names = metadata.top_level_names(record)
    own = MODULE_OF.get(dist.name, dist.name.replace("-", "_"))
    if own in names:
        return [own]
    packages = [n for n in names if any(p.startswith(n + "/") for p in record)]
    return sorted(packages)[:MAX_MODULES_PER_DIST]


def plan_checks(dists: Sequence[Distribution], records: Mapping[str, Sequence[str]], npu: bool) -> List[Check]:
    """What to import and what only to locate (pure). ``npu``: the stage has an NPU and its
    driver (runtime), else everything in NEEDS_NPU is only located."""
    out: List[Check] = []
    for d in dists:
        for module in modules_of(d, records.get(d.name, [])):
            how = "import" if npu or module not in NEEDS_NPU else "locate"
            out.append(Check(dist=d.name, module=module, how=how))
    # torch first: the others import it anyway, its failure is the one to report
    return sorted(out, key=lambda c: (c.module != "torch", c.module))


def record_problems(d: Distribution) -> List[str]:
    """Files the RECORD lists that are missing or not of the recorded size."""
    text = read_text(os.path.join(d.metadata_path, "RECORD"), cap=MAX_RECORD)
    if text is None:
        return [f"{d.name}: no RECORD in {d.metadata_path}"]
    import csv
    import io

    out = []
    for row in csv.reader(io.StringIO(text)):
        if not row or not row[0]:
            continue
        path = os.path.normpath(os.path.join(d.location, row[0]))
        size = row[2] if len(row) > 2 else ""
        try:
            st = os.stat(path)
        except OSError:
            out.append(f"{d.name}: {path} is missing")
            continue
        if size.isdigit() and len(size) < 16 and st.st_size != int(size):
            out.append(f"{d.name}: {path} has {st.st_size} bytes, its RECORD says {size}")
    return out


def verify(python: str, dists: Sequence[Distribution], env: Mapping[str, str], npu: bool,
           timeout: float = IMPORT_TIMEOUT) -> Verification:
    """RECORD check in the doctor, then the imports in one run of the target interpreter."""
    result = Verification()
    records: Dict[str, List[str]] = {}
    for d in dists:
        result.record_problems += record_problems(d)[:20]
        text = read_text(os.path.join(d.metadata_path, "RECORD"), cap=MAX_RECORD) or ""
        records[d.name] = metadata.record_paths(text)
    result.checks = plan_checks(dists, records, npu)
    if not result.checks:
        return result
    run_env = dict(env)
    run_env["PYTHONDONTWRITEBYTECODE"] = "1"  # the check leaves no file behind (a later rollback stays exact)
    if not npu:  # else torch imports torch_npu through its device-backend entry point
        run_env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    items = json.dumps([{"module": c.module, "how": c.how} for c in result.checks])
    done = proc.run([python, "-c", SCRIPT, items], timeout, env=run_env, max_output=4 * 1024 * 1024)
    by_module: Dict[str, Dict] = {}
    started: Optional[str] = None
    for line in done.stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and isinstance(item.get("module"), str):
            if item.get("started"):
                started = item["module"]
            else:
                by_module[item["module"]] = item
                started = None
    for c in result.checks:
        item = by_module.get(c.module)
        if item is None:
            continue
        c.ok, c.detail = bool(item.get("ok")), str(item.get("detail", ""))[:500]
        if not c.ok and DRIVER_MISSING.search(c.detail + "\n" + str(item.get("trace", ""))):
            c.driver_missing = True
    unanswered = [c for c in result.checks if c.module not in by_module]
    if unanswered:
        where = f" while importing {started}" if started else ""
        if done.timed_out:
            result.error = f"{python} did not finish its imports within {timeout:g}s{where}"
        elif done.error:
            result.error = f"cannot run {python}: {done.error}"
        else:
            tail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1][:300]
            result.error = f"{python} died{where}: {tail}"
        if DRIVER_MISSING.search(done.stderr) and not done.timed_out:
            for c in unanswered:
                c.driver_missing = True
            result.error = None
    return result
