"""Benchmark: `ascend-doctor check --image-tar` (and `--image` through the docker SDK) on synthetic
images of 10 GB and more, mostly large blobs, as model-serving images are (CANN, torch,
weights baked in).

The image is a real `docker save` tarball (Docker >= 25 layout) with a vllm-ascend filesystem in
its first layers (tests/imagekit.py: CANN files, site-packages with the seed's broken package
set) and layers of large files. The large files are written sparse (their data is a hole), so
a 20 GB image takes a few MB of disk. Each measurement runs the doctor in a fresh process and
reports the wall time and that process's peak RSS (getrusage RUSAGE_CHILDREN of a wrapper that
runs only the doctor).

    python bench/image_bench.py                    # 10 and 20 GB, --image-tar
    python bench/image_bench.py --sizes 10 40      # other sizes (GB)
    python bench/image_bench.py --stream           # also --image through an Engine API server (every byte
                                                   # crosses the socket; the server uses sendfile(2))
    python bench/image_bench.py --gzip             # also gzip-compressed layers (decompresses every byte)

The layer digests are not real sha256 sums of the content (the doctor reads layers, it does not
verify their digests; computing 20 GB of sha256 would dominate the bench).
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import List, Optional, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

GB = 1024 ** 3
BLOB = 2 * GB  # each large file in a layer
BLOCK = 512


def _pad(n: int) -> int:
    return (BLOCK - n % BLOCK) % BLOCK


class SparseTar:
    """A tar written member by member; a member's data may be a hole of a given size."""

    def __init__(self, fh, base: int = 0):
        self.fh, self.base, self.pos = fh, base, 0

    def _write(self, data: bytes) -> None:
        self.fh.seek(self.base + self.pos)
        self.fh.write(data)
        self.pos += len(data)

    def add(self, name: str, data: Optional[bytes] = None, size: int = 0, kind=tarfile.REGTYPE,
            linkname: str = "", mode: int = 0o644) -> int:
        """Returns the file offset where the member's data starts."""
        info = tarfile.TarInfo(name)
        info.type, info.linkname, info.mode, info.mtime = kind, linkname, mode, 1700000000
        info.size = len(data) if data is not None else size
        self._write(info.tobuf(tarfile.PAX_FORMAT))
        start = self.base + self.pos
        if data is not None:
            self._write(data + b"\0" * _pad(len(data)))
        else:
            self.pos += size + _pad(size)  # a hole: nothing is written
        return start

    def close(self) -> int:
        self._write(b"\0" * (2 * BLOCK))
        return self.pos


def layer_size(members: List[Tuple[str, Optional[bytes], int]]) -> int:
    total = 0
    for name, data, size in members:
        info = tarfile.TarInfo(name)
        info.size = len(data) if data is not None else size
        n = info.size
        total += len(info.tobuf(tarfile.PAX_FORMAT)) + n + _pad(n)
    return total + 2 * BLOCK


def seed_layers() -> List[bytes]:
    """The vllm-ascend filesystem of the tests, as uncompressed layer tars."""
    import imagekit

    tmp = Path(tempfile.mkdtemp(prefix="image-bench-seed-"))
    img = imagekit.seed_image(tmp)
    for s in img.steps:
        s.compression = "none"
    return img, [raw for raw, _, _ in img.layers()]


