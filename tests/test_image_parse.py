"""The pure parts of image checks: manifests and configs, the layer rules (whiteouts, opaque
directories, links), which files are read, the static interpreter, the judgement."""
import pytest

from doctor.parse import image_files, oci, pyenv
from doctor.parse.overlay import DIR, FILE, HARDLINK, SYMLINK, WANTED, Entry, Tree, classify, clamp, normalize, relative_link
from shipped import matrix as shipped_matrix


# -- config and manifests --------------------------------------------------------------------------

@pytest.mark.parametrize("raw, clean", [
    ("/bin/sh -c #(nop)  ENV PATH=/usr/local/bin:/usr/bin", "ENV PATH=/usr/local/bin:/usr/bin"),
    ("/bin/sh -c pip install vllm==0.11.0", "RUN pip install vllm==0.11.0"),
    ("|2 BUILD_TYPE=release SOC=x /bin/sh -c bash /tmp/install_daily_deps.sh", "RUN bash /tmp/install_daily_deps.sh"),
    ("RUN /bin/sh -c python3 -m pip install -e /vllm-workspace/vllm/ # buildkit",
     "RUN python3 -m pip install -e /vllm-workspace/vllm/"),
    ("RUN |1 A=b /bin/bash -c echo hi # buildkit", "RUN echo hi"),
    ("COPY . /vllm-workspace/vllm-ascend/ # buildkit", "COPY . /vllm-workspace/vllm-ascend/"),
    ("WORKDIR /workspace", "WORKDIR /workspace"),
])
def test_history_steps_read_as_the_dockerfile_line(raw, clean):
    assert oci.clean_created_by(raw) == clean


def test_config_env_platform_and_layer_steps():
    conf = oci.parse_config({
        "architecture": "aarch64", "os": "linux", "variant": "v8",
        "config": {"Env": ["PATH=/usr/bin", "A=b=c", "junk"], "WorkingDir": "/workspace", "User": "1000:1000",
                   "Labels": {"org.opencontainers.image.base.name": "quay.io/ascend/cann:8.3.rc2"}},
        "rootfs": {"diff_ids": ["sha256:a", "sha256:b"]},
        "history": [{"created_by": "/bin/sh -c #(nop) ADD file:x in /"},
                    {"created_by": "/bin/sh -c #(nop)  ENV A=b", "empty_layer": True},
                    {"created_by": "/bin/sh -c pip install x"}]})
    assert conf.platform == oci.Platform("linux", "arm64", "v8") and conf.platform.machine == "aarch64"
    assert conf.env == {"PATH": "/usr/bin", "A": "b=c"}
    assert [s.created_by for s in oci.layer_steps(conf, 2)] == ["ADD file:x in /", "RUN pip install x"]
    assert oci.layer_steps(conf, 3) == [None, None, None]  # a history that does not add up names no step


@pytest.mark.parametrize("text, expected", [
    ("linux/arm64", oci.Platform("linux", "arm64")), ("linux/aarch64", oci.Platform("linux", "arm64")),
    ("linux/amd64", oci.Platform("linux", "amd64")), ("linux/x86_64", oci.Platform("linux", "amd64")),
    ("linux/arm64/v8", oci.Platform("linux", "arm64", "v8")),
    ("arm64", None), ("linux/arm64/v8/x", None), ("linux/ARM 64", None),
])
def test_platforms(text, expected):
    assert oci.parse_platform(text) == expected


def test_choosing_a_platform():
    arm, amd = oci.Platform("linux", "arm64", "v8"), oci.Platform("linux", "amd64")
    cands = [(arm, "arm"), (amd, "amd")]
    assert oci.choose(cands, oci.Platform("linux", "arm64"), "x86_64") == ("arm", "")  # variant optional
    assert oci.choose(cands, None, "x86_64") == ("amd", "")  # the machine's own
    assert oci.choose(cands, None, "aarch64") == ("arm", "")
    assert oci.choose(cands, None, "s390x") == (None, "ambiguous")
    assert oci.choose(cands, oci.Platform("linux", "ppc64le"), "x86_64") == (None, "missing")
    assert oci.choose([(arm, "arm")], None, "x86_64") == ("arm", "")  # one image: that one


