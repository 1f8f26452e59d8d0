"""check / snapshot / fix --image-tar on real docker-save and OCI tarballs of a vllm-ascend image."""
import contextlib
import io
import json
import os
import re
import sys
import tarfile
from pathlib import Path

import pytest

import imagekit
from fakehost import REPO
from fakehost.dists import Stub
import doctor_fork

SEED_TAG = imagekit.SEED_TAG
VLLM_STEP = 'RUN VLLM_TARGET_DEVICE="empty" python3 -m pip install -e /vllm-workspace/vllm/[audio]'


def cli(*argv):
    """The console entry point in-process: (exit code, stdout, stderr)."""
    from doctor.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


def check_json(*argv):
    code, out, err = cli("check", "--json", *argv)
    assert out.strip(), err
    return code, json.loads(out)


def finding(doc, fid):
    return next(f for f in doc["findings"] if f["id"] == fid)


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    return imagekit.seed_archives(tmp_path_factory)


def test_seed_image_names_the_layer_that_brought_the_broken_vllm(images):
    code, doc = check_json("--image-tar", str(images["docker25"]), "--platform", "linux/arm64")
    assert code == 3 and doc["summary"]["root_cause"] == "vllm.version"
    assert doc["stage"] == "build"
    img = doc["image"]
    assert img["platform"] == "linux/arm64/v8" and img["machine"] == "aarch64"
    assert img["names"] == [SEED_TAG] and img["id"].startswith("sha256:") and img["digest"].startswith("sha256:")
    assert len(img["layers"]) == 9 and img["layers"][6]["created_by"] == VLLM_STEP
    assert img["origins"] == [{"finding": "vllm.version", "package": "vllm", "version": "0.11.2+empty", "layer": 7,
                               "created_by": VLLM_STEP}]
    # judged with the image's architecture and its own interpreter, not this machine's
    assert finding(doc, "python.arch")["observed"] == "aarch64"
    assert finding(doc, "python.version")["observed"] == "3.11.13"
    assert finding(doc, "python.glibc")["observed"] == "2.35"
    assert finding(doc, "cann.installed")["status"] == "ok"
    assert finding(doc, "env.cann_env")["status"] == "ok"  # the image's ENV, not the caller's
    assert "/tmp/" not in json.dumps(doc).replace(str(images["docker25"]), "")  # no path of the private view


def test_text_output_shows_image_digest_base_and_the_step(images):
    code, out, err = cli("check", "--image-tar", str(images["docker25"]))
    assert code == 3, err
    lines = out.splitlines()
    assert lines[0].startswith(f"image {SEED_TAG} ({images['docker25']}) · linux/arm64/v8 · sha256:")
    assert lines[1].startswith("ascend-doctor ") and lines[2].startswith("✗ ")  # the verdict, then the detail
    digest = lines.index(next(x for x in lines if x.startswith("digest sha256:")))
    assert lines[digest + 1].startswith("base not recorded")
    assert f"vllm.version: vllm 0.11.2+empty came in layer 7 of 9: {VLLM_STEP}" in out
    # runnable as printed (the doctor as it was started: tests/test_printed_commands.py runs it)
    assert re.search(rf"^  (\S*/)?ascend-doctor fix --image-tar {re.escape(str(images['docker25']))}$", out, re.M)


def test_the_layer_that_moved_torch_is_named(images, tmp_path):
    """The classic: a user's Dockerfile on the official image runs `pip install vllm==0.11.0`,
    which replaces torch 2.7.1+cpu with torch 2.8.0 from the index."""
    from fakehost.dists import Stub

    user = images["image"].copy()
    old_vllm = Stub("vllm", "0.11.2+empty", editable="/vllm-workspace/vllm")
    user.run("RUN /bin/sh -c pip install vllm==0.11.0 # buildkit",
             imagekit.remove_dist_ops(Stub("torch", "2.7.1+cpu")) + imagekit.remove_dist_ops(old_vllm)
             + [("whiteout", f"{imagekit.SITE}/__editable__.vllm.pth")]
             + imagekit.dist_ops([Stub("torch", "2.8.0"), Stub("vllm", "0.11.0")]))
    path = imagekit.docker_save(user, tmp_path / "user.tar", tags=["registry.local/serving:3"])
    code, out, err = cli("check", "--image-tar", str(path))
    assert code == 3, err
    assert "torch.version: torch 2.8.0 came in layer 10 of 10: RUN pip install vllm==0.11.0" in out
    code, doc = check_json("--image-tar", str(path))
    assert doc["summary"]["root_cause"] == "torch.version"
    assert finding(doc, "vllm.version")["status"] == "ok"