def build(path: Path, size_gb: int, gzip_layers: bool = False) -> Path:
    """A docker-save tarball of about ``size_gb`` GB: the seed layers, then layers of BLOB-sized
    sparse files (weights, toolkits) with a few thousand small files each (an index to build)."""
    img, seeds = seed_layers()
    n_blobs = math.ceil(size_gb * GB / BLOB)
    groups = [list(range(i, min(i + 2, n_blobs))) for i in range(0, n_blobs, 2)]  # two large files a layer
    with open(path, "wb") as fh:
        outer = SparseTar(fh)
        names, diff_ids = [], []
        outer.add("oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
        for raw in seeds:
            name = "blobs/sha256/" + hashlib.sha256(raw).hexdigest()
            outer.add(name, raw)
            names.append(name)
            diff_ids.append("sha256:" + hashlib.sha256(raw).hexdigest())
        for i, group in enumerate(groups):
            members = [(f"opt/weights/shard-{j}.safetensors", None, BLOB) for j in group]
            members += [(f"opt/weights/meta/{i}/{k:05d}.json", b"{}", 0) for k in range(2000)]
            fake = hashlib.sha256(f"layer-{i}-{size_gb}".encode()).hexdigest()
            name = f"blobs/sha256/{fake}"
            if gzip_layers:
                data = _gzip_layer(members)
                outer.add(name, data)
            else:
                inner_size = layer_size(members)
                start = outer.add(name, None, inner_size)  # the layer tar is written into the hole
                inner = SparseTar(fh, base=start)
                for m_name, data, size in members:
                    inner.add(m_name, data, size)
                assert inner.close() == inner_size
            names.append(name)
            diff_ids.append(f"sha256:{fake}")
        config = dict(json.loads(img.config([(r, r, "") for r in seeds])))
        config["rootfs"]["diff_ids"] = diff_ids
        config["history"] = config["history"] + [
            {"created": "2025-12-10T00:00:00Z", "created_by": f"COPY weights-{i} /opt/weights/ # buildkit"}
            for i in range(len(groups))]
        config_bytes = json.dumps(config).encode()
        config_name = "blobs/sha256/" + hashlib.sha256(config_bytes).hexdigest()
        outer.add(config_name, config_bytes)
        outer.add("manifest.json", json.dumps([{"Config": config_name, "RepoTags": ["bench/vllm-ascend:big"],
                                                "Layers": names}]).encode())
        end = outer.close()
        fh.truncate(end)
    return path


def _gzip_layer(members) -> bytes:
    """A gzip layer whose large files are zeros (compressed to almost nothing, decompressed in full)."""
    out = io.BytesIO()
    gz = gzip.GzipFile(fileobj=out, mode="wb", compresslevel=1, mtime=0)
    zeros = b"\0" * (16 * 1024 * 1024)
    for name, data, size in members:
        info = tarfile.TarInfo(name)
        info.size = len(data) if data is not None else size
        gz.write(info.tobuf(tarfile.PAX_FORMAT))
        if data is not None:
            gz.write(data + b"\0" * _pad(len(data)))
        else:
            left = size + _pad(size)
            while left:
                n = min(left, len(zeros))
                gz.write(zeros[:n])
                left -= n
    gz.write(b"\0" * (2 * BLOCK))
    gz.close()
    return out.getvalue()


def measure(argv: List[str], env: Optional[dict] = None) -> dict:
    """Wall time and peak RSS of one doctor process (a wrapper runs it and reports its child)."""
    wrapper = ("import json, resource, subprocess, sys, time\n"
               "t = time.perf_counter()\n"
               "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
               "dt = time.perf_counter() - t\n"
               "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
               "print(json.dumps({'seconds': dt, 'peak_rss_mb': rss / 1024, 'code': p.returncode, 'out': p.stdout[-200000:], 'err': p.stderr[-2000:]}))\n")
    run_env = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
    out = subprocess.run([sys.executable, "-c", wrapper, sys.executable, "-m", "doctor"] + argv,
                         capture_output=True, text=True, env=run_env, timeout=7200)
    doc = json.loads(out.stdout)
    try:
        check = json.loads(doc["out"])
        doc["root_cause"] = check["summary"]["root_cause"]
        doc["timings"] = {k: v for k, v in check.get("timings_ms", {}).items() if k.startswith("image.")}
    except (ValueError, KeyError):
        doc["root_cause"] = None
    doc.pop("out")
    return doc


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 20], help="image sizes in GB")
    ap.add_argument("--stream", action="store_true", help="also through the docker SDK and an Engine API server")
    ap.add_argument("--gzip", action="store_true", help="also with gzip layers")
    ap.add_argument("--dir", default=None, help="where to write the sparse tarballs (default: a temp dir)")
    args = ap.parse_args()
    work = Path(args.dir or tempfile.mkdtemp(prefix="image-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    print(f"{'source':<9} {'image':>7} {'on disk':>9} {'seconds':>8} {'peak RSS':>9}  exit  root cause", flush=True)

    def show(kind, size, apparent, on_disk, r):
        rows.append((kind, size, apparent, on_disk, r))
        print(f"{kind:<9} {apparent / GB:>5.1f}GB {on_disk / 2**20:>7.1f}MB {r['seconds']:>8.2f} "
              f"{r['peak_rss_mb']:>7.1f}MB  {r['code']:>4}  {r['root_cause']}  {r.get('timings', {})}", flush=True)
        if r["code"] not in (0, 3, 4):
            print("   ", r["err"].strip()[-500:], flush=True)

    for size in args.sizes:
        path = build(work / f"image-{size}g.tar", size)
        apparent = path.stat().st_size
        on_disk = path.stat().st_blocks * 512
        show("tar", size, apparent, on_disk, measure(["check", "--json", "--image-tar", str(path)]))
        if args.stream:
            from enginekit import Engine

            e = Engine(sendfile=True).start()
            try:
                e.images["bench/vllm-ascend:big"] = {"tar": path, "inspect": {
                    "Id": "sha256:" + "0" * 64, "RepoTags": ["bench/vllm-ascend:big"], "Architecture": "arm64",
                    "Os": "linux", "Size": apparent, "Config": {"Env": []}}}
                show("engine", size, apparent, on_disk,
                     measure(["check", "--json", "--image", "bench/vllm-ascend:big"], env={"DOCKER_HOST": e.host}))
            finally:
                e.stop()
        if args.gzip:
            gz = build(work / f"image-{size}g-gzip.tar", size, gzip_layers=True)
            show("tar+gzip", size, apparent, gz.stat().st_blocks * 512,
                 measure(["check", "--json", "--image-tar", str(gz)]))
            gz.unlink()
        path.unlink()


if __name__ == "__main__":
    main()