def test_references():
    assert oci.tag_of("quay.io/ascend/vllm-ascend:v0.11.0rc3") == ("quay.io/ascend/vllm-ascend", "v0.11.0rc3")
    assert oci.tag_of("localhost:5000/x") == ("localhost:5000/x", "latest")
    assert oci.tag_of("x@sha256:ab") == ("x", "sha256:ab")
    assert oci.repository("ubuntu") == "docker.io/library/ubuntu"
    assert oci.repository("ascend/cann") == "docker.io/ascend/cann"
    assert oci.repository("quay.io/ascend/cann") == "quay.io/ascend/cann"


def test_manifest_errors_are_one_line():
    with pytest.raises(oci.ImageFormatError):
        oci.parse_docker_manifest({"not": "a list"})
    with pytest.raises(oci.ImageFormatError):
        oci.blob_path("sha256:../../etc/passwd")
    with pytest.raises(oci.ImageFormatError, match="no manifest.json or index.json"):
        oci.select(lambda p: None, {"etc/passwd"}, None, "x86_64")


@pytest.mark.parametrize("mt, comp", [
    ("application/vnd.oci.image.layer.v1.tar+gzip", "gzip"), ("application/vnd.oci.image.layer.v1.tar+zstd", "zstd"),
    ("application/vnd.oci.image.layer.v1.tar", "none"), ("application/vnd.docker.image.rootfs.diff.tar.gzip", "gzip"),
    ("application/x-unknown", None)])
def test_media_types(mt, comp):
    assert oci.compression_of(mt) == comp


# -- the layer rules -----------------------------------------------------------------------------

def _apply(tree, layer, entries):
    opaque, deleted, items = [], [], []
    for path, kind, *rest in entries:
        p = normalize(path)
        what, target = classify(p)
        if what == "opaque":
            opaque.append(target)
        elif what == "whiteout":
            deleted.append(target)
        else:
            link = rest[0] if rest else ""
            ref = rest[1] if len(rest) > 1 else None
            items.append(Entry(p, kind, link=link, ref=ref))
    tree.apply(layer, opaque, deleted, items)


K = ""  # a file the reader noted (only files something reads are tracked)


def test_whiteouts_opaque_dirs_and_re_added_files():
    t = Tree()
    _apply(t, 1, [("usr/", DIR), ("usr/lib/a.so", FILE, "", K), ("root/.cache/pip/x", FILE, "", K),
                  ("build/old.o", FILE, "", K), ("etc/set_env.sh", FILE, "", K)])
    _apply(t, 2, [("root/.cache/.wh.pip", FILE), ("etc/.wh.set_env.sh", FILE)])
    assert t.get("/root/.cache/pip") is None and t.get("/root/.cache") is not None
    assert t.get("/etc/set_env.sh") is None
    _apply(t, 3, [("build/.wh..wh..opq", FILE), ("build/new.o", FILE, "", K), ("etc/set_env.sh", FILE, "", K)])
    assert t.get("/build/old.o") is None and t.get("/build/new.o").layer == 3
    assert t.get("/etc/set_env.sh").layer == 3  # deleted in 2, re-added in 3
    assert t.get("/usr/lib/a.so").layer == 1


def test_whiteouts_hide_lower_layers_only():
    t = Tree()
    _apply(t, 1, [("x/f", FILE, "", K)])
    # one step that removes x/f and writes it again: the new file stays visible
    _apply(t, 2, [("x/f", FILE, "", K), ("x/.wh.f", FILE)])
    assert t.get("/x/f").layer == 2
    # an opaque directory keeps the entries of its own layer
    _apply(t, 3, [("x/g", FILE, "", K), ("x/.wh..wh..opq", FILE)])
    assert t.get("/x/g").layer == 3 and t.get("/x/f") is None


