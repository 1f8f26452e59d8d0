"""Real image archives for the tests: ``docker save`` tarballs (the legacy layout and Docker >= 25's
OCI layout) and OCI-layout tarballs (multi-platform, gzip / zstd / plain layers), built byte for
byte the way the engine and registries write them. Only the file contents are stand-ins (stub
dists with real metadata, CANN files from recorded outputs via tests/fakehost).
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

Op = Tuple  # ("dir", path) ("file", path, bytes[, mode]) ("symlink", path, target) ("hardlink", path, target)
            # ("whiteout", path) ("opaque", dir)

OCI_LAYER = "application/vnd.oci.image.layer.v1.tar"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
EPOCH = 1700000000


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def tar_bytes(ops: Sequence[Op]) -> bytes:
    """An uncompressed layer tar (paths relative, as the engine writes them)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for op in ops:
            kind, path = op[0], op[1].lstrip("/")
            if kind == "whiteout":
                parent, _, name = path.rpartition("/")
                path = (parent + "/" if parent else "") + ".wh." + name
                kind, op = "file", ("file", path, b"")
            elif kind == "opaque":
                path = path.rstrip("/") + "/.wh..wh..opq"
                kind, op = "file", ("file", path, b"")
            info = tarfile.TarInfo(path)
            info.mtime = EPOCH
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tf.addfile(info)
            elif kind == "file":
                data = op[2] if isinstance(op[2], bytes) else op[2].encode()
                info.size, info.mode = len(data), (op[3] if len(op) > 3 else 0o644)
                tf.addfile(info, io.BytesIO(data))
            elif kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, op[2]
                tf.addfile(info)
            elif kind == "hardlink":
                info.type, info.linkname = tarfile.LNKTYPE, op[2].lstrip("/")
                tf.addfile(info)
            else:
                raise ValueError(kind)
    return buf.getvalue()


def dir_ops(root: Path, prefix: str = "/") -> List[Op]:
    """A directory tree as layer operations (symlinks kept as links)."""
    ops: List[Op] = []
    root = Path(root)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel = os.path.relpath(dirpath, root)
        base = prefix.rstrip("/") + ("" if rel == "." else "/" + rel)
        for d in list(dirnames):
            p = Path(dirpath) / d
            if p.is_symlink():
                ops.append(("symlink", f"{base}/{d}", os.readlink(p)))
                dirnames.remove(d)
            else:
                ops.append(("dir", f"{base}/{d}"))
        for f in sorted(filenames):
            p = Path(dirpath) / f
            if p.is_symlink():
                ops.append(("symlink", f"{base}/{f}", os.readlink(p)))
            else:
                ops.append(("file", f"{base}/{f}", p.read_bytes(), p.stat().st_mode & 0o777))
    return ops


def compress(data: bytes, how: str, level: int = 9) -> Tuple[bytes, str]:
    if how == "gzip":
        return gzip.compress(data, compresslevel=level, mtime=0), OCI_LAYER + "+gzip"
    if how == "zstd":
        import zstandard

        return zstandard.ZstdCompressor().compress(data), OCI_LAYER + "+zstd"
    return data, OCI_LAYER


@dataclass
class Step:
    created_by: str
    ops: Optional[List[Op]] = None  # None: an empty-layer step (ENV, WORKDIR, CMD)
    compression: str = "gzip"


