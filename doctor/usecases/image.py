"""``check --image REF`` / ``--image-tar FILE``: the facts of an image, read without running it.

The image is read layer by layer (shell/images/archive.py), merged into a read-only view of the
files the probes open (shell/images/view.py) in a private temporary directory, and the usual
probes run against ``Host(root=view)`` with the image's environment, its architecture and a
statically derived interpreter (shell/images/python.py). Paths are mapped back to image paths
before anything is shown, and the view is removed before the rules run (they read facts only).
"""
from __future__ import annotations

import dataclasses
import os
import posixpath
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from doctor.errors import UsageError
from doctor.facts import DevicesFacts, Facts, ImageFacts, ImageLayer, PythonFacts
from doctor.i18n import tr
from doctor.parse import oci, redact
from doctor.probes.base import Probe, ProbeOptions


@dataclass
class ImageRequest:
    image: Optional[str] = None  # --image REF (the Docker engine)
    image_tar: Optional[str] = None  # --image-tar FILE
    platform: Optional[str] = None  # --platform linux/arm64
    pull: bool = False  # --pull
    lang: str = "en"
    progress: bool = True  # a progress bar on stderr (only drawn on a terminal)
    max_entries: Optional[int] = None  # --max-image-entries (default: shell.images.archive.Limits)
    max_disk_mb: Optional[int] = None  # --max-image-disk, in MiB
    max_layer_gb: Optional[int] = None  # --max-image-layer, in GiB: decompressed bytes of one layer
    max_size_gb: Optional[int] = None  # --max-image-size, in GiB: decompressed bytes of the layers together

    def limits(self):
        from doctor.shell.images.archive import GIB, MIB, Limits

        base = Limits()
        return dataclasses.replace(base, entries=self.max_entries or base.entries,
                                   disk=(self.max_disk_mb * MIB) if self.max_disk_mb else base.disk,
                                   layer_bytes=(self.max_layer_gb * GIB) if self.max_layer_gb else base.layer_bytes,
                                   image_bytes=(self.max_size_gb * GIB) if self.max_size_gb else base.image_bytes)

    @property
    def wanted(self) -> bool:
        return bool(self.image or self.image_tar)


def validate(req: ImageRequest, *, root: str, python: Optional[str], site_packages: List[str],
             snapshot: Optional[str], stage: str) -> Optional[oci.Platform]:
    lang = req.lang
    if not req.wanted:
        if req.pull:
            raise UsageError(tr("image.error.pull_needs_image", lang))
        if req.platform:
            raise UsageError(tr("image.error.platform_needs_image", lang))
        return None
    if req.image and req.image_tar:
        raise UsageError(tr("image.error.both", lang))
    if root not in ("/", "") or python or site_packages or snapshot:
        raise UsageError(tr("image.error.combined", lang))
    if req.pull and not req.image:
        raise UsageError(tr("image.error.pull_needs_image", lang))
    if stage == "runtime":
        raise UsageError(tr("image.error.runtime", lang))
    if req.image_tar and not os.path.isfile(req.image_tar):
        if os.path.exists(req.image_tar):  # /dev/null, a directory, a FIFO: there, but no archive
            from doctor.shell.host.files import NotRegularFile

            kind = NotRegularFile(req.image_tar, os.stat(req.image_tar).st_mode).strerror
            raise UsageError(tr("image.error.not_file", lang, path=req.image_tar, kind=kind))
        raise UsageError(tr("image.error.no_file", lang, path=req.image_tar))
    for option, value in (("--max-image-entries", req.max_entries), ("--max-image-disk", req.max_disk_mb),
                          ("--max-image-layer", req.max_layer_gb), ("--max-image-size", req.max_size_gb)):
        if value is not None and value <= 0:
            raise UsageError(tr("image.error.bad_bound", lang, option=option, value=value))
    if req.platform is None:
        return None
    platform = oci.parse_platform(req.platform)
    if platform is None:
        raise UsageError(tr("image.error.bad_platform", lang, value=req.platform))
    return platform