def test_a_file_replaces_a_directory_and_a_directory_a_file():
    t = Tree()
    _apply(t, 1, [("a/b/c", FILE, "", K), ("f", FILE, "", K), ("g/METADATA", FILE, "", K)])
    _apply(t, 2, [("a/b", FILE, "", K), ("f/inner", FILE, "", K)])
    assert t.get("/a/b").kind == FILE and t.get("/a/b/c") is None
    assert t.get("/f").kind == DIR and t.get("/f/inner").layer == 2
    # a file nothing reads is not tracked, but it still replaces what was at its path
    _apply(t, 3, [("g", FILE), ("unread/file", FILE)])
    assert t.get("/g") is None and t.get("/unread/file") is None and t.get("/unread").kind == DIR


def test_hard_links_take_their_targets_content():
    t = Tree()
    _apply(t, 1, [("d/METADATA.orig", FILE, "", "/store/1"), ("d/METADATA", HARDLINK, "/d/METADATA.orig", WANTED),
                  ("bin/python3", HARDLINK, "/bin/python3.11", "")])
    assert t.get("/d/METADATA").ref == "/store/1"
    assert t.get("/bin/python3").ref == ""  # only its existence matters
    _apply(t, 2, [("e/METADATA", HARDLINK, "/nowhere/kept", WANTED)])
    assert t.missing_links == [(2, "/e/METADATA", "/nowhere/kept")]
    t.fill("/e/METADATA", "/nowhere/kept", "/store/2")
    assert t.get("/e/METADATA").ref == "/store/2"


def test_symlinks_resolve_inside_the_image_and_never_above_it():
    t = Tree()
    _apply(t, 1, [("usr/lib/x", FILE, "", K), ("lib", SYMLINK, "usr/lib"), ("opt/abs", SYMLINK, "/usr/lib"),
                  ("opt/up", SYMLINK, "../../../../usr/lib"), ("loop", SYMLINK, "/loop")])
    assert t.resolve("/lib/x") == "/usr/lib/x"
    assert t.resolve("/opt/abs/x") == "/usr/lib/x"
    assert t.resolve("/opt/up/x") == "/usr/lib/x"
    assert t.resolve("/loop/x") is None
    assert clamp("/a/../../b") == "/b"
    assert relative_link("/opt/up", "../../../../usr/lib") == "../usr/lib"
    assert relative_link("/usr/local/bin/python3", "/usr/local/python3.11.13/bin/python3") == "../python3.11.13/bin/python3"


def test_member_names():
    assert normalize("./usr/bin/") == "/usr/bin"
    assert normalize("a/../../etc/passwd") is None
    assert classify("/a/.wh..wh..opq") == ("opaque", "/a")
    assert classify("/a/.wh.b") == ("whiteout", "/a/b")


# -- what is read ----------------------------------------------------------------------------------

@pytest.mark.parametrize("path, kind", [
    ("/usr/local/lib/python3.11/site-packages/vllm-0.11.2+empty.dist-info/METADATA", image_files.TEXT),
    ("/usr/local/lib/python3.11/site-packages/vllm-0.11.2+empty.dist-info/RECORD", None),
    ("/x/site-packages/mooncake_transfer_engine_npu-0.3.11.post1.dist-info/RECORD", image_files.TEXT),
    ("/usr/lib/python3/dist-packages/__editable__.vllm.pth", image_files.TEXT),
    ("/usr/local/Ascend/ascend-toolkit/8.3.RC2/aarch64-linux/ascend_toolkit_install.info", image_files.TEXT),
    ("/usr/local/Ascend/nnal/atb/set_env.sh", image_files.TEXT),
    ("/etc/ld.so.cache", image_files.TEXT),
    ("/x/site-packages/torch/version.py", image_files.TEXT),
    ("/x/site-packages/torch/nn/modules/linear.py", None),
    ("/vllm-workspace/vllm-ascend/vllm_ascend/distributed/kv_transfer/__init__.py", image_files.TEXT),
    ("/x/site-packages/mooncake/engine.cpython-311-aarch64-linux-gnu.so", image_files.BINARY),
    ("/usr/local/lib/libtransfer_engine.so", image_files.BINARY),
    ("/usr/lib/aarch64-linux-gnu/libc.so.6", image_files.BINARY),
    ("/usr/local/Ascend/ascend-toolkit/latest/lib64/libascendcl.so", image_files.EXISTS),
    ("/usr/local/python3.11.13/bin/python3.11", image_files.EXISTS),
    ("/usr/local/Ascend/driver/lib64/driver/libascend_hal.so", image_files.EXISTS),
    ("/usr/local/Ascend/ascend-toolkit/latest/opp/op_impl/built-in/libcust_opapi.so", None),
    ("/x/site-packages/mooncake/libsomething.so.1", image_files.EXISTS),
    ("/usr/local/bin/npu-smi", None),
    ("/usr/local/bin/mooncake_master", None),
    ("/usr/share/doc/big.bin", None),
])
def test_which_files_are_read(path, kind):
    assert image_files.want(path) == kind


