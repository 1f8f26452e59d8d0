"""Image metadata: docker-save ``manifest.json``, OCI ``index.json`` / manifests, image configs.

Pure functions over parsed JSON. Which blob is which is decided here, so the archive reader
(shell/images/archive.py) only moves bytes. Formats:

- docker save (all versions): ``manifest.json`` = ``[{"Config": path, "RepoTags": [...], "Layers":
  [path, ...]}]``; Docker >= 25 also writes an OCI layout (``index.json``, ``blobs/sha256/...``) in
  the same tarball and the legacy paths become symlinks to the blobs.
- OCI image layout (``oci-layout``, ``index.json``): descriptors that lead, possibly through nested
  indexes (multi-platform images), to an image manifest with a config and layers.
- the config: ``architecture``, ``os``, ``variant``, ``config.Env`` ..., ``rootfs.diff_ids`` and
  ``history`` (one entry per Dockerfile step; ``empty_layer`` steps made no layer).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

INDEX_TYPES = ("application/vnd.oci.image.index.v1+json",
               "application/vnd.docker.distribution.manifest.list.v2+json")
MANIFEST_TYPES = ("application/vnd.oci.image.manifest.v1+json",
                  "application/vnd.docker.distribution.manifest.v2+json")
# The platform of an attestation (SBOM, provenance) manifest inside a BuildKit index.
ATTESTATION = "attestation-manifest"
BASE_NAME = "org.opencontainers.image.base.name"
BASE_DIGEST = "org.opencontainers.image.base.digest"
REF_NAME = "org.opencontainers.image.ref.name"
CONTAINERD_NAME = "io.containerd.image.name"

# docker/OCI architecture names <-> what `uname -m` (and the matrix, and wheels) call them
_ARCH_ALIASES = {"x86_64": "amd64", "x86-64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
_MACHINE = {"amd64": "x86_64", "arm64": "aarch64", "386": "i686", "ppc64le": "ppc64le", "s390x": "s390x",
            "riscv64": "riscv64"}


# ``doc(path)``: the archive member at ``path`` parsed as JSON, or None when there is none
Doc = Callable[[str], Any]
# called between steps of a walk: raises when the command's deadline has passed
Tick = Callable[[], None]

# Bounds on what an archive's JSON may make the doctor do. A real multi-platform index has a few
# dozen descriptors, two levels; a config of a 200-layer image holds ~1,000 objects and arrays.
MAX_INDEX_DEPTH = 4  # indexes inside indexes
MAX_DESCRIPTORS = 10_000  # descriptors of all the indexes of an archive together
MAX_JSON_DEPTH = 64  # objects and arrays inside each other, in one document
MAX_JSON_CONTAINERS = 200_000  # objects and arrays in one document
# keys, members and elements in one document: an image's config (Env, history of every layer,
# labels) holds thousands; 100 MB of `1,` would be 50M (a 12 GB list where the regex that skipped
# strings backtracked for minutes)
MAX_JSON_VALUES = 2_000_000
MAX_LAYERS = 1_000  # layers of one image (the engine refuses more than 125)


class ImageFormatError(ValueError):
    """The input is not an image we can read; ``str()`` is one line for the user."""


class LimitError(ImageFormatError):
    """The input goes past one of the doctor's bounds: ``bound`` names it (its words are the
    catalogue's ``image.limit.<bound>``), ``limit`` is its value."""

    def __init__(self, bound: str, limit: int):
        self.bound, self.limit = bound, limit
        super().__init__(f"{bound} exceeds the bound of {limit}")




def load_json(data: bytes) -> Any:
    """A JSON document of an archive, parsed only when its shape is bounded (doctor/parse/jsonshape.py:
    at most MAX_JSON_CONTAINERS objects and arrays and MAX_JSON_VALUES values, nested at most
    MAX_JSON_DEPTH deep, counted on the bytes first, so that no crafted document costs memory or
    recursion to find out). None when the bytes are not JSON; LimitError past a bound."""
    from doctor.parse.jsonshape import Shape, ShapeError, check

    try:
        check(data, Shape(depth=MAX_JSON_DEPTH, containers=MAX_JSON_CONTAINERS, values=MAX_JSON_VALUES))
    except ShapeError as e:
        raise LimitError(f"json_{e.bound}", e.limit)
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


