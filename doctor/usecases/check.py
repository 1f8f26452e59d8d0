"""The check pipeline shared by ``check``, ``snapshot`` and ``fix``: gather facts, judge them."""
from __future__ import annotations

import json
import os
import re
import sys
import time
from doctor.record import field, record, replace
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from typing import TYPE_CHECKING

from doctor.errors import UsageError
from doctor.i18n import T
from doctor.facts import SNAPSHOT_SCHEMA_VERSION, Facts
from doctor.shell.host.root import Host
from doctor.probes.base import ProbeOptions
from doctor.probes.collect import collect

if TYPE_CHECKING:  # imported where used: the matrix and the rules load while the probes wait
    from doctor.findings import Verdict
    from doctor.matrix import Matrix
    from doctor.rules.base import Context
    from doctor.rules.image import ImageJudgement
    from doctor.usecases.image import ImageRequest


MAX_SNAPSHOT = 64 * 1024 * 1024


@record
class CheckOptions(ProbeOptions):
    """What ``check``, ``snapshot``, ``fix`` and the others read a host with: the probes' options
    (doctor/probes/base.py, declared there once) and where the facts come from."""

    root: str = "/"
    snapshot: Optional[str] = None  # --from
    target: Optional[str] = None
    matrix: List[str] = field(default_factory=list)
    cwd: Optional[str] = None  # for tests; the doctor looks for shadowing folders here
    image: Optional["ImageRequest"] = None  # --image / --image-tar (usecases/image.py)


@record
class CheckResult:
    facts: Facts
    ctx: Context
    verdict: Verdict
    timings: Dict[str, float]
    image: Optional["ImageJudgement"] = None  # what an image check says about the image


def parse_target(text: Optional[str]) -> Optional[str]:
    """``vllm-ascend==0.11.0rc3`` or ``0.11.0rc3`` -> ``0.11.0rc3``."""
    if not text:
        return None
    m = re.match(r"^\s*(?:vllm[-_]ascend\s*==\s*)?v?([0-9][\w.+!-]*)\s*$", text)
    if not m:
        raise UsageError(T("check.error.bad_target", value=repr(text)))
    return m.group(1)


def load_matrix_or_exit(extra: List[str]) -> "Matrix":
    from doctor.matrix import MatrixError, load_matrix

    for p in extra:
        if not os.path.isfile(p):
            raise UsageError(T("option.error.no_file", option="--matrix", path=p))
    try:
        return load_matrix([Path(p) for p in extra], warn=lambda m: print(f"ascend-doctor: warning: {m}", file=sys.stderr),
                           error_knowledge=False)  # no rule of check reads log signatures or error codes
    except MatrixError as e:
        raise UsageError(f"matrix: {e}") from None