# -- a Python environment from its files -------------------------------------------------------------

def test_pth_path_lines_are_read_and_import_lines_never():
    text = "# comment\n/vllm-workspace/vllm\nimport os; os.system('touch /tmp/pwned')\nimport\tx\n\nrel/dir\n"
    assert pyenv.pth_paths(text) == ["/vllm-workspace/vllm", "rel/dir"]


def test_interpreter_version_and_glibc_from_files():
    assert pyenv.patchlevel('#define PY_MINOR_VERSION 11\n#define PY_VERSION "3.11.13+"\n') == "3.11.13"
    assert pyenv.version_from_binary("python3.12") == "3.12" and pyenv.version_from_binary("python3") is None
    assert pyenv.pyvenv_cfg("home = /usr/bin\nversion = 3.10.12\ninclude-system-site-packages = false\n")["version"] == "3.10.12"
    assert pyenv.glibc_from_name("libc-2.31.so") == "2.31"
    assert pyenv.glibc_from_bytes(b"\0GNU C Library (Ubuntu GLIBC 2.35-0ubuntu3.8) stable release version 2.35.\n") == "2.35"
    assert pyenv.glibc_from_bytes(b"GLIBC_2.17\0GLIBC_2.34\0GLIBC_2.28\0") == "2.34"
    assert pyenv.glibc_from_bytes(b"musl libc") is None


def test_site_layouts():
    assert pyenv.site_dirs("/usr", "3.10", debian=True, lib64=False) == [
        "/usr/local/lib/python3.10/dist-packages", "/usr/lib/python3/dist-packages", "/usr/lib/python3.10/dist-packages"]
    assert pyenv.site_dirs("/usr", "3.11", debian=False, lib64=True) == [
        "/usr/lib64/python3.11/site-packages", "/usr/lib/python3.11/site-packages"]
    m = pyenv.markers("3.11.13", "aarch64")
    assert m["platform_machine"] == "aarch64" and m["python_version"] == "3.11" and m["python_full_version"] == "3.11.13"


# -- matrices/images.toml ----------------------------------------------------------------------------

def test_official_image_rows_are_sourced_and_match_the_release_rows():
    from citations import unresolved

    m = shipped_matrix()
    assert m.images, "matrices/images.toml is loaded"
    releases = {r.vllm_ascend: r for r in m.releases}
    for row in m.images:
        assert unresolved(row.source) == [], row.tag
        release = releases[row.vllm_ascend]
        assert row.ref in release.images  # a tag the release row lists
        for dev in row.deviations:
            assert dev.step and dev.summary
    tags = {r.tag: r for r in m.images}
    assert {d.package for d in tags["v0.30.0rc2"].deviations} == {
        "torch-npu", "triton-ascend", "memfabric-hybrid", "memcache-hybrid"}
    assert {d.package for d in tags["v0.30.0rc2-310p"].deviations} == {"torch-npu"}  # DAILY_DEPS_MODE torch_npu_only