@dataclass(frozen=True)
class Platform:
    os: str
    architecture: str
    variant: str = ""

    @property
    def machine(self) -> str:
        """``uname -m`` inside the image: aarch64, x86_64, ..."""
        if self.architecture == "arm":
            return f"arm{self.variant[1:]}l" if self.variant.startswith("v") else "arm"
        return _MACHINE.get(self.architecture, self.architecture)

    def __str__(self) -> str:
        return "/".join(p for p in (self.os, self.architecture, self.variant) if p)

    def matches(self, other: "Platform") -> bool:
        """Same os and architecture; variants compare only when both name one (arm64 is v8)."""
        if self.os != other.os or self.architecture != other.architecture:
            return False
        return not (self.variant and other.variant) or self.variant == other.variant


def normalize_arch(arch: str) -> str:
    return _ARCH_ALIASES.get(arch.lower(), arch.lower())


def parse_platform(text: str) -> Optional[Platform]:
    """``linux/arm64`` / ``linux/arm64/v8`` / ``linux/amd64`` -> Platform; None when malformed."""
    parts = text.strip().split("/")
    if len(parts) not in (2, 3) or not all(re.match(r"^[a-z0-9_.-]+$", p) for p in parts):
        return None
    return Platform(parts[0], normalize_arch(parts[1]), parts[2] if len(parts) == 3 else "")


def platform_of(data: Dict[str, Any]) -> Optional[Platform]:
    """The platform of a descriptor's ``platform`` object or of an image config."""
    if not isinstance(data, dict):
        return None
    os_name, arch = data.get("os"), data.get("architecture")
    if not isinstance(os_name, str) or not isinstance(arch, str) or not os_name or not arch:
        return None
    variant = data.get("variant")
    return Platform(os_name, normalize_arch(arch), variant if isinstance(variant, str) else "")


# ---------------------------------------------------------------------------------------------
# the image config


@dataclass
class HistoryStep:
    created_by: str  # the Dockerfile step, cleaned (see clean_created_by)
    created: str = ""
    comment: str = ""
    empty_layer: bool = False


@dataclass
class ImageConfig:
    platform: Optional[Platform]
    env: Dict[str, str] = field(default_factory=dict)
    working_dir: str = ""
    user: str = ""
    entrypoint: List[str] = field(default_factory=list)
    cmd: List[str] = field(default_factory=list)
    labels: Dict[str, str] = field(default_factory=dict)
    diff_ids: List[str] = field(default_factory=list)
    history: List[HistoryStep] = field(default_factory=list)
    created: str = ""


def env_dict(env: Any) -> Dict[str, str]:
    """``["PATH=/usr/bin", "A=b=c"]`` -> {"PATH": "/usr/bin", "A": "b=c"} (later entries win);
    anything but a list of strings counts for nothing."""
    out: Dict[str, str] = {}
    if not isinstance(env, list):
        return out
    for item in env:
        if isinstance(item, str) and "=" in item:
            k, _, v = item.partition("=")
            if k:
                out[k] = v
    return out