@pytest.mark.parametrize("layout", ["legacy", "links"])
def test_every_docker_save_layout_reads_the_same(images, layout):
    _, first = check_json("--image-tar", str(images["docker25"]))
    code, doc = check_json("--image-tar", str(images[layout]))
    assert code == 3
    assert [(f["id"], f["status"], f["observed"]) for f in doc["findings"]] == \
           [(f["id"], f["status"], f["observed"]) for f in first["findings"]]
    assert doc["image"]["origins"] == first["image"]["origins"]


def test_multi_platform_oci_archive_with_zstd_gzip_and_plain_layers(images):
    code, doc = check_json("--image-tar", str(images["oci"]), "--platform", "linux/arm64")
    assert code == 3 and doc["image"]["platform"] == "linux/arm64/v8"
    assert doc["image"]["available_platforms"] if "available_platforms" in doc["image"] else True
    assert finding(doc, "python.arch")["observed"] == "aarch64"
    code, doc = check_json("--image-tar", str(images["oci"]), "--platform", "linux/amd64")
    assert code == 0, [f for f in doc["findings"] if f["status"] in ("fail", "warn")]  # the amd64 variant has vllm 0.11.0
    assert finding(doc, "python.arch")["observed"] == "x86_64"
    assert doc["image"]["names"] == ["v0.11.0rc3"]
    code, out, err = cli("check", "--image-tar", str(images["oci"]), "--platform", "linux/s390x")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"ascend-doctor: error: {images['oci']} has no linux/s390x variant "
                                        "(it has: linux/arm64/v8, linux/amd64)"]


def test_default_platform_is_this_machines(images, monkeypatch):
    import doctor.usecases.image as usecase

    class Uname:
        machine = "aarch64"

    monkeypatch.setattr(usecase.os, "uname", lambda: Uname())
    _, doc = check_json("--image-tar", str(images["oci"]))
    assert doc["image"]["platform"] == "linux/arm64/v8"


def _view(path, tmp_path):
    """The merged, materialised view of an archive (what the probes read)."""
    from doctor.parse import oci
    from doctor.shell.images.archive import Reader, Workspace
    from doctor.shell.images.view import build

    ws = Workspace(str(tmp_path))
    chosen = {}

    def choose(contents):
        chosen["sel"] = oci.select(contents.doc, contents.names, None, "aarch64")
        return chosen["sel"].manifest.layers

    reader = Reader(ws)
    contents = reader.read_path(str(path), choose)
    sel = chosen["sel"]
    env_dirs = [p for v in sel.config.env.values() for p in v.split(":") if p.startswith("/")]
    view = build(ws, contents, sel.manifest.layers, lambda wanted: Reader(ws).fetch(str(path), wanted), env_dirs)
    return ws, view


def test_the_view_applies_whiteouts_opaque_dirs_links_and_runs_nothing(images, tmp_path):
    ws, view = _view(images["docker25"], tmp_path)
    root, tree = Path(view.root), view.tree
    assert tree.get("/root/.cache/pip") is None and tree.get("/root/.cache") is not None  # deleted by layer 5
    assert (root / "usr/local/Ascend/ascend-toolkit/set_env.sh").read_text() == "# CANN environment (re-added)\n"
    assert view.layer_of("/usr/local/Ascend/ascend-toolkit/set_env.sh") == 7  # deleted in 5, re-added in 7
    assert tree.get("/vllm-workspace/vllm/build/lib") is None  # layer 7 made build/ opaque
    assert view.layer_of("/vllm-workspace/vllm/build/fresh/vllm/__init__.py") == 7
    assert view.layer_of("/lib/aarch64-linux-gnu/libc.so.6") == 1  # through the /lib -> usr/lib link
    assert os.readlink(root / "usr/local/bin/python3") == "../python3.11.13/bin/python3"  # absolute link, made relative
    assert (root / "usr/local/bin/python3").resolve() == (root / "usr/local/python3.11.13/bin/python3").resolve()
    assert (root / "usr/local/python3.11.13/bin/python3").is_file()  # the hard link
    assert (root / "lib").is_symlink() and os.readlink(root / "lib") == "usr/lib"
    meta = root / "usr/local/python3.11.13/lib/python3.11/site-packages/vllm-0.11.2+empty.dist-info/METADATA"
    assert "Version: 0.11.2+empty" in meta.read_text()
    executable = [str(p) for p in root.rglob("*") if p.is_file() and not p.is_symlink() and os.stat(p).st_mode & 0o111]
    assert executable == []  # nothing in the view can be run
    assert not (root / "usr/bin/bash").exists()  # and what is not read is not there at all
    assert not (root / "tmp").exists()  # nor directories that lead to nothing read
    assert (root / "usr/local/Ascend/ascend-toolkit/latest/lib64").is_dir()  # on LD_LIBRARY_PATH: kept
    assert view.stats.files_kept < 60
    ws.close()
    assert not os.path.exists(ws.dir)