def load_snapshot(path: str) -> Facts:
    from doctor.shell.host import files

    try:
        data = sys.stdin.buffer.read(MAX_SNAPSHOT + 1) if path == "-" else files.open_regular(path, MAX_SNAPSHOT + 1)
    except OSError as e:  # a FIFO or a device is refused, never waited on
        raise UsageError(T("check.error.snapshot_unreadable", path=path, error=e.strerror or str(e))) from None
    try:
        raw = data.decode("utf-8")  # JSON is UTF-8 (RFC 8259); a snapshot is written as UTF-8
    except UnicodeDecodeError as e:
        raise UsageError(T("check.error.snapshot_not_utf8", path=path, byte=f"0x{data[e.start]:02x}", offset=e.start)) from None
    if len(raw) > MAX_SNAPSHOT:
        raise UsageError(T("check.error.snapshot_too_large", path=path, mb=MAX_SNAPSHOT // (1024 * 1024)))
    return snapshot_from_text(raw, path)


def snapshot_from_text(raw: str, path: str) -> Facts:
    """A snapshot's JSON text as Facts; ``path`` names it in the one-line error (UsageError)."""
    try:
        data = json.loads(raw)
    except RecursionError:
        raise UsageError(T("check.error.snapshot_too_deep", path=path)) from None
    except ValueError as e:
        raise UsageError(T("check.error.snapshot_not_json", path=path, error=str(e))) from None
    if not isinstance(data, dict) or "host" not in data:
        raise UsageError(T("check.error.snapshot_no_host", path=path))
    version = data.get("schema_version")
    if type(version) is not int or version != SNAPSHOT_SCHEMA_VERSION:  # true and 1.0 equal 1 in Python
        raise UsageError(T("check.error.snapshot_schema", path=path, version=repr(version), reads=SNAPSHOT_SCHEMA_VERSION))
    from doctor.parse.serial import SnapshotError, from_dict

    try:
        facts = from_dict(Facts, data)
    except SnapshotError as e:
        raise UsageError(T("check.error.snapshot_malformed", path=path, error=str(e))) from None
    except RecursionError:
        raise UsageError(T("check.error.snapshot_too_deep", path=path)) from None
    _check_sections(facts, path)
    _check_versions(facts)
    return facts


def _check_sections(facts: Facts, path: str) -> None:
    """Sections a snapshot of this doctor always has together: the packages of an interpreter
    that was read are there, or the reason they are not is (a probe error). Without either the
    Python stack would silently go unjudged."""
    py = facts.python
    readable = py is not None and (py.found or py.source == "site-packages")
    if readable and facts.packages is None and not any(e.probe == "packages" for e in facts.probe_errors):
        raise UsageError(T("check.error.snapshot_no_packages", path=path))


def _check_versions(facts: Facts) -> None:
    """A snapshot is input like a METADATA file: versions packaging cannot take are reported,
    never handed to the rules (a 5,000-digit version makes packaging raise ValueError)."""
    from doctor.facts import ProbeError
    from doctor.parse.metadata import checked_version
    from doctor.probes.malformed import reject_malformed_versions

    reject_malformed_versions(facts)  # vendor versions: the same check as after the probes
    if facts.packages is None:
        return
    for d in list(facts.packages.dists.values()) + list(facts.packages.shadowed):
        d.version, problem = checked_version(d.version)
        if problem:
            facts.packages.malformed.append(f"{d.metadata_path or d.name}: {problem}")
            facts.probe_errors.append(ProbeError(probe="packages", error=f"{d.metadata_path or d.name}: {problem}"))


def validate(opts: CheckOptions, env: Optional[Dict[str, str]] = None) -> None:
    if opts.image is not None and opts.image.wanted:
        return  # usecases/image.py validates an image check
    if opts.snapshot and (opts.root != "/" or opts.python or opts.site_packages):
        raise UsageError(T("check.error.from_live"))
    if opts.python and opts.site_packages:
        raise UsageError(T("option.error.either", first="--python", second="--site-packages"))
    if not os.path.isdir(opts.root):
        raise UsageError(T("option.error.not_dir", option="--root", path=opts.root))
    if opts.python:
        validate_python(opts.python, dict(os.environ if env is None else env))
    for d in opts.site_packages:
        if not os.path.isdir(d):
            raise UsageError(T("option.error.not_dir", option="--site-packages", path=d))
    if opts.stage not in ("auto", "build", "runtime"):
        raise UsageError(T("check.error.bad_stage", value=repr(opts.stage)))
    if opts.npu_smi_timeout <= 0:
        raise UsageError(T("option.error.must_be_positive", option="--npu-smi-timeout"))
    if opts.npu_smi is not None:
        if opts.snapshot:
            raise UsageError(T("check.error.from_npu_smi"))
        if not os.path.isfile(opts.npu_smi) or not os.access(opts.npu_smi, os.X_OK):
            raise UsageError(T("option.error.not_executable", option="--npu-smi", path=opts.npu_smi))
    if opts.snapshot and opts.snapshot != "-" and os.path.exists(opts.snapshot) and not os.path.isfile(opts.snapshot):
        raise UsageError(T("option.error.not_regular", option="--from", path=opts.snapshot))
    validate_mooncake(opts)
    validate_hccn(opts)
    validate_model(opts)


def validate_python(python: str, env: Dict[str, str]) -> None:
    """--python names a Python interpreter: a wrong path is a usage error at once (one line, exit
    2), not a verdict after the probe's timeout."""
    from doctor.shell.host.interpreter import not_python
    from doctor.shell.runtime.prefetch import python_path

    path = python_path(python, env)
    if path is None:
        raise UsageError(T("option.error.no_file", option="--python", path=python) if os.sep in python
                         else T("check.error.not_on_path", python=python))
    why = not_python(path, env)
    if why:
        raise UsageError(T("option.error.detail", option="--python", value=python, error=why))


def validate_hccn(opts: CheckOptions) -> None:
    if opts.snapshot and (opts.hccn_tool or opts.ping_npu):
        raise UsageError(T("check.error.from_hccn"))
    if opts.hccn_tool and not (os.path.isfile(opts.hccn_tool) and os.access(opts.hccn_tool, os.X_OK)):
        raise UsageError(T("option.error.not_executable", option="--hccn-tool", path=opts.hccn_tool))
    if opts.hccn_timeout <= 0:
        raise UsageError(T("option.error.must_be_positive", option="--hccn-timeout"))
    if not opts.ping_npu:
        return  # (the hccn probe's module is imported only for a host it has something to ask)
    from doctor.probes.hccn import parse_ping_pairs

    try:
        parse_ping_pairs(opts.ping_npu)
    except ValueError as e:
        raise UsageError(T("option.error.bare", option="--ping-npu", error=e.args[0] if len(e.args) == 1 else str(e))) from None


def validate_model(opts: CheckOptions) -> None:
    if opts.snapshot and (opts.model or opts.verify_weights):
        raise UsageError(T("check.error.from_model"))
    if opts.model is not None:
        where = opts.model if os.path.isabs(opts.model) or opts.cwd is None else os.path.join(opts.cwd, opts.model)
        if not os.path.isdir(where):
            raise UsageError(T("option.error.not_dir", option="--model", path=opts.model))
    if opts.verify_weights and not opts.model and opts.serve_args is None and not opts.serve_args_file:
        raise UsageError(T("check.error.verify_needs_model"))
    if opts.verify_sample < 0:
        raise UsageError(T("check.error.bad_verify_sample"))


def validate_mooncake(opts: CheckOptions) -> None:
    if opts.serve_args is not None and opts.serve_args_file:
        raise UsageError(T("option.error.either", first="--serve-args", second="--serve-args-file"))
    if opts.snapshot and (opts.serve_args is not None or opts.serve_args_file or opts.mooncake_master):
        raise UsageError(T("check.error.from_serve_args"))
    if opts.serve_args_file and not os.path.isfile(opts.serve_args_file):
        what = "option.error.not_regular" if os.path.exists(opts.serve_args_file) else "option.error.no_file"
        raise UsageError(T(what, option="--serve-args-file", path=opts.serve_args_file))
    if opts.mooncake_master is not None:
        from doctor.shell.mooncake.master import parse_address

        err = parse_address(opts.mooncake_master).error
        if err:
            raise UsageError(T("option.error.detail", option="--mooncake-master", value=repr(opts.mooncake_master), error=err))
    if opts.mooncake_timeout <= 0:
        raise UsageError(T("check.error.bad_mooncake_timeout"))


def gather(opts: CheckOptions, env: Optional[Dict[str, str]] = None,
           while_waiting: Optional[Callable[[], None]] = None) -> Facts:
    if opts.image is not None:
        from doctor.usecases import image

        platform = image.validate(opts.image, root=opts.root, python=opts.python, site_packages=opts.site_packages,
                                  snapshot=opts.snapshot, stage=opts.stage)
        if opts.image.wanted:
            validate_mooncake(opts)
            # an image is judged at the build stage (run_check)
            facts = image.gather_image(opts.image, platform, replace(opts, stage="build") if opts.stage == "auto" else opts)
            if while_waiting is not None:
                while_waiting()
            return facts
    validate(opts, env)
    if opts.snapshot:
        facts = load_snapshot(opts.snapshot)
        if while_waiting is not None:
            while_waiting()
        return facts
    host = Host(root=opts.root, env=env, cwd=opts.cwd, named=named_binaries(opts, env))
    return collect(host, opts, while_waiting)


def named_binaries(opts: CheckOptions, env: Optional[Dict[str, str]]) -> List[str]:
    """The binaries the user named: the only ones that run when --root is given."""
    from doctor.shell.runtime.prefetch import python_path

    out = [b for b in (opts.npu_smi, opts.hccn_tool) if b]
    if opts.python:
        path = python_path(opts.python, dict(os.environ if env is None else env))
        if path:
            out.append(path)
    return out


def run_check(opts: CheckOptions, env: Optional[Dict[str, str]] = None, matrix: Optional["Matrix"] = None) -> CheckResult:
    start = time.perf_counter()
    target = parse_target(opts.target)
    for p in opts.matrix:
        if not os.path.isfile(p):
            raise UsageError(T("option.error.no_file", option="--matrix", path=p))
    loaded: Dict[str, "Matrix"] = {}

    def prepare() -> None:
        # Runs while the interpreter and npu-smi probes wait on their processes: loading the
        # matrix and importing the rules and the last probe costs ~60 ms that would add up.
        from doctor.i18n import catalogue
        from doctor.probes import mooncake  # noqa: F401  (its imports, while the probes wait)
        from doctor.rules.all_rules import eager

        loaded["matrix"] = matrix or load_matrix_or_exit(opts.matrix)
        eager()  # the gated layers' rules are imported after the probes, if their layer has input
        catalogue()  # the report's words: read now rather than after the rules

    facts = gather(replace(opts, skip_idle=True), env, prepare)  # what check's rules do not read, not probed
    from doctor.rules.engine import make_context, run_rules

    matrix = loaded["matrix"]
    image_build = facts.image is not None and opts.stage == "auto"  # an image is judged at the build stage
    ctx = make_context(facts, matrix, "build" if image_build else opts.stage, target)
    if image_build:
        ctx.stage_reason = "image"
    ctx.pip_conflicts = cached_pip_conflicts(facts)
    if facts.image is None:  # the commands findings offer may drive the target's pip with it
        ctx.doctor_python = sys.executable if not opts.snapshot else facts.host.doctor_python or sys.executable
        if facts.python is not None and facts.python.externally_managed and not opts.snapshot:
            from doctor.shell.install.installer import own_pip_version

            ctx.doctor_pip = own_pip_version()
    ctx.follow_up = follow_up_args(opts, target)
    if target and ctx.release is None:
        from doctor.program import DOCTOR, spelled_text

        raise UsageError(T("check.error.target_unknown", target=target, doctor=spelled_text(DOCTOR)))
    rules_start = time.perf_counter()
    verdict = run_rules(ctx)
    judgement = None
    if facts.image is not None:  # an image: documented deviations of official images, layer of origin
        from doctor.matrix.images import official_images
        from doctor.rules.image import judge_image

        verdict, judgement = judge_image(verdict, facts, official_images(matrix))
    timings = dict(facts.timings_ms)
    timings["rules"] = round((time.perf_counter() - rules_start) * 1000, 2)
    timings["total"] = round((time.perf_counter() - start) * 1000, 2)
    return CheckResult(facts=facts, ctx=ctx, verdict=verdict, timings=timings, image=judgement)


def cached_pip_conflicts(facts: Facts):
    """pip check's answer for these distributions, from the disk cache when it was computed
    before (it depends only on names, versions, requirements and markers)."""
    if facts.packages is None:
        return None
    from doctor.record import asdict
    from doctor.rules import pipcheck
    from doctor.shell.host import cache

    markers = facts.python.markers if facts.python else {}
    k = cache.key(*pipcheck.cache_key_parts(facts.packages.dists, markers))
    hit = cache.read("pipcheck", k)
    if isinstance(hit, list):
        try:
            return [pipcheck.Conflict(**c) for c in hit]
        except TypeError:  # written by another version of the doctor
            pass
    out = pipcheck.check(facts.packages.dists, markers)
    cache.write("pipcheck", k, [asdict(c) for c in out])
    return out


def snapshot_json(facts: Facts) -> str:
    """The snapshot, with every string passed through the value redaction (docs/snapshot.md):
    the probes redact by name and by key as they read; this last pass catches credentials
    anywhere else (a command's output, a path, an error message)."""
    from doctor.parse import redact
    from doctor.parse.serial import to_dict

    from doctor.textsafe import dumps

    return dumps(redact.deep(to_dict(facts)), indent=2)


def target_info(ctx: "Context") -> Dict[str, Optional[str]]:
    if ctx.release is None:
        return {"vllm_ascend": ctx.facts.version_of("vllm-ascend"), "matrix_row": None}
    return {"vllm_ascend": ctx.facts.version_of("vllm-ascend") or ctx.release.vllm_ascend,
            "matrix_row": ctx.release.key}


def follow_up_args(opts: CheckOptions, target: Optional[str]) -> Tuple[str, ...]:
    """The options of this check, besides the root and the interpreter (named from the facts),
    that a follow-up ``fix`` needs to judge the same thing the same way. A snapshot is judged
    where it was taken, an image's options come from its facts: neither repeats them here."""
    if opts.snapshot:
        return ()

    def path(p: str) -> str:  # the command may be pasted in another directory
        return os.path.abspath(p) if "/" in p else p

    out: List[str] = []
    if opts.npu_smi and opts.image is None:
        out += ["--npu-smi", path(opts.npu_smi)]
    if opts.npu_smi_timeout != CheckOptions.npu_smi_timeout:
        out += ["--npu-smi-timeout", f"{opts.npu_smi_timeout:g}"]
    if opts.stage != "auto":
        out += ["--stage", opts.stage]
    if target:
        out += ["--target", f"vllm-ascend=={target}"]
    for m in opts.matrix:
        out += ["--matrix", os.path.abspath(m)]
    if not opts.python:
        for d in opts.site_packages:
            out += ["--site-packages", os.path.abspath(d)]
    if opts.serve_args:
        out += ["--serve-args", opts.serve_args]
    if opts.serve_args_file:
        out += ["--serve-args-file", os.path.abspath(opts.serve_args_file)]
    if opts.model:
        out += ["--model", os.path.abspath(opts.model)]
    return tuple(out)


def no_ascend_stack(result: CheckResult) -> bool:
    """Nothing of an Ascend stack was found: no NPU device, no driver and no CANN (a laptop, a CI
    runner, a container started without the mounts or the toolkit). The report says so first."""
    f = result.facts
    if f.image is not None or result.ctx.stage_reason != "build.auto":
        return False
    return not (f.cann is not None and f.cann.found)