def _labels(value: Any) -> Dict[str, str]:
    """A JSON object of annotations: its string values ({} when it is not an object)."""
    return {str(k): v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    """A string field of a config ("" when it holds anything else)."""
    return value if isinstance(value, str) else ""


def _strings(value: Any) -> List[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def clean_created_by(text: Any) -> str:
    """What a person wrote in the Dockerfile: ``/bin/sh -c #(nop)  ENV A=b`` -> ``ENV A=b``,
    ``RUN |2 A=b /bin/sh -c pip install x # buildkit`` -> ``RUN pip install x``."""
    s = _text(text).strip()
    s = re.sub(r"\s*# buildkit$", "", s)
    m = re.match(r"^(?:RUN\s+)?(?:\|\d+(?:\s+\S+=\S*)*\s+)?/bin/(?:ba)?sh\s+-c\s+(.*)$", s, re.S)
    if m:
        body = m.group(1).strip()
        nop = re.match(r"^#\(nop\)\s*(.*)$", body, re.S)
        s = nop.group(1).strip() if nop else "RUN " + body
    return re.sub(r"\s+", " ", s)


def parse_config(data: Any) -> ImageConfig:
    if not isinstance(data, dict):
        raise ImageFormatError("the image config is not a JSON object")
    conf = data.get("config") or data.get("container_config") or {}
    if not isinstance(conf, dict):
        conf = {}
    rootfs = data.get("rootfs") or {}
    diff_ids = _strings(rootfs.get("diff_ids")) if isinstance(rootfs, dict) else []
    history = []
    steps = data.get("history")
    for h in steps if isinstance(steps, list) else []:
        if isinstance(h, dict):
            history.append(HistoryStep(
                created_by=clean_created_by(h.get("created_by")), created=_text(h.get("created")),
                comment=_text(h.get("comment")), empty_layer=h.get("empty_layer") is True))
    return ImageConfig(
        platform=platform_of(data), env=env_dict(conf.get("Env")),
        working_dir=_text(conf.get("WorkingDir")), user=_text(conf.get("User")),
        entrypoint=_strings(conf.get("Entrypoint")), cmd=_strings(conf.get("Cmd")),
        labels=_labels(conf.get("Labels")), diff_ids=diff_ids, history=history,
        created=_text(data.get("created")))


def layer_steps(config: ImageConfig, layer_count: int) -> List[Optional[HistoryStep]]:
    """The Dockerfile step that made each filesystem layer: the non-empty history entries, in
    order. When the history does not add up (squashed or hand-made images) the layers that
    cannot be matched get None rather than a wrong step."""
    steps = [h for h in config.history if not h.empty_layer]
    if len(steps) != layer_count:
        return [None] * layer_count
    return list(steps)


# ---------------------------------------------------------------------------------------------
# docker save manifest.json and OCI index/manifests


@dataclass
class Descriptor:
    media_type: str
    digest: str
    size: int = -1
    platform: Optional[Platform] = None
    annotations: Dict[str, str] = field(default_factory=dict)

    @property
    def is_index(self) -> bool:
        return self.media_type in INDEX_TYPES

    @property
    def is_attestation(self) -> bool:
        return self.annotations.get("vnd.docker.reference.type") == ATTESTATION or (
            self.platform is not None and self.platform.os == "unknown")


@dataclass
class ImageManifest:
    """One image: where its config and layers are inside the archive."""

    config: str  # archive path of the config JSON
    layers: List[str]  # archive paths of the layer blobs, bottom first
    layer_media_types: List[str] = field(default_factory=list)
    layer_sizes: List[int] = field(default_factory=list)
    repo_tags: List[str] = field(default_factory=list)
    digest: Optional[str] = None  # the manifest digest (OCI), when known
    annotations: Dict[str, str] = field(default_factory=dict)


def blob_path(digest: str) -> str:
    """``sha256:abc`` -> ``blobs/sha256/abc`` (the OCI layout)."""
    algo, sep, hexpart = (digest or "").partition(":")
    if not sep or not re.match(r"^[a-z0-9]+$", algo) or not re.match(r"^[A-Za-z0-9=_-]+$", hexpart):
        raise ImageFormatError(f"invalid digest {digest!r}")
    return f"blobs/{algo}/{hexpart}"


def parse_descriptor(data: Any) -> Descriptor:
    if not isinstance(data, dict) or not isinstance(data.get("digest"), str):
        raise ImageFormatError("a descriptor without a digest")
    size = data.get("size")
    return Descriptor(media_type=_text(data.get("mediaType")), digest=data["digest"],
                      size=size if isinstance(size, int) else -1, platform=platform_of(data.get("platform") or {}),
                      annotations=_labels(data.get("annotations")))


def parse_docker_manifest(data: Any) -> List[ImageManifest]:
    if not isinstance(data, list) or not data:
        raise ImageFormatError("manifest.json is not a list of images")
    if len(data) > MAX_DESCRIPTORS:
        raise LimitError("descriptors", MAX_DESCRIPTORS)
    out = []
    for entry in data:
        if not isinstance(entry, dict) or not isinstance(entry.get("Config"), str):
            raise ImageFormatError("manifest.json has an entry without Config")
        layers = _strings(entry.get("Layers"))
        if len(layers) > MAX_LAYERS:
            raise LimitError("layers", MAX_LAYERS)
        out.append(ImageManifest(config=entry["Config"], layers=layers, repo_tags=_strings(entry.get("RepoTags"))))
    return out


def parse_index(data: Any) -> List[Descriptor]:
    if not isinstance(data, dict) or not isinstance(data.get("manifests"), list):
        raise ImageFormatError("index.json has no manifests")
    if len(data["manifests"]) > MAX_DESCRIPTORS:
        raise LimitError("descriptors", MAX_DESCRIPTORS)
    return [parse_descriptor(d) for d in data["manifests"]]


def parse_image_manifest(data: Any, digest: Optional[str] = None) -> ImageManifest:
    if not isinstance(data, dict) or not isinstance(data.get("config"), dict) or not isinstance(data.get("layers"), list):
        raise ImageFormatError("an image manifest without config or layers")
    if len(data["layers"]) > MAX_LAYERS:
        raise LimitError("layers", MAX_LAYERS)
    config = parse_descriptor(data["config"])
    layers = [parse_descriptor(layer) for layer in data["layers"]]
    return ImageManifest(config=blob_path(config.digest), layers=[blob_path(d.digest) for d in layers],
                         layer_media_types=[d.media_type for d in layers], layer_sizes=[d.size for d in layers],
                         digest=digest, annotations=_labels(data.get("annotations")))


def ref_names(desc: Descriptor) -> List[str]:
    """Names an OCI layout gives a manifest (containerd's full name first)."""
    out = []
    for key in (CONTAINERD_NAME, REF_NAME):
        v = desc.annotations.get(key)
        if v and v not in out:
            out.append(v)
    return out


def compression_of(media_type: str) -> Optional[str]:
    """gzip / zstd / none from a layer media type; None when the type does not say."""
    mt = media_type or ""
    if mt.endswith(("+gzip", ".tar.gzip")) or mt.endswith("tar.gzip"):
        return "gzip"
    if mt.endswith(("+zstd", ".tar.zstd")):
        return "zstd"
    if mt.endswith((".tar", "layer.v1.tar")) or mt.endswith("rootfs.diff.tar"):
        return "none"
    return None


def choose(candidates: List[Tuple[Platform, Any]], wanted: Optional[Platform], machine: str) -> Tuple[Optional[Any], str]:
    """Pick the variant of a multi-platform image: the one asked for, else the only one, else
    the doctor's own machine. Returns (choice, reason it failed)."""
    if wanted is not None:
        hits = [c for p, c in candidates if p.matches(wanted)]
        if hits:
            return hits[0], ""
        return None, "missing"
    if len(candidates) == 1:
        return candidates[0][1], ""
    own = Platform("linux", normalize_arch(machine))
    hits = [c for p, c in candidates if p.matches(own)]
    if hits:
        return hits[0], ""
    return None, "ambiguous"


def tag_of(ref: str) -> Tuple[str, str]:
    """``quay.io/ascend/vllm-ascend:v0.11.0rc3`` -> (``quay.io/ascend/vllm-ascend``, ``v0.11.0rc3``);
    a digest reference keeps its digest as the tag part; no tag means ``latest``."""
    name, at, digest = ref.partition("@")
    if at:
        return name, digest
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        return name[:colon], name[colon + 1:]
    return name, "latest"


def repository(name: str) -> str:
    """Docker Hub shorthand expanded: ``ubuntu`` -> ``docker.io/library/ubuntu``."""
    first = name.split("/", 1)[0]
    if "/" not in name:
        return f"docker.io/library/{name}"
    if "." not in first and ":" not in first and first != "localhost":
        return f"docker.io/{name}"
    return name


# ---------------------------------------------------------------------------------------------
# which image of an archive


class PlatformChoiceError(ImageFormatError):
    """The platform asked for is not in the archive ("missing"), or several are and none was
    asked for ("ambiguous")."""

    def __init__(self, reason: str, available: List[Platform]):
        self.reason, self.available = reason, available
        super().__init__(f"platform {reason}: {', '.join(str(p) for p in available)}")


@dataclass
class Selected:
    manifest: ImageManifest
    config: ImageConfig
    config_digest: str  # sha256:... (the image id)
    available: List[Platform] = field(default_factory=list)
    names: List[str] = field(default_factory=list)  # tags the archive gives the image


def digest_of_path(path: str) -> str:
    """``blobs/sha256/abc`` or ``abc.json`` -> ``sha256:abc``."""
    base = path.rsplit("/", 1)[-1]
    if base.endswith(".json"):
        base = base[: -len(".json")]
    algo = path.split("/")[-2] if path.startswith("blobs/") else "sha256"
    return f"{algo}:{base}"


def _configured(doc: Doc, manifest: ImageManifest) -> Tuple[Optional[Platform], Optional[ImageConfig]]:
    data = doc(manifest.config)
    if data is None:
        return None, None
    config = parse_config(data)
    return config.platform, config


def select(doc: Doc, names: Sequence[str], wanted: Optional[Platform], machine: str,
           tick: Optional[Tick] = None) -> Selected:
    """The image of a docker-save or OCI-layout archive. ``doc(path)`` returns a parsed JSON
    member (or None), ``names`` are the archive's member names; ``tick()`` is called at every
    descriptor (it raises when the command's deadline has passed)."""
    candidates: List[Tuple[Platform, Tuple[ImageManifest, ImageConfig, List[str]]]] = []
    if "manifest.json" in names:
        entries = parse_docker_manifest(doc("manifest.json"))
        digests = _index_digests(doc, tick) if "index.json" in names else {}
        configs: Dict[str, Tuple[Optional[Platform], Optional[ImageConfig]]] = {}
        for m in entries:
            if tick is not None:
                tick()
            if m.config not in configs:  # one config parsed once, however many entries name it
                configs[m.config] = _configured(doc, m)
            platform, config = configs[m.config]
            if config is None:
                raise ImageFormatError(f"the config {m.config} named by manifest.json is missing")
            m.digest = digests.get(m.config)
            candidates.append((platform or Platform("linux", "unknown"), (m, config, m.repo_tags)))
    elif "index.json" in names:
        for desc, tags in IndexWalk(doc, tick).images(parse_index(doc("index.json"))):
            m = parse_image_manifest(doc(blob_path(desc.digest)), desc.digest)
            platform, config = _configured(doc, m)
            if config is None:
                raise ImageFormatError(f"the config {m.config} of manifest {desc.digest} is missing")
            candidates.append((desc.platform or platform or Platform("linux", "unknown"), (m, config, tags)))
    else:
        raise ImageFormatError("no manifest.json or index.json")
    if not candidates:
        raise ImageFormatError("the archive lists no image")
    available = [p for p, _ in candidates]
    choice, why = choose(candidates, wanted, machine)
    if choice is None:
        raise PlatformChoiceError(why, available)
    manifest, config, tags = choice
    return Selected(manifest=manifest, config=config, config_digest=digest_of_path(manifest.config),
                    available=available, names=tags)


def _index_digests(doc: Doc, tick: Optional[Tick] = None) -> Dict[str, str]:
    """Docker >= 25 writes index.json next to manifest.json: config path -> manifest digest."""
    out: Dict[str, str] = {}
    try:
        descs = parse_index(doc("index.json"))
    except LimitError:
        raise
    except ImageFormatError:
        return out
    for desc, _ in IndexWalk(doc, tick).images(descs):
        try:
            m = parse_image_manifest(doc(blob_path(desc.digest)), desc.digest)
        except LimitError:
            raise
        except ImageFormatError:
            continue
        out.setdefault(m.config, desc.digest)
    return out


class IndexWalk:
    """(image manifest descriptor, names) of an index, nested indexes included; attestation
    manifests (SBOM, provenance) are not images. Each digest is visited once (an index may name
    the same nested index or manifest many times: walked naively, four levels of N descriptors
    cost N^4 visits), at most MAX_INDEX_DEPTH levels and MAX_DESCRIPTORS descriptors in all."""

    def __init__(self, doc: Doc, tick: Optional[Tick] = None):
        self.doc, self.tick = doc, tick
        self.seen: Set[str] = set()
        self.count = 0

    def images(self, descs: List[Descriptor], depth: int = 0) -> Iterator[Tuple[Descriptor, List[str]]]:
        if depth > MAX_INDEX_DEPTH:
            raise LimitError("index_depth", MAX_INDEX_DEPTH)
        for d in descs:
            self.count += 1
            if self.count > MAX_DESCRIPTORS:
                raise LimitError("descriptors", MAX_DESCRIPTORS)
            if self.tick is not None:
                self.tick()
            if d.is_attestation or d.digest in self.seen:
                continue
            self.seen.add(d.digest)
            if d.is_index:
                nested = self.doc(blob_path(d.digest))
                if nested is None:
                    raise ImageFormatError(f"the index {d.digest} is missing")
                for inner, names in self.images(parse_index(nested), depth + 1):
                    yield inner, names or ref_names(d)
                continue
            if d.media_type and d.media_type not in MANIFEST_TYPES:
                continue
            data = self.doc(blob_path(d.digest))
            if data is None:
                continue  # a platform whose blobs were not exported
            yield d, ref_names(d)