def test_hard_link_whose_target_was_not_kept_is_read_again(tmp_path):
    """pip's cache hard-linked into site-packages: the METADATA is a link to a file whose name
    the first pass ignores; the tarball is read a second time for it."""
    img = imagekit.Image(architecture="amd64")
    img.run("ADD base", imagekit.base_os("amd64") + imagekit.python_ops(), "none")
    meta = Stub("numpy", "1.26.4").metadata()
    info = f"{imagekit.SITE}/numpy-1.26.4.dist-info"
    img.run("RUN pip install numpy", [("file", "/root/.cache/wheels/blob-77", meta), ("dir", info),
                                      ("hardlink", f"{info}/METADATA", "/root/.cache/wheels/blob-77")], "gzip")
    path = imagekit.docker_save(img, tmp_path / "hl.tar")
    code, out, err = cli("snapshot", "--image-tar", str(path))
    assert code == 0, err
    snap = json.loads(out)
    assert snap["packages"]["dists"]["numpy"]["version"] == "1.26.4"
    assert snap["image"]["dist_layers"]["numpy"] == 2


def test_nothing_from_the_image_is_executed(tmp_path):
    """Scripts an image ships (npu-smi, mooncake_master, python3 itself, a .pth import line)
    would leave a mark if anything ran them."""
    mark = tmp_path / "ran"
    script = f"#!/bin/sh\ntouch {mark}\n"
    img = imagekit.Image(architecture="amd64")
    img.run("ADD base", imagekit.base_os("amd64") + [("dir", "/usr/local/bin"),
                                                      ("file", "/usr/local/bin/npu-smi", script, 0o755),
                                                      ("file", "/usr/local/bin/mooncake_master", script, 0o755),
                                                      ("file", "/usr/local/bin/python3", script, 0o755),
                                                      ("dir", "/usr/local/lib/python3.11/site-packages"),
                                                      ("file", "/usr/local/lib/python3.11/site-packages/evil.pth",
                                                       f"import os; os.system('touch {mark}')\n"),
                                                      ("file", "/usr/local/include/python3.11/patchlevel.h",
                                                       '#define PY_VERSION "3.11.9"\n')], "gzip")
    path = imagekit.docker_save(img, tmp_path / "evil.tar")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(scratch))
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "check", "--json", "--image-tar", str(path),
                           "--serve-args", "vllm serve m --kv-transfer-config '{\"kv_connector\": \"MooncakeConnectorV1\"}'"],
                          capture_output=True, text=True, timeout=120, env=env)
    doc = json.loads(proc.stdout)
    assert finding(doc, "python.version")["observed"] == "3.11.9"
    assert not mark.exists()
    assert list(scratch.iterdir()) == []  # the private view is gone


def test_snapshot_of_an_image_judges_the_same_later(images, tmp_path):
    code, out, err = cli("snapshot", "--image-tar", str(images["docker25"]))
    assert code == 0, err
    snap = json.loads(out)
    assert snap["python"]["source"] == "image" and snap["host"]["machine"] == "aarch64"
    assert snap["image"]["dist_layers"]["vllm"] == 7
    assert "/vllm-workspace/vllm" in snap["python"]["sys_path"]  # the .pth path line
    saved = tmp_path / "snap.json"
    saved.write_text(out)
    code, doc = check_json("--from", str(saved))
    assert code == 3 and doc["image"]["origins"][0]["layer"] == 7


@pytest.mark.parametrize("make, message", [
    (lambda p: p.write_bytes(os.urandom(2048)), "is not a tar archive"),
    (lambda p: _tar_of(p, {"etc/passwd": b"root:x:0:0::/root:/bin/sh\n"}), "is not an image archive"),
    (lambda p: _tar_of(p, {"manifest.json": b'[{"Config": "c.json", "Layers": ["l/layer.tar"]}]',
                           "c.json": b'{"architecture": "amd64", "os": "linux", "rootfs": {"diff_ids": []}}'}),
     "layer l/layer.tar named by the manifest is not in"),
])
def test_a_tar_that_is_not_an_image_is_one_line(tmp_path, make, message):
    path = tmp_path / "x.tar"
    make(path)
    code, out, err = cli("check", "--image-tar", str(path))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err


