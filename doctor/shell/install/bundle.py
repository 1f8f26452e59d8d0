"""Bundles for air-gapped nodes.

``fix --bundle DIR`` (on a connected machine) writes what ``fix --apply`` needs on a node with
no index at all:

    DIR/manifest.json      what the bundle is for (platform, Python, ABI, vllm-ascend release)
                           and every file with its sha256 and size
    DIR/plan.json          the plan it was resolved for (``fix --json``)
    DIR/requirements.txt   one hash-pinned line per file (pip's --require-hashes format)
    DIR/wheels/            the files

``fix --apply --bundle DIR`` (on the node) refuses a bundle made for another platform, Python or
release, checks every file's sha256 before anything changes, and then resolves and installs
with pip pointed at DIR/wheels only (no index, no pip configuration), in the same transaction
as any other ``fix --apply``.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from doctor.errors import DoctorError, UsageError
from doctor.i18n import T
from doctor.facts import Facts
from doctor.shell.install.resolver import TargetPlatform

MANIFEST_SCHEMA = 1
MANIFEST, PLAN, REQUIREMENTS, WHEELS = "manifest.json", "plan.json", "requirements.txt", "wheels"
MAX_MANIFEST = 4 * 1024 * 1024


def arch_of_platform(tag: str) -> Optional[str]:
    for arch in ("x86_64", "aarch64"):
        if tag.endswith(arch):
            return arch
    return None


def platform_for(facts: Facts, platforms: Sequence[str] = (), python_version: Optional[str] = None,
                 abis: Sequence[str] = ()) -> TargetPlatform:
    """The target's wheel tags: from the options, else from the facts (a snapshot of the node:
    its machine, Python and glibc give manylinux_2_N tags down to the oldest, then linux_ARCH)."""
    py = facts.python
    version = python_version or (".".join((py.version or "").split(".")[:2]) if py and py.version else None)
    if not version:
        raise UsageError(T("bundle.error.python_unknown"))
    if not platforms:
        arch = (py.machine if py and py.machine else None) or facts.host.machine
        if arch not in ("x86_64", "aarch64"):
            raise UsageError(T("bundle.error.no_platform", arch=repr(arch)))
        glibc = py.glibc if py and py.glibc else "2.17"
        try:
            minor = int(glibc.split(".")[1])
        except (IndexError, ValueError):
            minor = 17
        platforms = [f"manylinux_2_{m}_{arch}" for m in range(minor, 16, -1)] + [f"manylinux2014_{arch}", f"linux_{arch}"]
    if len({arch_of_platform(p) for p in platforms}) != 1 or arch_of_platform(platforms[0]) is None:
        raise UsageError(T("bundle.error.mixed_platforms", platforms=", ".join(platforms)))
    nodot = version.replace(".", "")
    return TargetPlatform(list(platforms), version, list(abis) or [f"cp{nodot}", "abi3", "none"])


def retarget_facts(facts: Facts, tp: TargetPlatform) -> Facts:
    """The facts as the node has them when the options name another platform or Python: the
    plan (CPU torch builds, markers) is made for the node, not for this machine."""
    import copy

    out = copy.deepcopy(facts)
    arch = arch_of_platform(tp.platforms[0])
    if out.python is not None:
        if arch:
            out.python.machine = arch
            out.python.markers["platform_machine"] = arch
        if not (out.python.version or "").startswith(tp.python_version + ".") and out.python.version != tp.python_version:
            out.python.version = tp.python_version + ".0"
            out.python.markers["python_version"] = tp.python_version
            out.python.markers["python_full_version"] = tp.python_version + ".0"
    if arch:
        out.host.machine = arch
    return out


# ---------------------------------------------------------------------------------------------
# making one


def _safe_name(name: str) -> bool:
    """A file name of a bundle's wheels/: one component, not hidden, no NUL."""
    return bool(name) and "/" not in name and not name.startswith(".") and "\0" not in name


def _why(e: OSError):
    import errno

    if e.errno == errno.ELOOP:  # O_NOFOLLOW on a symlink
        return T("bundle.why.symlink")
    return e.strerror or str(e)


def _hash_at(dir_fd: int, name: str, cap: Optional[int] = None) -> Tuple[str, int]:
    """(sha256, size) of the regular file ``name`` in ``dir_fd``, never through a symlink; at
    most ``cap`` bytes are read (``cap`` + 1 tells a file that is larger). Raises OSError."""
    import hashlib

    from doctor.shell.host import files

    fd = files.open_regular_at(dir_fd, name)
    try:
        h = hashlib.sha256()
        size = 0
        while cap is None or size <= cap:
            block = os.read(fd, 1 << 20 if cap is None else min(1 << 20, cap + 1 - size))
            if not block:
                break
            h.update(block)
            size += len(block)
        return h.hexdigest(), size
    finally:
        os.close(fd)