def test_a_deviation_excuses_only_what_came_from_its_step():
    """The judgement with plain data: the same package at the same version is the vendor's when
    the official step installed it, and the user's when a later layer did."""
    from doctor.facts import Distribution, Facts, HostFacts, ImageFacts, ImageLayer, PackagesFacts
    from doctor.findings import FAIL, Finding, judge, msg
    from doctor.rules.image import judge_image

    def facts(layer_of_npu):
        f = Facts(tool_version="t", collected_at="now", host=HostFacts(root="/", cwd="/", uid=0, gids=[0]))
        f.packages = PackagesFacts(dists={
            "vllm-ascend": Distribution("vllm-ascend", "0.30.0rc2"), "torch-npu": Distribution("torch-npu", "2.10.0")})
        f.image = ImageFacts(ref="x", source="tar", names=["registry.local/x:1"], layers=[
            ImageLayer(1, "a", "RUN pip install -e /vllm-workspace/vllm-ascend/"),
            ImageLayer(2, "b", "RUN BUILD_TYPE=daily bash /tmp/install_daily_deps.sh"),
            ImageLayer(3, "c", "RUN pip install --force-reinstall torch_npu-2.10.0-cp312-cp312-linux_aarch64.whl")],
            dist_layers={"vllm-ascend": 1, "torch-npu": layer_of_npu})
        return f

    rows = shipped_matrix().images
    for layer, status in ((2, "info"), (3, "fail")):
        verdict = judge([Finding("torch_npu.version", FAIL, msg("torch-npu 2.10.0 does not match", "不配套"),
                                   observed="2.10.0")])
        verdict, judgement = judge_image(verdict, facts(layer), rows)
        assert verdict.findings[0].status == status
        assert verdict.root_cause == (None if status == "info" else "torch_npu.version")
        assert (judgement.built_on is not None) == (layer == 2)
        if status == "fail":
            assert [(o.package, o.layer, o.created_by) for o in judgement.origins] == [
                ("torch-npu", 3, "RUN pip install --force-reinstall torch_npu-2.10.0-cp312-cp312-linux_aarch64.whl")]
        else:  # the excuse names the official step that installed it
            assert "the step running install_daily_deps.sh" in verdict.findings[0].hint.text("en")
    unknown = facts(3)
    unknown.image.dist_layers = {"vllm-ascend": 1}  # not traced to a layer: no step to name
    verdict = judge([Finding("torch_npu.version", FAIL, msg("torch-npu 2.10.0 does not match", "不配套"), observed="2.10.0")])
    _, judgement = judge_image(verdict, unknown, rows)
    assert [(o.package, o.layer, o.created_by) for o in judgement.origins] == [("torch-npu", None, "")]


def test_the_packages_a_finding_is_about():
    from doctor.facts import Distribution
    from doctor.findings import FAIL, Finding, msg
    from doctor.rules.image import packages_of

    dists = {n: Distribution(n, v) for n, v in (("torch", "2.7.1"), ("torchvision", "0.22.1"),
                                                 ("torchaudio", "2.7.1"), ("numpy", "2.2.0"))}
    # torch.companions: the companion whose version was observed, else both
    assert packages_of(Finding("torch.companions", FAIL, msg("x", "x"), observed="0.22.1"), dists) == ["torchvision"]
    assert packages_of(Finding("torch.companions", FAIL, msg("x", "x"), observed="9"), dists) == ["torchvision", "torchaudio"]
    # otherwise "name version" pairs of installed packages in the text
    title = msg("vllm-ascend needs numpy<2, numpy 2.2.0 is installed", "x")
    assert packages_of(Finding("vllm_ascend.numpy_other", FAIL, title), dists) == ["numpy"]