def _tar_of(path, files):
    with tarfile.open(path, "w") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


def test_a_layer_compression_we_cannot_read(tmp_path):
    """An OCI layer in a format that is not tar, gzip, zstd, xz or bzip2 (lz4 frames here)."""
    img = imagekit.Image(architecture="amd64")
    img.run("ADD base", [("file", "/etc/os-release", "x")], "none")
    path = imagekit.oci_archive([img], tmp_path / "lz4.tar", nested=False, attestation=False)
    # replace the layer blob by an lz4 frame of the same name
    with tarfile.open(path) as tf:
        members = [(m, tf.extractfile(m).read() if m.isreg() else None) for m in tf.getmembers()]
    docs = [json.loads(d) for m, d in members if d and d[:1] == b"{"]
    manifest = next(d for d in docs if "layers" in d and "config" in d)
    blob = "blobs/sha256/" + manifest["layers"][0]["digest"].split(":")[1]
    with tarfile.open(path, "w") as tf:
        for m, data in members:
            if m.name == blob:
                data = b"\x04\x22\x4d\x18" + b"\x00" * 2000
                m.size = len(data)
            tf.addfile(m, io.BytesIO(data) if data is not None else None)
    code, out, err = cli("check", "--image-tar", str(path))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"layer {blob} uses a compression this doctor cannot read (application/vnd.oci.image.layer.v1.tar)" in err
    # the same archive gzipped (docker save | gzip) is read in one pass, as the engine's export
    gz = tmp_path / "lz4.tar.gz"
    gz.write_bytes(__import__("gzip").compress(path.read_bytes()))
    code, out, err = cli("check", "--image-tar", str(gz))
    assert code == 2 and f"layer {blob} uses a compression this doctor cannot read (first bytes 04224d18)" in err


def test_truncated_archive(images, tmp_path):
    data = Path(images["docker25"]).read_bytes()
    cut = tmp_path / "cut.tar"
    cut.write_bytes(data[: len(data) * 2 // 3])
    code, out, err = cli("check", "--image-tar", str(cut))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_zstd_layers_without_a_zstd_module(images, monkeypatch):
    monkeypatch.setitem(sys.modules, "zstandard", None)
    monkeypatch.setitem(sys.modules, "compression", None)
    code, out, err = cli("check", "--image-tar", str(images["oci"]), "--platform", "linux/arm64")
    from doctor.program import own_pip_install

    # into the doctor's own environment, whatever shell the line is pasted into
    assert code == 2 and "is zstd-compressed" in err and own_pip_install("zstandard>=0.19") in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, message", [
    (["--image-tar", "/nonexistent.tar"], "--image-tar /nonexistent.tar: no such file"),
    # there, but no archive: it said "no such file"
    (["--image-tar", "/dev/null"], "--image-tar /dev/null: a device, not a regular file"),
    (["--image-tar", "/"], "--image-tar /: a directory, not a regular file"),
    (["--image", "x", "--image-tar", "y"], "use either --image or --image-tar"),
    (["--image-tar", "y", "--root", "/tmp"], "cannot be combined with --root"),
    (["--image-tar", "y", "--stage", "runtime"], "an image is judged at the build stage"),
    (["--pull"], "--pull pulls the image named by --image"),
    (["--platform", "linux/arm64"], "--platform picks the variant"),
    (["--image-tar", "SEED", "--platform", "arm64"], "--platform arm64: use linux/arm64 or linux/amd64"),
])
def test_bad_usage_is_one_line(images, argv, message):
    argv = [str(images["docker25"]) if a == "SEED" else a for a in argv]
    code, out, err = cli("check", *argv)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"ascend-doctor: error: {err.strip().split('error: ', 1)[1]}"]
    assert message in err


# -- the official v0.30.0rc2 image and images built on it ------------------------------------------