def gather_image(req: ImageRequest, platform: Optional[oci.Platform], options: ProbeOptions) -> Facts:
    from doctor.shell.images.archive import ArchiveError, DeadlinePassed, Workspace

    lang = req.lang
    label = req.image or req.image_tar or ""
    start = time.perf_counter()
    try:
        with Workspace() as ws:
            source, timings = _read(req, platform, ws)
            facts = _probe(source, ws, options)
            facts.timings_ms.update(timings)
            facts.timings_ms["image.total"] = round((time.perf_counter() - start) * 1000, 2)
            return facts
    except ArchiveError as e:
        if e.key == "image.error.limit":
            raise UsageError(limit_message(label, e.params["bound"], e.params["limit"], lang,
                                           layer=e.params.get("layer", ""))) from None
        raise UsageError(tr(e.key, lang, **_params(e.params, label))) from None
    except DeadlinePassed:
        raise UsageError(tr("image.error.timeout", lang, ref=label, seconds=_deadline_of(req))) from None
    except oci.LimitError as e:
        raise UsageError(limit_message(label, e.bound, e.limit, lang)) from None
    except oci.PlatformChoiceError as e:
        raise UsageError(_platform_message(e, req, platform)) from None
    except oci.ImageFormatError as e:
        raise UsageError(tr("image.error.not_image", lang, path=label, why=str(e))) from None
    except _DaemonFailure as e:
        raise UsageError(tr(e.key, lang, **e.params)) from None