@dataclass
class Image:
    architecture: str = "arm64"
    os: str = "linux"
    variant: str = ""
    env: Dict[str, str] = field(default_factory=lambda: {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"})
    workdir: str = ""
    user: str = ""
    labels: Dict[str, str] = field(default_factory=dict)
    steps: List[Step] = field(default_factory=list)
    annotations: Dict[str, str] = field(default_factory=dict)

    def run(self, created_by: str, ops: List[Op], compression: str = "gzip") -> "Image":
        self.steps.append(Step(created_by, list(ops), compression))
        return self

    def meta(self, created_by: str) -> "Image":
        self.steps.append(Step(created_by))
        return self

    def copy(self) -> "Image":
        import copy

        return copy.deepcopy(self)

    # -- blobs ---------------------------------------------------------------------------------
    def layers(self) -> List[Tuple[bytes, bytes, str]]:
        """(uncompressed tar, stored blob, media type) per layer."""
        out = []
        for s in self.steps:
            if s.ops is None:
                continue
            raw = tar_bytes(s.ops)
            blob, mt = compress(raw, s.compression)
            out.append((raw, blob, mt))
        return out

    def config(self, layers) -> bytes:
        history = []
        for i, s in enumerate(self.steps):
            h = {"created": f"2025-12-0{1 + i % 9}T00:00:00Z", "created_by": s.created_by}
            if s.ops is None:
                h["empty_layer"] = True
            history.append(h)
        conf = {"Env": [f"{k}={v}" for k, v in self.env.items()], "Cmd": ["/bin/bash"]}
        if self.workdir:
            conf["WorkingDir"] = self.workdir
        if self.user:
            conf["User"] = self.user
        if self.labels:
            conf["Labels"] = self.labels
        doc = {"architecture": self.architecture, "os": self.os, "config": conf, "created": "2025-12-09T00:00:00Z",
               "rootfs": {"type": "layers", "diff_ids": [sha(raw) for raw, _, _ in layers]}, "history": history}
        if self.variant:
            doc["variant"] = self.variant
        return json.dumps(doc, indent=2).encode()

    def manifest(self, layers, config: bytes) -> bytes:
        doc = {"schemaVersion": 2, "mediaType": OCI_MANIFEST,
               "config": {"mediaType": OCI_CONFIG, "digest": sha(config), "size": len(config)},
               "layers": [{"mediaType": mt, "digest": sha(blob), "size": len(blob)} for _, blob, mt in layers]}
        if self.annotations:
            doc["annotations"] = self.annotations
        return json.dumps(doc).encode()

    @property
    def platform(self) -> Dict[str, str]:
        p = {"os": self.os, "architecture": self.architecture}
        if self.variant:
            p["variant"] = self.variant
        return p


class _Archive:
    def __init__(self, path: Path):
        self.tf = tarfile.open(path, "w", format=tarfile.PAX_FORMAT)
        self.seen = set()

    def add(self, name: str, data: bytes) -> None:
        if name in self.seen:
            return
        self.seen.add(name)
        info = tarfile.TarInfo(name)
        info.size, info.mtime, info.mode = len(data), EPOCH, 0o644
        self.tf.addfile(info, io.BytesIO(data))

    def symlink(self, name: str, target: str) -> None:
        info = tarfile.TarInfo(name)
        info.type, info.linkname, info.mtime = tarfile.SYMTYPE, target, EPOCH
        self.tf.addfile(info)

    def dir(self, name: str) -> None:
        info = tarfile.TarInfo(name)
        info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, EPOCH
        self.tf.addfile(info)

    def blob(self, data: bytes) -> str:
        name = "blobs/sha256/" + hashlib.sha256(data).hexdigest()
        self.add(name, data)
        return name

    def close(self) -> None:
        self.tf.close()


def docker_save(image: Image, path: Path, tags: Sequence[str] = (), layout: str = "docker25",
                manifest_last: bool = True, layer_links: bool = False) -> Path:
    """What ``docker save`` writes. ``layout``: "legacy" (<id>/layer.tar, <config>.json: Docker
    < 25) or "docker25" (an OCI layout with manifest.json next to index.json, legacy layer paths
    as symlinks into blobs/; ``layer_links`` names those links in manifest.json). Layers are stored
    uncompressed, as the engine exports them."""
    plain = image.copy()
    for s in plain.steps:
        s.compression = "none"
    layers = plain.layers()
    config = plain.config(layers)
    a = _Archive(path)
    if layout == "legacy":
        names = []
        parent = ""
        for raw, blob, _ in layers:
            lid = hashlib.sha256((parent + sha(raw)).encode()).hexdigest()
            a.dir(lid + "/")
            a.add(f"{lid}/VERSION", b"1.0")
            a.add(f"{lid}/json", json.dumps({"id": lid, "parent": parent or None}).encode())
            a.add(f"{lid}/layer.tar", blob)
            names.append(f"{lid}/layer.tar")
            parent = lid
        config_name = hashlib.sha256(config).hexdigest() + ".json"
        entries = [(config_name, config)]
        manifest = [{"Config": config_name, "RepoTags": list(tags), "Layers": names}]
        head = entries
    else:
        a.add("oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
        names = [a.blob(blob) for _, blob, _ in layers]
        links = []
        for n, (raw, _, _) in zip(names, layers):  # legacy names as symlinks into blobs/
            lid = hashlib.sha256(raw).hexdigest()
            a.dir(lid + "/")
            a.symlink(f"{lid}/layer.tar", "../" + n)
            links.append(f"{lid}/layer.tar")
        if layer_links:
            names = links
        config_name = a.blob(config)
        mf = plain.manifest(layers, config)
        a.blob(mf)
        index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [
            {"mediaType": OCI_MANIFEST, "digest": sha(mf), "size": len(mf),
             "annotations": {"io.containerd.image.name": t, "org.opencontainers.image.ref.name": t.rsplit(":", 1)[-1]}}
            for t in (tags or ["x"])]}
        manifest = [{"Config": config_name, "RepoTags": list(tags), "Layers": names}]
        head = [("index.json", json.dumps(index).encode())]
    if not manifest_last:
        a.add("manifest.json", json.dumps(manifest).encode())
    for name, data in head:
        a.add(name, data)
    if manifest_last:
        a.add("manifest.json", json.dumps(manifest).encode())
    a.add("repositories", json.dumps({}).encode())
    a.close()
    return path


def oci_archive(images: Sequence[Image], path: Path, tag: str = "latest", nested: bool = True,
                attestation: bool = True) -> Path:
    """An OCI image layout tarball (as ``skopeo copy ... oci-archive:`` or buildx ``type=oci``
    write it): one manifest per platform under an image index, BuildKit attestation manifests
    included; layers keep the compression each step asks for."""
    a = _Archive(path)
    a.add("oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
    descs = []
    for img in images:
        layers = img.layers()
        for _, blob, _ in layers:
            a.blob(blob)
        config = img.config(layers)
        a.blob(config)
        mf = img.manifest(layers, config)
        a.blob(mf)
        descs.append({"mediaType": OCI_MANIFEST, "digest": sha(mf), "size": len(mf), "platform": img.platform})
        if attestation:
            att_conf = b"{}"
            a.blob(att_conf)
            att = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                              "config": {"mediaType": OCI_CONFIG, "digest": sha(att_conf), "size": 2},
                              "layers": []}).encode()
            a.blob(att)
            descs.append({"mediaType": OCI_MANIFEST, "digest": sha(att), "size": len(att),
                          "platform": {"os": "unknown", "architecture": "unknown"},
                          "annotations": {"vnd.docker.reference.type": "attestation-manifest",
                                          "vnd.docker.reference.digest": descs[-1]["digest"]}})
    if nested:
        inner = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": descs}).encode()
        a.blob(inner)
        top = [{"mediaType": OCI_INDEX, "digest": sha(inner), "size": len(inner),
                "annotations": {"org.opencontainers.image.ref.name": tag}}]
    else:
        top = descs
    a.add("index.json", json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": top}).encode())
    a.close()
    return path


# ---------------------------------------------------------------------------------------------
# a vllm-ascend image, layer by layer

PY_PREFIX = "/usr/local/python3.11.13"
SITE = f"{PY_PREFIX}/lib/python3.11/site-packages"
GLIBC_BANNER = b"\x7fELF\x02\x01\x01\0GNU C Library (Ubuntu GLIBC 2.35-0ubuntu3.8) stable release version 2.35.\n\0GLIBC_2.34\0"


def _triplet(arch: str) -> str:
    return {"arm64": "aarch64", "amd64": "x86_64"}[arch] + "-linux-gnu"


def base_os(arch: str) -> List[Op]:
    """Ubuntu 22.04's merged /usr: /bin and /lib are symlinks; libc.so.6 is the library itself."""
    t = _triplet(arch)
    return [("dir", "/usr"), ("dir", "/usr/bin"), ("dir", "/usr/lib"), ("dir", f"/usr/lib/{t}"),
            ("symlink", "/bin", "usr/bin"), ("symlink", "/lib", "usr/lib"), ("dir", "/etc"), ("dir", "/root"),
            ("file", f"/usr/lib/{t}/libc.so.6", GLIBC_BANNER, 0o755),
            ("file", "/etc/os-release", 'NAME="Ubuntu"\nVERSION_ID="22.04"\n'),
            ("file", "/etc/group", "root:x:0:\nHwHiAiUser:x:1000:\n"),
            ("file", "/etc/passwd", "root:x:0:0:root:/root:/bin/bash\nHwHiAiUser:x:1000:1000::/home/HwHiAiUser:/bin/sh\n"),
            ("file", "/usr/bin/bash", b"\x7fELF bash", 0o755), ("dir", "/tmp")]


def python_ops() -> List[Op]:
    """CPython built from source into /usr/local/python3.11.13 (as the CANN base images do), with
    /usr/local/bin/python3 an absolute symlink and python3 a hard link of python3.11."""
    return [("dir", PY_PREFIX), ("dir", f"{PY_PREFIX}/bin"),
            ("file", f"{PY_PREFIX}/bin/python3.11", b"\x7fELF python", 0o755),
            ("hardlink", f"{PY_PREFIX}/bin/python3", f"{PY_PREFIX}/bin/python3.11"),
            ("dir", f"{PY_PREFIX}/include/python3.11"),
            ("file", f"{PY_PREFIX}/include/python3.11/patchlevel.h", '#define PY_MINOR_VERSION 11\n#define PY_VERSION "3.11.13"\n'),
            ("file", f"{PY_PREFIX}/lib/python3.11/os.py", "# stdlib\n"),
            ("dir", SITE), ("file", f"{SITE}/pip-24.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: pip\nVersion: 24.0\n"),
            ("dir", "/usr/local/bin"), ("symlink", "/usr/local/bin/python3", f"{PY_PREFIX}/bin/python3")]


def cann_ops(tmp: Path, version: str, arch: str, layout: str = "ascend-toolkit") -> Tuple[List[Op], Dict[str, str]]:
    """A CANN toolkit (and NNAL) as the fake-host kit lays it out, and the variables its set_env.sh
    exports (what the base image puts in ENV)."""
    from fakehost import FakeHost

    fake = FakeHost(tmp)
    fake.machine = _triplet(arch).split("-")[0]
    fake.remove("/etc/group")
    fake.toolkit(version, layout=layout).sourced(driver=False)
    env = {k: v for k, v in fake.env.items() if k.startswith(("ASCEND", "ATB", "LD_LIBRARY"))}
    return dir_ops(fake.root), env


def dist_ops(stubs, site: str = SITE, sources: bool = True) -> List[Op]:
    """pip's result for stub dists: dist-info (real metadata), module files or, for editable
    stubs, an __editable__ .pth (and, with ``sources``, the source tree it points at)."""
    import tempfile

    from fakehost.dists import write_installed

    ops: List[Op] = []
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        for stub in stubs:
            write_installed(root, stub)
            if stub.editable and sources:
                ops += source_ops(stub)
        ops = dir_ops(root, site) + ops
    return ops


def remove_dist_ops(stub, site: str = SITE) -> List[Op]:
    """pip uninstall, as a layer sees it: whiteouts of the dist-info and the package."""
    return [("whiteout", f"{site}/{stub.dist_info_name}"), ("whiteout", f"{site}/{stub.module}")]


def source_ops(stub) -> List[Op]:
    """The checked-out source tree of an editable install (git clone / COPY)."""
    return [("file", f"{stub.editable}/{rel}", text) for rel, text in stub.module_files().items()]


def seed_image(tmp: Path, arch: str = "arm64", vllm: str = "0.11.2+empty") -> Image:
    """quay.io/ascend/vllm-ascend:v0.11.0rc3 as the seed report found it: vllm 0.11.2+empty next
    to vllm-ascend 0.11.0rc3, layer by layer as its Dockerfile builds it, with a pip cache that a
    later step deletes (a directory whiteout), a set_env.sh deleted and re-added, a build
    directory made opaque, hard and absolute symbolic links."""
    from fakehost import official_image

    pk = official_image(vllm=vllm, workspace=Path("/vllm-workspace"))
    cann, cann_env = cann_ops(tmp / "cann", "8.3.RC2", arch)
    img = Image(architecture=arch, variant="v8" if arch == "arm64" else "")
    img.run("/bin/sh -c #(nop) ADD file:5c1ff1c1bd2e8b3f in / ", base_os(arch), "none")
    img.meta('/bin/sh -c #(nop)  CMD ["/bin/bash"]')
    img.run("RUN /bin/sh -c ./build-python.sh 3.11.13 # buildkit", python_ops())
    img.env["PATH"] = f"{PY_PREFIX}/bin:" + img.env["PATH"]
    img.meta(f"ENV PATH={img.env['PATH']}")
    img.run("RUN /bin/sh -c ./Ascend-cann-toolkit_8.3.RC2_linux-aarch64.run --install # buildkit", cann)
    img.env.update(cann_env)
    img.meta("ENV " + " ".join(f"{k}={v}" for k, v in cann_env.items()))
    stack = [pk["torch"], pk["torch-npu"], pk["torchvision"], pk["numpy"], pk["transformers"]]
    img.run("RUN /bin/sh -c python3 -m pip install torch==2.7.1+cpu torch-npu==2.7.1 torchvision numpy transformers # buildkit",
            dist_ops(stack) + [("file", "/root/.cache/pip/http/9/a/big-wheel", b"w" * 4096)])
    img.run("RUN /bin/sh -c python3 -m pip cache purge && rm -f /usr/local/Ascend/ascend-toolkit/set_env.sh # buildkit",
            [("whiteout", "/root/.cache/pip"), ("whiteout", "/usr/local/Ascend/ascend-toolkit/set_env.sh")])
    img.run("RUN /bin/sh -c git clone --depth 1 https://github.com/vllm-project/vllm --branch v0.11.0 /vllm-workspace/vllm # buildkit",
            source_ops(pk["vllm"]) + [("dir", "/vllm-workspace/vllm/build"),
                                      ("file", "/vllm-workspace/vllm/build/lib/vllm/__init__.py", "# stale\n")])
    img.run('RUN /bin/sh -c VLLM_TARGET_DEVICE="empty" python3 -m pip install -e /vllm-workspace/vllm/[audio] # buildkit',
            dist_ops([pk["vllm"]], sources=False)
            + [("opaque", "/vllm-workspace/vllm/build"), ("file", "/vllm-workspace/vllm/build/fresh/vllm/__init__.py", "# fresh\n"),
               ("file", "/usr/local/Ascend/ascend-toolkit/set_env.sh", "# CANN environment (re-added)\n")])
    img.run("COPY . /vllm-workspace/vllm-ascend/ # buildkit", source_ops(pk["vllm-ascend"]))
    img.run("RUN /bin/sh -c python3 -m pip install -e /vllm-workspace/vllm-ascend/ # buildkit",
            dist_ops([pk["vllm-ascend"]], sources=False), "none")
    img.workdir = "/workspace"
    img.meta("WORKDIR /workspace")
    img.meta('CMD ["/bin/bash"]')
    return img


# ---------------------------------------------------------------------------------------------
# the official v0.30.0rc2 image: the wheel's pins, then the daily builds install_daily_deps.sh puts over them

PY312 = "/usr/local/python3.12.12"
SITE312 = f"{PY312}/lib/python3.12/site-packages"
# vllm_ascend-0.30.0rc2 PKG-INFO Requires-Dist (the stack and the packages the Dockerfile replaces)
VA_0300RC2_REQUIRES = ["torch==2.10.0", "torch-npu==2.10.0.post4", "torchvision==0.25.0", "torchaudio==2.10.0",
                       "triton-ascend==3.2.2", "memfabric_hybrid==1.2.0", "memcache_hybrid==1.2.0",
                       "transformers==5.14.1", "numpy"]
DAILY_STEP = ('RUN |2 BUILD_TYPE=release DAILY_DEPS_MODE=full /bin/sh -c if [ "$BUILD_TYPE" = "daily" ] || '
              '[ "$BUILD_TYPE" = "release" ]; then BUILD_TYPE=daily bash /tmp/install_daily_deps.sh; else '
              'echo "Unsupported BUILD_TYPE: $BUILD_TYPE" >&2; exit 1; fi && rm -f /tmp/install_daily_deps.sh # buildkit')


def official_0300rc2(tmp: Path, arch: str = "arm64") -> Image:
    from fakehost.dists import Stub

    def stub(name, version, **kw):
        return Stub(name, version, **kw)

    pinned = [stub("torch", "2.10.0+cpu"), stub("torch-npu", "2.10.0.post4"), stub("torchvision", "0.25.0"),
              stub("torchaudio", "2.10.0"), stub("triton-ascend", "3.2.2"), stub("memfabric-hybrid", "1.2.0", requires=[]),
              stub("memcache-hybrid", "1.2.0", requires=[]), stub("transformers", "5.14.1"), stub("numpy", "2.1.0")]
    va = stub("vllm-ascend", "0.30.0rc2", requires=list(VA_0300RC2_REQUIRES), editable="/vllm-workspace/vllm-ascend")
    vllm = stub("vllm", "0.30.0+empty", requires=[], editable="/vllm-workspace/vllm")
    daily = [stub("torch-npu", "2.10.0"), stub("triton-ascend", "3.6.0+dev20260923230212"),
             stub("memfabric-hybrid", "1.3.0", requires=[]), stub("memcache-hybrid", "1.3.0", requires=[])]
    cann, cann_env = cann_ops(tmp / "cann", "9.2.0", arch, layout="cann")
    py = [op for op in python_ops()]
    py = [(op[0], op[1].replace(PY_PREFIX, PY312).replace("python3.11", "python3.12"))
          + tuple(x.replace(PY_PREFIX, PY312).replace("python3.11", "python3.12").replace("3.11.13", "3.12.12")
                  if isinstance(x, str) else x for x in op[2:]) for op in py]
    img = Image(architecture=arch)
    img.run("/bin/sh -c #(nop) ADD file:0a1b2c in / ", base_os(arch), "none")
    img.run("RUN /bin/sh -c ./build-python.sh 3.12.12 # buildkit", py)
    img.env["PATH"] = f"{PY312}/bin:" + img.env["PATH"]
    img.run("RUN /bin/sh -c ./Ascend-cann-toolkit_9.2.0_linux.run --install # buildkit", cann)
    img.env.update(cann_env)
    img.meta("ENV " + " ".join(f"{k}={v}" for k, v in cann_env.items()))
    img.run("RUN /bin/sh -c git clone --depth 1 -b v0.30.0 https://github.com/vllm-project/vllm.git /vllm-workspace/vllm # buildkit",
            source_ops(vllm))
    img.run('RUN /bin/sh -c VLLM_TARGET_DEVICE="empty" python3 -m pip install -e /vllm-workspace/vllm/[audio] # buildkit',
            dist_ops([vllm], site=SITE312, sources=False))
    img.run("COPY . /vllm-workspace/vllm-ascend/ # buildkit", source_ops(va))
    img.run("RUN /bin/sh -c python3 -m pip install -e /vllm-workspace/vllm-ascend/ && python3 -m pip install "
            "triton-ascend==3.2.2 # buildkit", dist_ops([va] + pinned, site=SITE312, sources=False))
    img.run("COPY .github/workflows/scripts/install_daily_deps.sh /tmp/ # buildkit",
            [("file", "/tmp/install_daily_deps.sh", "#!/bin/bash\n")])
    removed = []
    for d in daily:
        old = next(p for p in pinned if p.name == d.name)
        removed += [("whiteout", f"{SITE312}/{old.dist_info_name}")]
    img.run(DAILY_STEP, removed + dist_ops(daily, site=SITE312) + [("whiteout", "/tmp/install_daily_deps.sh")])
    img.workdir = "/workspace"
    img.meta("WORKDIR /workspace")
    return img


# ---------------------------------------------------------------------------------------------
# archives shared by the test modules of one session (built once: each is a few seconds)

_CACHE: Dict[Tuple[str, str], Dict[str, Path]] = {}

SEED_TAG = "quay.io/ascend/vllm-ascend:v0.11.0rc3"


def seed_archives(tmp_path_factory) -> Dict[str, Path]:
    """The seed image as docker save writes it (three layouts) and a multi-platform OCI archive
    (arm64 with zstd, gzip and plain layers: the seed; amd64: a consistent 0.11.0rc3)."""
    key = (str(tmp_path_factory.getbasetemp()), "seed")
    if key not in _CACHE:
        base = tmp_path_factory.mktemp("images")
        seed = seed_image(base / "src")
        out = {"docker25": docker_save(seed, base / "seed-docker25.tar", tags=[SEED_TAG]),
               "legacy": docker_save(seed, base / "seed-legacy.tar", tags=[SEED_TAG], layout="legacy"),
               "links": docker_save(seed, base / "seed-links.tar", tags=[SEED_TAG], layer_links=True, manifest_last=False)}
        arm = seed.copy()
        for i, s in enumerate(arm.steps):
            s.compression = ("zstd", "gzip", "none")[i % 3]
        amd = seed_image(base / "src-amd", arch="amd64", vllm="0.11.0")
        out["oci"] = oci_archive([arm, amd], base / "multi-oci.tar", tag="v0.11.0rc3")
        out["image"] = seed  # the Image itself, for tests that build on it
        _CACHE[key] = out
    return _CACHE[key]


# ---------------------------------------------------------------------------------------------
# crafted archives: what an attacker (or a broken tool) can put in a tarball


def crafted_oci(path: Path, image: Image, *, config: Optional[dict] = None, config_bytes: Optional[bytes] = None,
                layer_repeat: int = 1, blobs: Sequence[Tuple[bytes, str]] = (), extra: Sequence[Tuple[str, bytes]] = (),
                index: Optional[bytes] = None, gzip_outer: bool = False) -> Path:
    """An OCI layout tarball of one image whose documents may be replaced: ``config`` (a dict
    edited from the image's own), ``config_bytes`` (any bytes), ``blobs`` as stored layers
    ((blob, media type), instead of the image's), each layer named ``layer_repeat`` times by the
    manifest, ``extra`` members added as they are, ``index`` as index.json; ``gzip_outer``:
    the whole tarball gzipped (``docker save | gzip``)."""
    layers = [(b"", blob, mt) for blob, mt in blobs] if blobs else image.layers()
    if config_bytes is None:
        doc = json.loads(image.config(layers))
        if config is not None:
            doc = config(doc) if callable(config) else config
        config_bytes = json.dumps(doc).encode()
    plain = path.with_suffix(".plain") if gzip_outer else path
    a = _Archive(plain)
    a.add("oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
    for _, blob, _ in layers:
        a.blob(blob)
    a.blob(config_bytes)
    mf = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                     "config": {"mediaType": OCI_CONFIG, "digest": sha(config_bytes), "size": len(config_bytes)},
                     "layers": [{"mediaType": mt, "digest": sha(blob), "size": len(blob)}
                                for _, blob, mt in layers] * layer_repeat}).encode()
    a.blob(mf)
    for name, data in extra:
        a.add(name, data)
    a.add("index.json", index if index is not None else json.dumps(
        {"schemaVersion": 2, "mediaType": OCI_INDEX,
         "manifests": [{"mediaType": OCI_MANIFEST, "digest": sha(mf), "size": len(mf), "platform": image.platform}]}
    ).encode())
    a.close()
    if gzip_outer:
        with open(plain, "rb") as src, gzip.open(path, "wb", compresslevel=6) as dst:
            while True:
                chunk = src.read(1 << 20)
                if not chunk:
                    break
                dst.write(chunk)
        plain.unlink()
    return path


def nested_index_oci(path: Path, image: Image, fan_out: int, depth: int = 4) -> Path:
    """Indexes ``depth`` deep whose every level names the level below ``fan_out`` times (a few
    tens of KB; walked naively, fan_out**depth visits of one manifest)."""
    layers = image.layers()
    config = image.config(layers)
    mf = image.manifest(layers, config)
    a = _Archive(path)
    a.add("oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
    for _, blob, _ in layers:
        a.blob(blob)
    a.blob(config)
    a.blob(mf)
    level = [{"mediaType": OCI_MANIFEST, "digest": sha(mf), "size": len(mf), "platform": image.platform}] * fan_out
    for _ in range(depth):
        idx = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": level}).encode()
        a.blob(idx)
        level = [{"mediaType": OCI_INDEX, "digest": sha(idx), "size": len(idx)}] * fan_out
    a.add("index.json", json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": level}).encode())
    a.close()
    return path


def raw_layer(chunks, how: str = "gzip") -> Tuple[bytes, str]:
    """A layer blob from raw tar bytes (hand-made headers: GNU long names, PAX records, sparse
    maps), streamed from ``chunks`` into the compressor (so that gigabytes cost no memory)."""
    import bz2

    if how == "bzip2":
        c = bz2.BZ2Compressor(9)
        out = [c.compress(chunk) for chunk in chunks]
        out.append(c.flush())
        return b"".join(out), OCI_LAYER
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=6, mtime=0) as gz:
        for chunk in chunks:
            gz.write(chunk)
    return buf.getvalue(), OCI_LAYER + "+gzip"


def filler(size: int, byte: bytes = b"a", block: int = 1 << 20):
    """``size`` bytes of one byte, padded to whole tar blocks, in pieces."""
    left = size
    while left > 0:
        n = min(left, block)
        yield byte * n
        left -= n
    if size % 512:
        yield b"\0" * (512 - size % 512)


def header(name: str, size: int = 0, kind: bytes = tarfile.REGTYPE, fmt: int = tarfile.USTAR_FORMAT) -> bytes:
    """One 512-byte tar header block claiming ``size`` bytes of data (the data not included)."""
    info = tarfile.TarInfo(name[:99])
    info.type, info.size, info.mtime, info.mode = kind, size, EPOCH, 0o644
    return info.tobuf(format=fmt)


def sparse_header(name: str, extended: bool = True) -> bytes:
    """An old-GNU sparse member header (type S) that says extension blocks follow."""
    block = bytearray(header(name, 0, tarfile.GNUTYPE_SPARSE, tarfile.GNU_FORMAT))
    block[482] = 1 if extended else 0
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


def sparse_extension(more: bool = True) -> bytes:
    """One extension block of 21 (offset, size) regions."""
    ext = bytearray(512)
    for i in range(21):
        ext[i * 24:i * 24 + 12] = b"%011o\0" % (i + 1)
        ext[i * 24 + 12:i * 24 + 24] = b"%011o\0" % 1
    ext[504] = 1 if more else 0
    return bytes(ext)