def _new_bundle_dir(directory: str) -> Tuple[str, int, bool]:
    """The bundle directory to write (the path the user typed, resolved once: it may be a
    symlink to a directory) opened as a directory: (resolved path, descriptor, made here).
    It must be new or empty: any entry (a symlink included) is refused, so nothing is ever
    written through a link planted in it."""
    from doctor.shell.host import files

    made = False
    if not os.path.lexists(directory):
        try:
            os.makedirs(directory)
            made = True
        except OSError as e:
            raise UsageError(T("bundle.error.cannot_write", path=directory, file=".", why=e.strerror or str(e))) from None
    root = os.path.realpath(directory)
    try:
        fd = files.open_dir_at(None, root)
    except OSError:
        raise UsageError(T("bundle.error.not_dir", path=directory)) from None
    try:
        with os.scandir(fd) as it:
            busy = any(True for _ in it)
    except OSError as e:
        os.close(fd)
        raise UsageError(T("bundle.error.cannot_write", path=directory, file=".", why=e.strerror or str(e))) from None
    if busy:
        os.close(fd)
        raise UsageError(T("bundle.error.not_empty", path=directory))
    return root, fd, made


def _undo_bundle(root: str, fd: int, made: bool) -> None:
    """What write_bundle made, removed after a failure (the directory was new or empty):
    relative to the directory's descriptor, never following a link."""
    for name in (MANIFEST, PLAN, REQUIREMENTS):
        try:
            os.unlink(name, dir_fd=fd)
        except OSError:
            pass
    from doctor.shell.host import files

    files.remove_tree(os.path.join(root, WHEELS))  # through descriptors, never following a link
    if made:
        try:
            os.rmdir(root)
        except OSError:
            pass


def write_bundle(directory: str, plan, tp: TargetPlatform, choice, env: Mapping[str, str], runner_timeout: float,
                 say=lambda s: None, plan_json: Optional[str] = None) -> Dict:
    """Write the bundle into ``directory``, which must be new or empty. Every file is created
    (O_CREAT|O_EXCL|O_NOFOLLOW, relative to the directory's descriptor), wheels/ is made here
    and is pip's --dest; on a failure what was made is removed again."""
    root, fd, made = _new_bundle_dir(directory)
    try:
        return _write_bundle(directory, root, fd, plan, tp, choice, env, runner_timeout, say, plan_json)
    except BaseException:
        _undo_bundle(root, fd, made)
        raise
    finally:
        os.close(fd)