def limit_message(label: str, bound: str, limit: int, lang: str, layer: str = "") -> str:
    """One line: which bound the image went past (a layer's: naming the layer), and the option
    that raises it (if any)."""
    from doctor.shell.images.archive import GIB, MIB, OPTIONS, _size

    option = OPTIONS.get(bound)
    gib = bound in ("layer_bytes", "image_bytes")  # their options are in GiB
    shown = _size(limit) if gib else f"{limit // MIB} MiB" if bound in ("disk", "json_member", "json_total", "header") \
        else f"{limit:,}"
    what = tr(f"image.limit.{bound}", lang, layer=layer)
    if option:
        value = max(1, limit // GIB) * 2 if gib else limit // MIB * 2 if bound == "disk" else limit * 2
        return tr("image.error.limit", lang, path=label, what=what, limit=shown, option=option, example=value)
    return tr("image.error.limit_fixed", lang, path=label, what=what, limit=shown)


class _DaemonFailure(Exception):
    def __init__(self, key: str, params: Dict[str, Any]):
        self.key, self.params = key, params


def _params(params: Dict[str, Any], label: str) -> Dict[str, Any]:
    out = dict(params)
    if not out.get("path"):
        out["path"] = label
    return out


def _deadline_of(req: ImageRequest) -> float:
    from doctor.shell.images import daemon as image_docker

    return image_docker.SAVE_DEADLINE if req.image else TAR_DEADLINE


TAR_DEADLINE = 3600.0  # reading a saved tarball from a slow disk


@dataclass
class _Source:
    label: str
    kind: str  # daemon / tar
    contents: Any  # shell.images.archive.Contents
    selected: oci.Selected
    inspect: Dict[str, Any]
    reader: Any  # shell.images.archive.Reader: its deadline, bounds and what it has written


def _read(req: ImageRequest, platform: Optional[oci.Platform], ws) -> Tuple[_Source, Dict[str, float]]:
    from doctor.shell.host.progress import ByteBar
    from doctor.shell.images.archive import Reader

    machine = os.uname().machine
    timings: Dict[str, float] = {}
    t0 = time.perf_counter()
    label = req.image or req.image_tar or ""
    chosen: Dict[str, oci.Selected] = {}
    with ByteBar(tr("image.progress", req.lang, ref=label), enabled=req.progress, speed=True, width=24) as bar:
        if req.image_tar:
            reader = Reader(ws, progress=bar.update, deadline=time.monotonic() + TAR_DEADLINE, limits=req.limits())
            bar.total(os.path.getsize(req.image_tar))

            def choose(contents) -> List[str]:
                sel = oci.select(contents.doc, contents.names, platform, machine, reader.tick)
                chosen["sel"] = sel
                reader.extra = frozenset(_config_paths(sel.config))
                reader.media_types = dict(zip(sel.manifest.layers, sel.manifest.layer_media_types))
                return sel.manifest.layers

            contents = reader.read_path(req.image_tar, choose)
            inspect: Dict[str, Any] = {}
            kind = "tar"
        else:
            reader, contents, inspect = _from_daemon(label, req.pull, platform, ws, bar, req.limits())  # label is req.image
            kind = "daemon"
        timings["image.read"] = round((time.perf_counter() - t0) * 1000, 2)
    sel = chosen.get("sel") or _select_streamed(contents, platform, machine, inspect, reader.tick)
    return _Source(label, kind, contents, sel, inspect, reader), timings


def _from_daemon(ref: str, pull: bool, platform: Optional[oci.Platform], ws, bar, limits):
    from doctor.shell.images import daemon as image_docker
    from doctor.shell.images.archive import Reader

    host = image_docker.docker_host()
    try:
        image = image_docker.open_image(ref, pull_first=pull, platform=platform, progress=bar.status)
        conf = image.inspect.get("Config")
        conf = conf if isinstance(conf, dict) else {}  # what the engine says the image config holds
        workdir = conf.get("WorkingDir")
        extra = _config_paths(oci.ImageConfig(platform=None, env=oci.env_dict(conf.get("Env")),
                                              working_dir=workdir if isinstance(workdir, str) else ""))
        size = image.inspect.get("Size")
        if isinstance(size, int) and size > 0:
            bar.total(size)
        stream = image_docker.save_stream(image, platform, host)
    except image_docker.DaemonError as e:
        raise _DaemonFailure(e.key, e.params) from None
    reader = Reader(ws, extra=extra, progress=bar.update, deadline=time.monotonic() + image_docker.SAVE_DEADLINE,
                    limits=limits)
    try:
        contents = reader.read_stream(stream, ref)
    except OSError as e:
        raise _DaemonFailure("image.error.daemon_call", {"what": "save", "ref": ref, "error": str(e)[:300]}) from None
    inspect = dict(image.inspect)
    inspect["_platform"] = str(image.platform)
    inspect["_repo_digest"] = image.repo_digest
    return reader, contents, inspect


def _select_streamed(contents, platform: Optional[oci.Platform], machine: str, inspect: Dict[str, Any],
                     tick) -> oci.Selected:
    """The exported archive may hold several platforms (containerd image store); without
    --platform, the one the engine reports for the reference."""
    wanted = platform
    if wanted is None and inspect.get("_platform"):
        wanted = oci.parse_platform(inspect["_platform"])
    try:
        return oci.select(contents.doc, contents.names, wanted, machine, tick)
    except oci.PlatformChoiceError:
        if platform is None and wanted is not None:
            return oci.select(contents.doc, contents.names, None, machine, tick)
        raise


def _config_paths(config: oci.ImageConfig) -> List[str]:
    """Exact files an image's environment points the probes at."""
    out = []
    value = config.env.get("MOONCAKE_CONFIG_PATH", "").strip()
    if value:
        out.append(value if value.startswith("/") else posixpath.normpath(posixpath.join(config.working_dir or "/", value)))
    return out


def _platform_message(e: oci.PlatformChoiceError, req: ImageRequest, platform: Optional[oci.Platform]) -> str:
    available = ", ".join(str(p) for p in e.available)
    label = req.image or req.image_tar
    if e.reason == "missing":
        key = "image.error.platform_missing_daemon" if req.image else "image.error.platform_missing_tar"
        return tr(key, req.lang, ref=label, platform=str(platform), available=available)
    example = str(e.available[0]) if e.available else "linux/arm64"
    return tr("image.error.platform_ambiguous", req.lang, ref=label, available=available, example=example)


# ---------------------------------------------------------------------------------------------
# probing the view


def _probe(source: _Source, ws, options: ProbeOptions) -> Facts:
    from doctor.probes.collect import collect
    from doctor.shell.host.root import Host
    from doctor.shell.images.python import probe_static_python
    from doctor.shell.images.view import build

    sel = source.selected
    t0 = time.perf_counter()
    refetch = None
    if source.kind == "tar":
        refetch = lambda wanted: source.reader.fetch(source.label, wanted)  # noqa: E731
    env_dirs = [p for v in sel.config.env.values() for p in v.split(":") if p.startswith("/")]
    view = build(ws, source.contents, sel.manifest.layers, refetch, env_dirs + [sel.config.working_dir or "/"],
                 source.reader.tick)
    materialised = round((time.perf_counter() - t0) * 1000, 2)
    machine = sel.config.platform.machine if sel.config.platform else os.uname().machine
    env = dict(sel.config.env)
    env.setdefault("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    user, uid, gid, home = _user(view, sel.config.user)
    env.setdefault("HOME", home)
    cwd = sel.config.working_dir or "/"
    host = Host(root=view.root, env=env, cwd=cwd)
    python = probe_static_python(host, machine)
    facts = collect(host, options, probes=_probes(python, machine, cwd))
    facts.timings_ms["image.materialise"] = materialised
    _unview(facts, str(host.root))
    facts.host.machine = machine
    facts.host.uid, facts.host.gids, facts.host.user = uid, [gid], user
    facts.host.root = "/"
    facts.host.in_container = True
    facts.image = _image_facts(source, view, facts, machine)
    return facts


def _probes(python: PythonFacts, machine: str, view_cwd: str) -> Tuple[Probe, ...]:
    """The usual probes, with the ones that would ask the machine replaced: the interpreter is
    described from files, the image has no devices (and nothing in it runs), CANN is read for
    the image's architecture, packages' editable sources and the working directory are in the
    view."""
    from doctor.probes.all_probes import PROBES

    def _python(host, facts, options):
        # sys.path is already resolved inside the view: read as given, as the live probe does
        host.add_given(p for p in python.sys_path if host.live.is_dir(p))
        return python

    def _devices(host, facts, options):
        return DevicesFacts(npu_smi_timeout_s=options.npu_smi_timeout)

    def _cann(host, facts, options):
        from doctor.probes.cann import probe_cann

        return probe_cann(host, machine)

    def _packages(host, facts, options):
        from doctor.probes.packages import scan

        if not python.found:
            return None
        return scan(host, python.sys_path)

    def _workdir(host, facts, options):
        from doctor.probes.workdir import probe_workdir

        return probe_workdir(host, view_cwd, facts.packages)

    replaced = {"python": _python, "devices": _devices, "cann": _cann, "packages": _packages, "workdir": _workdir}
    return tuple(dataclasses.replace(p, run=replaced[p.name], waits=False) if p.name in replaced else p for p in PROBES)


def _user(view, user: str) -> Tuple[str, int, int, str]:
    """(name, uid, gid, home) of the config's User, through the image's /etc/passwd."""
    name, _, group = (user or "root").partition(":")
    text = ""
    try:
        with open(view.real("/etc/passwd"), encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 20)
    except OSError:
        pass
    for line in text.splitlines():
        bits = line.split(":")
        if len(bits) >= 6 and (bits[0] == name or bits[2] == name) and bits[2].isdigit() and bits[3].isdigit():
            gid = int(group) if group.isdigit() else int(bits[3])
            return bits[0], int(bits[2]), gid, bits[5] or "/"
    if name.isdigit():
        return name, int(name), int(group) if group.isdigit() else int(name), "/"
    return (name, 0, 0, "/root") if name == "root" else (name, -1, -1, "/")


def _unview(obj: Any, root: str) -> Any:
    """Every path of the view in the facts, back to the image's own path."""

    def fix(s: str) -> str:
        if root not in s:
            return s
        s = s.replace(root + "/", "/")
        return "/" if s == root else s.replace(root, "/")

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return fix(v)
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {walk(k): walk(x) for k, x in v.items()}
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            for f in dataclasses.fields(v):
                setattr(v, f.name, walk(getattr(v, f.name)))
            return v
        return v

    return walk(obj)


def _image_facts(source: _Source, view, facts: Facts, machine: str) -> ImageFacts:
    sel = source.selected
    conf = sel.config
    steps = oci.layer_steps(conf, len(sel.manifest.layers))
    layers = []
    for i, key in enumerate(sel.manifest.layers):
        size = sel.manifest.layer_sizes[i] if i < len(sel.manifest.layer_sizes) else -1
        idx = source.contents.layers.get(source.contents.resolve(key))
        step = steps[i]
        layers.append(ImageLayer(index=i + 1, digest=_digest(key, conf, i),
                                 created_by=redact.step(step.created_by) if step else "",
                                 size=size if size >= 0 else (idx.bytes if idx else -1)))
    names = list(sel.names)
    digest = sel.manifest.digest
    if source.kind == "daemon":
        names = [t for t in source.inspect.get("RepoTags") or [] if t not in names] + names
        digest = source.inspect.get("_repo_digest") or digest
        if source.label not in names:
            names.insert(0, source.label)
    base, how = _recorded_base(sel)
    dist_layers: Dict[str, int] = {}
    if facts.packages is not None:
        for d in facts.packages.dists.values():
            layer = _dist_layer(view, d)
            if layer is not None:
                dist_layers[d.name] = layer
    stats = {"layers": len(layers), "entries": sum(x.members for x in source.contents.layers.values()),
             "tracked": view.stats.entries, "directories": view.stats.directories,
             "files_kept": view.stats.files_kept, "placeholders": view.stats.placeholders,
             "bytes_read": source.contents.bytes_read,
             "layer_bytes": sum(x.bytes for x in source.contents.layers.values()),
             "kept_bytes": sum(x.kept_bytes for x in source.contents.layers.values()),
             "missing_links": len(view.stats.missing_links)}
    # the image's own strings are data: a secret in them is redacted in every output, as a
    # snapshot redacts it (Dockerfile steps by redact.step: ENV API_KEY=..., --token ...)
    return ImageFacts(
        ref=source.label, source=source.kind, platform=str(conf.platform or ""), machine=machine,
        id=sel.config_digest, digest=digest, names=[redact.value(n) for n in names], created=conf.created,
        base=redact.value(base) if base else base, base_source=how,
        working_dir=redact.value(conf.working_dir), user=redact.value(conf.user), layers=layers,
        dist_layers=dist_layers, available_platforms=[str(p) for p in sel.available], stats=stats)


def _digest(key: str, conf: oci.ImageConfig, i: int) -> str:
    if key.startswith("blobs/"):
        return oci.digest_of_path(key)
    return conf.diff_ids[i] if i < len(conf.diff_ids) else key


def _recorded_base(sel: oci.Selected) -> Tuple[Optional[str], str]:
    """The FROM image, when the build recorded it (OCI annotation on the manifest, or a label)."""
    for where, data in (("annotation", sel.manifest.annotations), ("label", sel.config.labels)):
        name = data.get(oci.BASE_NAME)
        if name:
            digest = data.get(oci.BASE_DIGEST)
            return (f"{name}@{digest}" if digest and "@" not in name else name), where
    return None, ""


def _dist_layer(view, dist) -> Optional[int]:
    meta = dist.metadata_path
    if meta.endswith(".dist-info"):
        return view.layer_of(posixpath.join(meta, "METADATA"))
    if meta.endswith(".egg-info"):
        return view.layer_of(posixpath.join(meta, "PKG-INFO")) or view.layer_of(meta)
    return view.layer_of(meta)


# ---------------------------------------------------------------------------------------------
# resolving an image's plan


def resolution_for(facts: Facts, choice):
    """How ``fix --image...`` proves its plan without running anything from the image: the
    doctor's own pip resolves for the image's platform (its machine, glibc, Python version and
    ABI, as a bundle is resolved for a node: shell/install/bundle.platform_for), never the interpreter
    path the image names (on this machine that path may be another program, or another Python
    with other packages). The commands shown keep the image's interpreter: they are the RUN step
    of a Dockerfile built FROM the image. Returns (choice, TargetPlatform), or None when the
    image's platform has no wheel tags (the plan is then shown unresolved)."""
    import sys

    from doctor.shell.install.bundle import platform_for
    from doctor.shell.install.installer import PIP, Choice, Downloader, Installer

    try:
        tp = platform_for(facts)
    except UsageError:
        return None
    own = (sys.executable, "-m", "pip")
    # the doctor's own pip resolves (with the platform's tags: shell/install/resolver.TargetPlatform);
    # the commands shown stay those of the image's interpreter
    return Choice(choice.installer, Downloader(own), list(choice.notes), resolve_with=Installer(PIP, sys.executable, own),
                  show_with=choice.shown, index=choice.index), tp