@pytest.fixture(scope="module")
def official(tmp_path_factory):
    base = tmp_path_factory.mktemp("official")
    img = imagekit.official_0300rc2(base / "src")
    out = {"named": imagekit.docker_save(img, base / "named.tar", tags=["quay.io/ascend/vllm-ascend:v0.30.0rc2"]),
           "anonymous": imagekit.docker_save(img, base / "anon.tar", tags=["registry.local/serving:1"])}
    user = img.copy()
    user.run("RUN /bin/sh -c pip install torch-npu==2.9.0 # buildkit",
             imagekit.remove_dist_ops(Stub("torch-npu", "2.10.0"), imagekit.SITE312)
             + imagekit.dist_ops([Stub("torch-npu", "2.9.0")], site=imagekit.SITE312))
    out["user"] = imagekit.docker_save(user, base / "user.tar", tags=["registry.local/serving:2"])
    same = img.copy()  # the user reinstalls the very daily build in a step of their own
    same.run("RUN /bin/sh -c pip install --force-reinstall ./torch_npu-2.10.0-cp312-cp312-linux_aarch64.whl # buildkit",
             imagekit.dist_ops([Stub("torch-npu", "2.10.0")], site=imagekit.SITE312))
    out["reinstalled"] = imagekit.docker_save(same, base / "same.tar", tags=["registry.local/serving:3"])
    return out


def test_official_image_deviations_are_the_vendors(official):
    code, doc = check_json("--image-tar", str(official["named"]))
    assert code == 0, [f for f in doc["findings"] if f["status"] in ("fail", "warn")]
    npu = finding(doc, "torch_npu.version")
    assert npu["status"] == "info" and "installed on purpose by the official image" in npu["title"]
    assert npu["source"].startswith("https://pypi.org/project/vllm-ascend/0.30.0rc2/")
    assert "torch-npu 2.10.0 does not match" in npu["evidence"][0]  # what the rule said, kept as evidence
    assert finding(doc, "vllm_ascend.triton")["status"] == "info"
    assert finding(doc, "vllm_ascend.requirements")["status"] == "info"
    img = doc["image"]
    assert img["official"] == "quay.io/ascend/vllm-ascend:v0.30.0rc2"
    assert img["base"].endswith("cann:9.2.0_20260930220649-910b-ubuntu22.04-py3.12") and img["base_source"] == "dockerfile"
    assert {d["package"] for d in img["deviations"]} == {"torch-npu", "triton-ascend", "memfabric-hybrid", "memcache-hybrid"}
    assert all(d["step"] == "install_daily_deps.sh" for d in img["deviations"])
    code, out, _ = cli("check", "--image-tar", str(official["named"]), "--lang", "zh")
    assert code == 0 and "厂商记载的偏差" in out


def test_an_image_built_on_it_keeps_the_vendors_layers_excused(official):
    code, doc = check_json("--image-tar", str(official["anonymous"]))
    assert code == 0 and doc["image"]["official"] is None and doc["image"]["built_on"] == "0.30.0rc2"


def test_a_user_layer_that_changes_the_stack_is_judged_normally(official):
    code, doc = check_json("--image-tar", str(official["user"]))
    assert code == 3 and doc["summary"]["root_cause"] == "torch_npu.version"
    assert finding(doc, "torch_npu.version")["status"] == "fail"
    assert doc["image"]["origins"] == [{"finding": "torch_npu.version", "package": "torch-npu", "version": "2.9.0",
                                        "layer": 10, "created_by": "RUN pip install torch-npu==2.9.0"}]
    assert finding(doc, "vllm_ascend.triton")["status"] == "info"  # the vendor's layers are still the vendor's
    code, doc = check_json("--image-tar", str(official["reinstalled"]))
    assert code == 3 and finding(doc, "torch_npu.version")["status"] == "fail"  # same version, the user's own step