def _write_bundle(directory: str, root: str, fd: int, plan, tp: TargetPlatform, choice, env: Mapping[str, str],
                  runner_timeout: float, say, plan_json: Optional[str]) -> Dict:
    from doctor.shell.host import files as hostfiles
    from doctor.shell.runtime import proc
    from doctor.shell.steps.pip import hashed_requirements

    files = list(plan.resolved_files)
    for r in files:
        if not _safe_name(r.filename):
            raise DoctorError(T("bundle.error.outside", path=directory, manifest=MANIFEST, name=repr(r.filename)))

    def create(name: str, data: bytes) -> None:
        try:
            hostfiles.create_at(fd, name, data)
        except OSError as e:
            raise UsageError(T("bundle.error.cannot_write", path=directory, file=name, why=e.strerror or str(e))) from None

    try:  # made here: an entry planted since the directory was found empty is FileExistsError
        os.mkdir(WHEELS, 0o755, dir_fd=fd)
        wheels_fd = hostfiles.open_dir_at(fd, WHEELS)
    except OSError as e:
        raise UsageError(T("bundle.error.cannot_write", path=directory, file=WHEELS, why=e.strerror or str(e))) from None
    try:
        made_wheels = os.fstat(wheels_fd)
        create(REQUIREMENTS, hashed_requirements(files).encode("utf-8"))
        wheels = os.path.join(root, WHEELS)
        indexes: List[str] = []
        for s in plan.steps:
            for u in s.extra_index_urls:
                if u not in indexes:
                    indexes.append(u)
        argv = list(choice.downloader.prefix) + ["download", "--no-deps", "--require-hashes", "--dest", wheels,
                                                 "-r", os.path.join(root, REQUIREMENTS)] + tp.pip_args()
        for u in indexes:
            argv += ["--extra-index-url", u]
        say(f"$ {' '.join(argv)}")
        done = proc.run(argv, runner_timeout, env=dict(env), max_output=16 * 1024 * 1024)
        if not done.ok:
            last = [x for x in (done.stderr or done.stdout).splitlines() if x.strip()][-3:]
            raise DoctorError(T("bundle.error.download_failed", why=" ".join(last) or done.error or "timed out"))
        try:  # still the directory made above (not replaced meanwhile)
            now = os.lstat(wheels)
        except OSError as e:
            raise UsageError(T("bundle.error.cannot_write", path=directory, file=WHEELS, why=_why(e))) from None
        if (now.st_dev, now.st_ino) != (made_wheels.st_dev, made_wheels.st_ino):
            raise UsageError(T("bundle.error.cannot_write", path=directory, file=WHEELS,
                               why="replaced while the files were downloaded"))
        sizes: Dict[str, int] = {}
        for r in files:  # each one read through the directory's descriptor, never a link
            try:
                got, sizes[r.filename] = _hash_at(wheels_fd, r.filename)
            except OSError as e:
                raise DoctorError(T("fix.error.file_missing", filename=r.filename, directory=wheels)) from e
            want = r.hashes.get("sha256")
            if not want:
                raise DoctorError(T("fix.error.no_sha256", filename=r.filename))
            if got != want:
                raise DoctorError(T("fix.error.sha256_mismatch", filename=r.filename, got=got, want=want))
    finally:
        os.close(wheels_fd)
    manifest = {
        "schema_version": MANIFEST_SCHEMA,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "target": {"vllm_ascend": plan.target, "matrix_row": plan.row},
        "platform": tp.to_json(),
        "arch": arch_of_platform(tp.platforms[0]),
        "files": [{"filename": r.filename, "name": r.name, "version": r.version, "sha256": r.hashes.get("sha256"),
                   "size": sizes[r.filename]} for r in files],
    }
    if plan_json is not None:
        create(PLAN, plan_json.encode("utf-8"))
    create(MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode("utf-8"))  # last: a bundle is complete
    return manifest


# ---------------------------------------------------------------------------------------------
# using one


@dataclass
class Bundle:
    path: Path  # the directory the user named, resolved once: what pip is pointed at
    manifest: Dict
    shown: str = ""  # the directory as the user typed it (messages)

    @property
    def wheels(self) -> Path:
        return self.path / WHEELS

    def pip_env(self, env: Mapping[str, str]) -> Dict[str, str]:
        """pip sees the bundle and nothing else: no configuration file, no index."""
        out = {k: v for k, v in env.items() if not k.startswith(("PIP_", "UV_"))}
        out.update({"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(self.wheels),
                    "PIP_DISABLE_PIP_VERSION_CHECK": "1", "UV_NO_CONFIG": "1"})
        return out

    def check_plan(self, plan) -> None:
        """Every file the resolver chose for the plan is one of the bundle's, with its hash."""
        res = plan.resolution or {}
        if res.get("status") == "failed":
            return  # shown as any failure: pip's message names what the bundle lacks
        known = {f["filename"]: f.get("sha256") for f in self.manifest.get("files", [])}
        for r in plan.resolved_files:
            if r.filename not in known:
                raise UsageError(T("bundle.error.file_missing", path=self.shown or self.path, file=r.filename))
            if known[r.filename] != r.hashes.get("sha256"):
                raise UsageError(T("bundle.error.file_differs", path=self.shown or self.path, file=r.filename))


def _root_of(path) -> Tuple[Path, int]:
    """The bundle directory the user named, resolved once (it may be a symlink to a directory),
    opened as a directory: below it, every component is opened relative to a descriptor with
    O_NOFOLLOW, so nothing below the root may be a symlink."""
    from doctor.shell.host import files

    root = Path(os.path.realpath(path))
    try:
        return root, files.open_dir_at(None, str(root))
    except OSError:
        raise UsageError(T("bundle.error.not_dir", path=path)) from None