def test_the_vllm_an_image_variant_builds_is_that_tags_deviation():
    """Issue 25: v0.11.0rc3's Dockerfile.openEuler builds vLLM v0.11.2 (ARG VLLM_TAG), the other
    Dockerfiles v0.11.0. The release row records it per image; check --image excuses vllm 0.11.2
    only when the layer that installed it was built with VLLM_TAG=v0.11.2."""
    from doctor.facts import Distribution, Facts, HostFacts, ImageFacts, ImageLayer, PackagesFacts
    from doctor.findings import FAIL, Finding, judge, msg
    from doctor.matrix.images import official_images
    from doctor.rules.image import judge_image

    m = shipped_matrix()
    row = next(r for r in m.releases if r.vllm_ascend == "0.11.0rc3")
    assert row.vllm == "0.11.0" and row.vllm_by_image == {"openeuler": "0.11.2"}
    assert "Dockerfile.openEuler" in row.source_of("vllm_by_image")
    images = {r.tag: r for r in official_images(m)}
    oe = images["v0.11.0rc3-openeuler"]
    assert oe.dockerfile == "Dockerfile.openEuler" and oe.ref in row.images
    assert [(d.package, d.version, d.step) for d in oe.deviations] == [("vllm", "0.11.2", "VLLM_TAG=v0.11.2")]
    assert "v0.11.0rc3" not in images  # the Ubuntu image builds the release's vLLM
    assert images["v0.30.0rc2"].deviations == next(r for r in m.images if r.tag == "v0.30.0rc2").deviations

    def facts(names, step):
        f = Facts(tool_version="t", collected_at="now", host=HostFacts(root="/", cwd="/", uid=0, gids=[0]))
        f.packages = PackagesFacts(dists={"vllm-ascend": Distribution("vllm-ascend", "0.11.0rc3"),
                                          "vllm": Distribution("vllm", "0.11.2+empty")})
        f.image = ImageFacts(ref=names[0], source="tar", names=names, layers=[
            ImageLayer(1, "a", step),
            ImageLayer(2, "b", "RUN |2 VLLM_REPO=x VLLM_TAG=v0.11.2 /bin/sh -c python3 -m pip install -e /vllm-workspace/vllm-ascend/")],
            dist_layers={"vllm": 1, "vllm-ascend": 2})
        return f

    vendor = ('RUN |2 VLLM_REPO=https://github.com/vllm-project/vllm.git VLLM_TAG=v0.11.2 /bin/sh -c '
              'VLLM_TARGET_DEVICE="empty" python3 -m pip install -e /vllm-workspace/vllm/[audio] # buildkit')
    user = 'RUN /bin/sh -c VLLM_TARGET_DEVICE="empty" python3 -m pip install -e /vllm-workspace/vllm/[audio] # buildkit'
    for names, step, status in ((["quay.io/ascend/vllm-ascend:v0.11.0rc3-openeuler"], vendor, "info"),
                                (["registry.local/mine:1"], vendor, "info"),  # built on the official layers
                                (["quay.io/ascend/vllm-ascend:v0.11.0rc3-openeuler"], user, "fail"),
                                (["registry.local/mine:1"], user, "fail")):
        verdict = judge([Finding("vllm.version", FAIL, msg("vllm 0.11.2+empty does not match", "不配套"),
                                 observed="0.11.2+empty", expected="0.11.0")])
        verdict, judgement = judge_image(verdict, facts(names, step), official_images(m))
        assert verdict.findings[0].status == status, (names, step)
        if status == "info":
            assert "v0.11.0rc3-openeuler" in verdict.findings[0].title.text("en")
            assert "Dockerfile.openEuler" in verdict.findings[0].hint.text("en")


def test_an_archive_json_is_bounded_by_its_shape_and_strings_are_not_structure():
    """An image's manifest, index or config is parsed only within its shape (jsonshape): too many
    values is a LimitError naming the bound (50M of them would be a list of gigabytes), while
    commas, colons and brackets inside a string are data (100 MB of them in one string took a
    regex that skipped strings 52 s and 12 GB)."""
    import time

    with pytest.raises(oci.LimitError) as e:
        oci.load_json(b"[" + b"1," * (oci.MAX_JSON_VALUES + 5) + b"1]")
    assert e.value.bound == "json_values"
    with pytest.raises(oci.LimitError) as e:
        oci.load_json(b"[" * (oci.MAX_JSON_DEPTH + 1) + b"]" * (oci.MAX_JSON_DEPTH + 1))
    assert e.value.bound == "json_depth"
    start = time.process_time()
    doc = oci.load_json(b'{"a": "' + b",:[{" * 5_000_000 + b'", "b": [1, 2]}')
    assert doc["b"] == [1, 2] and time.process_time() - start < 5
    assert oci.load_json(b"not json") is None