@pytest.mark.slow  # ~1 s of CPU or more: real pip resolution
def test_fix_plans_what_a_dockerfile_step_would_run(official, monkeypatch):
    # the plan is what is judged here, not its proof: pip reads no index (the real one is the
    # real-index benchmark's), so the proof fails at once instead of retrying unreachable hosts
    for k, v in {"PIP_CONFIG_FILE": "/dev/null", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": ""}.items():
        monkeypatch.setenv(k, v)
    code, out, err = cli("fix", "--image-tar", str(official["user"]))
    assert code == 3, err
    assert "/usr/local/python3.12.12/bin/python3 -m pip install --no-deps torch-npu==2.10.0.post4" in out
    assert "as a RUN step of a Dockerfile built FROM registry.local/serving:2" in out
    assert "the official image installs" in out and "triton-ascend 3.6.0+dev20260923230212" in out
    code, out, err = cli("fix", "--json", "--image-tar", str(official["user"]))
    doc = json.loads(out)
    assert doc["image"]["origins"][0]["layer"] == 10
    assert any(s["argv"][:3] == ["/usr/local/python3.12.12/bin/python3", "-m", "pip"] for s in doc["steps"])
    code, out, err = cli("fix", "--image-tar", str(official["user"]), "--apply", "--yes")
    assert code == 2 and "cannot be changed in place" in err and out == ""


def test_mooncake_libraries_are_read_from_the_image(tmp_path):
    """The ELF headers (NEEDED, RUNPATH) of the NPU wheel's libraries come out of the layer."""
    from fakehost import FakeHost
    from fakehost.mooncake import ElfKit, npu_wheel

    fake = FakeHost(tmp_path / "mc")
    fake.site = tmp_path / "mc" / "site"
    fake.site.mkdir(parents=True)
    pkg = npu_wheel(fake, ElfKit(tmp_path / "kit"))
    img = imagekit.Image(architecture="amd64")
    img.run("ADD base", imagekit.base_os("amd64") + imagekit.python_ops(), "none")
    img.run("RUN pip install mooncake-transfer-engine-npu==0.3.11.post1", imagekit.dir_ops(fake.site, imagekit.SITE))
    path = imagekit.docker_save(img, tmp_path / "mc.tar")
    code, out, err = cli("snapshot", "--image-tar", str(path))
    assert code == 0, err
    mc = json.loads(out)["mooncake"]
    assert mc["package_dir"] == f"{imagekit.SITE}/mooncake" and mc["version"] == "0.3.11.post1"
    elf = {e["path"].rsplit("/", 1)[1]: e for e in mc["elf"]}
    assert elf and all(not e["error"] and e["machine"] for e in elf.values())
    transport = [e for n, e in elf.items() if n.startswith("ascend_transport")]
    assert transport and transport[0]["ascend_strings"]
    assert sorted(n for n in mc["package_files"]) == sorted(p.name for p in pkg.iterdir())


def test_interpreters_found_the_way_docker_run_would_start_them(tmp_path):
    """A Debian python3 (dist-packages), a venv named by VIRTUAL_ENV (pyvenv.cfg, no system
    site-packages) and PYTHONPATH: sys.path as site would build it, from files only."""
    debian = [("dir", "/usr/bin"), ("file", "/usr/bin/python3.10", b"\x7fELF", 0o755),
              ("symlink", "/usr/bin/python3", "python3.10"),
              ("file", "/usr/include/python3.10/patchlevel.h", '#define PY_VERSION "3.10.12"\n')]
    img = imagekit.Image(architecture="amd64")
    img.run("ADD base", imagekit.base_os("amd64") + debian, "none")
    img.run("RUN pip install numpy", imagekit.dist_ops([Stub("numpy", "1.26.4")], site="/usr/local/lib/python3.10/dist-packages"))
    code, out, err = cli("snapshot", "--image-tar", str(imagekit.docker_save(img, tmp_path / "deb.tar")))
    py = json.loads(out)["python"]
    assert (py["executable"], py["version"], py["prefix"]) == ("/usr/bin/python3", "3.10.12", "/usr")
    assert py["sys_path"] == ["/usr/local/lib/python3.10/dist-packages"]
    assert json.loads(out)["packages"]["dists"]["numpy"]["version"] == "1.26.4"

    venv = img.copy()
    venv.env.update(VIRTUAL_ENV="/opt/venv", PYTHONPATH="/srv/app:/nonexistent")
    venv.run("RUN python3 -m venv /opt/venv && /opt/venv/bin/pip install torch-npu",
             [("file", "/opt/venv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.10.12\n"),
              ("symlink", "/opt/venv/bin/python3", "/usr/bin/python3"),
              ("file", "/srv/app/torch/__init__.py", "")]
             + imagekit.dist_ops([Stub("torch-npu", "2.7.1")], site="/opt/venv/lib/python3.10/site-packages"))
    code, out, err = cli("snapshot", "--image-tar", str(imagekit.docker_save(venv, tmp_path / "venv.tar")))
    snap = json.loads(out)
    py = snap["python"]
    assert (py["executable"], py["prefix"], py["base_prefix"]) == ("/opt/venv/bin/python3", "/opt/venv", "/usr")
    assert py["sys_path"] == ["/srv/app", "/opt/venv/lib/python3.10/site-packages"]
    assert set(snap["packages"]["dists"]) == {"torch-npu"}  # the system's numpy is not visible in the venv