def load_manifest(path: Path) -> Dict:
    from doctor.shell.host import files

    _, fd = _root_of(path)
    try:  # a regular file of the bundle itself (a FIFO is refused, never waited on; a symlink
        # is refused, never followed), read up to the cap
        mfd = files.open_regular_at(fd, MANIFEST)
        try:
            raw = files.read_fd(mfd, MAX_MANIFEST + 1)
        finally:
            os.close(mfd)
    except FileNotFoundError:
        raise UsageError(T("bundle.error.no_manifest", path=path, manifest=MANIFEST)) from None
    except OSError as e:
        raise UsageError(T("bundle.error.unreadable", path=path, file=MANIFEST, why=_why(e))) from None
    finally:
        os.close(fd)
    if len(raw) > MAX_MANIFEST:
        raise UsageError(T("bundle.error.too_large", path=path, file=MANIFEST, limit=MAX_MANIFEST))
    try:
        data = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise UsageError(T("bundle.error.too_deep", path=path, manifest=MANIFEST)) from None
    except (ValueError, UnicodeDecodeError) as e:
        raise UsageError(T("bundle.error.not_json", path=path, manifest=MANIFEST, why=str(e))) from None
    why = manifest_problem(data)
    if why:
        raise UsageError(T("bundle.error.not_manifest", path=path, manifest=MANIFEST, schema=MANIFEST_SCHEMA, why=why))
    return data


_SHA256 = re.compile(r"^[0-9a-f]{64}$")
MAX_FILES = 10_000


def manifest_problem(data) -> Optional[str]:
    """What makes ``data`` not a bundle manifest this doctor wrote (pure): every field the
    doctor reads has the type it is read as, so that nothing later trips on a crafted shape."""
    def strings(v) -> bool:
        return isinstance(v, list) and all(isinstance(x, str) for x in v)

    if not isinstance(data, dict):
        return "not a JSON object"
    if data.get("schema_version") != MANIFEST_SCHEMA or isinstance(data.get("schema_version"), bool):
        return f"schema_version is not {MANIFEST_SCHEMA}"
    platform = data.get("platform")
    if not isinstance(platform, dict) or not strings(platform.get("platforms")) or not platform["platforms"] \
            or not isinstance(platform.get("python_version"), str) or not strings(platform.get("abis", [])):
        return "platform needs platforms (a list of wheel tags), python_version and abis"
    target = data.get("target", {})
    if not isinstance(target, dict) or not all(isinstance(target.get(k), (str, type(None)))
                                               for k in ("vllm_ascend", "matrix_row")):
        return "target is not an object of strings"
    if not isinstance(data.get("arch"), (str, type(None))):
        return "arch is not a string"
    entries = data.get("files")
    if not isinstance(entries, list) or len(entries) > MAX_FILES:
        return f"files is not a list (of at most {MAX_FILES})"
    for f in entries:
        if not isinstance(f, dict) or not all(isinstance(f.get(k), str) for k in ("filename", "name", "version")):
            return "a file without filename, name and version"
        if not isinstance(f.get("sha256"), str) or not _SHA256.match(f["sha256"]):
            return f"{f['filename'][:100]!r} has no sha256 (64 hex digits)"
        if not isinstance(f.get("size"), int) or isinstance(f.get("size"), bool) or f["size"] < 0:
            return f"{f['filename'][:100]!r} has no size"
    return None


def refusal(manifest: Dict, facts: Facts, plan_target: Optional[str]) -> Optional[str]:
    """Why this bundle cannot serve this node (pure), or None."""
    py = facts.python
    want_py = manifest["platform"].get("python_version")
    have_py = ".".join((py.version or "").split(".")[:2]) if py and py.version else None
    if want_py and have_py and want_py != have_py:
        return f"it was made for Python {want_py}; this environment runs Python {have_py}"
    arch = manifest.get("arch")
    have_arch = (py.machine if py and py.machine else None) or facts.host.machine
    if arch and have_arch and arch != have_arch:
        return (f"it was made for {arch} ({', '.join(manifest['platform'].get('platforms', [])[:1])}); "
                f"this machine is {have_arch}")
    want = (manifest.get("target") or {}).get("vllm_ascend")
    if want and plan_target and want != plan_target:
        return (f"it was made for vllm-ascend {want}; the plan here is for vllm-ascend {plan_target} "
                f"(make the bundle from this node's snapshot, or pass --target vllm-ascend=={want})")
    return None


MAX_REQUIREMENTS = 4 * 1024 * 1024
# the only line a bundle's requirements.txt holds: name==version --hash=sha256:HEX ... (steps/pip.py)
_PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)((?:\s+--hash=[a-z0-9]+:[0-9a-fA-F]+)+)$")


def pinned_requirements(text: str) -> Dict[str, List[str]]:
    """canonical name -> its sha256 hashes, from the text of a bundle's requirements.txt (pure).
    Read here rather than by a requirements parser: such a parser follows ``-r``/``-c`` to any
    file (a FIFO, /dev/zero) before anything is confirmed. A bundle's requirements are one
    hash-pinned line per file and nothing else; anything else is a ValueError naming the line."""
    from doctor.facts import canonical

    out: Dict[str, List[str]] = {}
    logical = ""
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split(" #", 1)[0].rstrip() if not line.lstrip().startswith("#") else ""
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical, line = "", logical + line
        line = line.strip()
        if not line:
            continue
        m = _PINNED.match(line)
        if m is None:
            shown = line if len(line) <= 120 else line[:117] + "..."
            what = "an option (another file, an index)" if line.startswith("-") else "not a hash-pinned name==version"
            raise ValueError(f"line {n} is {what}: {shown!r}")
        hashes = [h.split(":", 1)[1].lower() for h in m.group(3).split() if h.startswith("--hash=sha256:")]
        out.setdefault(canonical(m.group(1)), []).extend(hashes)
    return out


def verify_files(path: Path, manifest: Dict) -> None:
    """Every file of the manifest is there with its size and sha256; the hash-pinned
    requirements agree with the manifest (read here: regular file, capped, one hash-pinned line
    per file). Below the bundle directory nothing is a symlink: wheels/ and each file are opened
    relative to the descriptor of the directory above them, with O_NOFOLLOW."""
    from doctor.facts import canonical
    from doctor.shell.host import files

    _, fd = _root_of(path)
    try:
        for f in manifest["files"]:
            name = str(f.get("filename", ""))
            if not _safe_name(name):
                raise UsageError(T("bundle.error.outside", path=path, manifest=MANIFEST, name=repr(name)))
        wheels_fd: Optional[int] = None
        if manifest["files"] or os.path.lexists(os.path.join(os.path.realpath(path), WHEELS)):
            try:
                wheels_fd = files.open_dir_at(fd, WHEELS)
            except OSError as e:  # O_DIRECTORY|O_NOFOLLOW on a symlink is ENOTDIR: say which
                link = os.path.islink(os.path.join(os.path.realpath(path), WHEELS))
                raise UsageError(T("bundle.error.wheels", path=path, wheels=WHEELS,
                                   why=T("bundle.why.symlink") if link else _why(e))) from None
        try:
            for f in manifest["files"]:
                name = f["filename"]
                assert wheels_fd is not None
                try:  # a regular file of the bundle itself, never a FIFO, a device or a link out of it;
                    # never more read than the manifest's size (and one byte)
                    got, size = _hash_at(wheels_fd, name, f["size"])
                except OSError as e:
                    raise UsageError(T("bundle.error.not_regular", path=path, name=name, why=_why(e))) from None
                if size != f["size"]:
                    raise UsageError(T("bundle.error.size", path=path, name=name, want=f["size"]))
                if got != f.get("sha256"):
                    raise UsageError(T("bundle.error.sha256", path=path, name=name, got=got, want=f.get("sha256")))
        finally:
            if wheels_fd is not None:
                os.close(wheels_fd)
        try:
            rfd = files.open_regular_at(fd, REQUIREMENTS)
        except FileNotFoundError:
            return
        except OSError as e:
            raise UsageError(T("bundle.error.unreadable", path=path, file=REQUIREMENTS, why=_why(e))) from None
        try:
            raw = files.read_fd(rfd, MAX_REQUIREMENTS + 1)
        finally:
            os.close(rfd)
    finally:
        os.close(fd)
    if len(raw) > MAX_REQUIREMENTS:
        raise UsageError(T("bundle.error.too_large", path=path, file=REQUIREMENTS, limit=MAX_REQUIREMENTS))
    try:
        pinned = pinned_requirements(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise UsageError(T("bundle.error.not_pinned", path=path, file=REQUIREMENTS, why=str(e))) from None
    by_name = {canonical(f["name"]): f for f in manifest["files"]}
    for name, hashes in pinned.items():
        f = by_name.get(name)
        if f is None or f.get("sha256") not in hashes:
            raise UsageError(T("bundle.error.disagree", path=path, file=REQUIREMENTS, manifest=MANIFEST, name=name))


def open_bundle(directory: str, facts: Facts, plan) -> Bundle:
    path = Path(directory)
    if not path.is_dir():
        raise UsageError(T("bundle.error.not_dir", path=directory))
    manifest = load_manifest(path)
    why = refusal(manifest, facts, plan.target)
    if why:
        raise UsageError(T("bundle.error.refused", path=directory, why=why))
    verify_files(path, manifest)
    # pip is pointed at the directory that was checked: the root resolved once, wheels/ below it
    return Bundle(Path(os.path.realpath(path)), manifest, directory)
