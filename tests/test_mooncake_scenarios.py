"""`ascend-doctor check`, layer mooncake, on fake Ascend hosts with real ELF files: the NPU wheel,
a generic (CUDA) wheel, source builds with and without the Ascend transport, the loader path,
seed 001's config and serve command."""
from __future__ import annotations

import json
import sys
import shutil
import subprocess
from pathlib import Path

import pytest
from fakehost import finding
from fakehost.mooncake import CC, ElfKit, cann_libs, generic_wheel, make_install, meminfo, npu_wheel
from fakehost.scenarios import ascend_host

DATA = Path(__file__).parent / "data" / "mooncake"
CANN_SITE = "/usr/local/Ascend/ascend-toolkit/latest/python/site-packages"


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    if CC is None:
        pytest.skip("no C compiler to build the test libraries")
    return ElfKit(tmp_path_factory.mktemp("mooncake-kit"))



def shells(f):
    """A JSON finding's commands, as printed."""
    return [c["shell"] for c in f.get("commands", [])]

def test_npu_wheel_on_a_pip_release_is_ok(fake, kit):
    ascend_host(fake, "0.23.0", container=False)
    cann_libs(fake, kit)
    npu_wheel(fake, kit, "0.3.11.post1")
    doc = fake.judge()
    inst = finding(doc, "mooncake.installed")
    assert inst["status"] == "ok" and "pip is enough" in inst["title"] and inst["expected"] == "0.3.11.post1"
    t = finding(doc, "mooncake.transport")
    assert t["status"] == "ok" and t["observed"].endswith("site-packages/mooncake/ascend_transport.so")
    assert "libllm_datadist.so" in t["title"]
    lp = finding(doc, "mooncake.loader_path")
    assert lp["status"] == "ok"
    assert any("ascend_transport.so -> " in e and "(RUNPATH)" in e for e in lp["evidence"])
    assert any("libascendcl.so -> /usr/local/Ascend/" in e and "(LD_LIBRARY_PATH)" in e for e in lp["evidence"])
    assert not [f for f in doc["findings"] if f["layer"] == "mooncake" and f["status"] in ("warn", "fail")]


@pytest.mark.parametrize("release,wheel,words", [
    ("0.23.0", "0.3.12.post1", "but vllm-ascend 0.23.0 is tested with 0.3.11.post1"),
    ("0.22.1rc1", "0.3.11.post1", "images build Mooncake v0.3.9 from source; the NPU wheel is newer"),
])
def test_npu_wheel_other_than_the_row(fake, kit, release, wheel, words):
    ascend_host(fake, release)
    cann_libs(fake, kit)
    npu_wheel(fake, kit, wheel)
    f = finding(fake.judge(), "mooncake.installed")
    assert f["status"] == "info" and words in f["title"]


def test_cuda_wheel_is_the_root_cause(fake, kit):
    ascend_host(fake, "0.22.1rc1")
    cann_libs(fake, kit)
    generic_wheel(fake, kit, "mooncake-transfer-engine", "0.3.9")
    doc = fake.judge()
    inst = finding(doc, "mooncake.installed")
    assert inst["status"] == "fail" and inst["root_cause"] and "not the Ascend build" in inst["title"]
    assert shells(inst) == [f"{sys.executable} -m pip --python {fake.python} uninstall -y mooncake-transfer-engine",
                            f"ascend-doctor mooncake build --tag v0.3.9 --python {fake.python}"]  # in this order
    assert "no NPU wheel exists for 0.3.9" in inst["hint"]
    t = finding(doc, "mooncake.transport")
    assert t["status"] == "fail" and t["observed"] == "cuda" and "libcudart.so.12" in t["title"]
    assert t["blocked_by"] == "mooncake.installed"
    assert doc["exit_code"] == 3


def test_non_cuda_wheel_on_a_pip_release_points_at_the_npu_wheel(fake, kit):
    ascend_host(fake, "0.23.0")
    cann_libs(fake, kit)
    generic_wheel(fake, kit, "mooncake-transfer-engine-non-cuda", "0.3.12.post1")
    doc = fake.judge()
    inst = finding(doc, "mooncake.installed")
    assert inst["status"] == "fail" and shells(inst)[-1].endswith(" install mooncake-transfer-engine-npu==0.3.11.post1")


def test_source_build_without_the_ascend_transport(fake, kit):
    ascend_host(fake, "0.18.0")
    cann_libs(fake, kit)
    make_install(fake, kit, ascend=False)
    fake.env["LD_LIBRARY_PATH"] = "/usr/local/lib:" + fake.env["LD_LIBRARY_PATH"]
    doc = fake.judge()
    inst = finding(doc, "mooncake.installed")
    assert inst["status"] == "info" and "source build (version unknown)" in inst["title"]
    # the root's mooncake_master is never run (issue 10): no `--version` evidence from it
    assert not any("mooncake_master --version" in e for e in inst["evidence"])
    t = finding(doc, "mooncake.transport")
    assert t["status"] == "fail" and t["observed"] == "none" and "built without USE_ASCEND_DIRECT" in t["title"]
    assert "Unsupported transport ascend" in t["title"]
    assert shells(t) == [f"ascend-doctor mooncake build --tag v0.3.9 --python {fake.python}"]
    assert t["root_cause"]


def test_cuda_and_npu_wheels_in_one_package(fake, kit):
    ascend_host(fake, "0.23.0")
    cann_libs(fake, kit)
    npu_wheel(fake, kit)
    generic_wheel(fake, kit, "mooncake-transfer-engine", "0.3.11")  # pip overwrote engine*.so
    f = finding(fake.judge(), "mooncake.installed")
    assert f["status"] == "fail" and "are both installed into" in f["title"]
    assert shells(f)[0].endswith(" uninstall -y mooncake-transfer-engine mooncake-transfer-engine-npu")


def test_stray_transport_from_an_older_build_is_not_counted(fake, kit):
    """A TCP-only make install over an older ASCEND_DIRECT one: /usr/local/lib still holds
    ascend_transport.so, but nothing the new engine loads needs it."""
    ascend_host(fake, "0.18.0")
    cann_libs(fake, kit)
    fake.p("/usr/local/lib").mkdir(parents=True)
    shutil.copy2(kit.src_ascend / "lib" / "ascend_transport.so", fake.p("/usr/local/lib/ascend_transport.so"))
    make_install(fake, kit, ascend=False)
    fake.env["LD_LIBRARY_PATH"] = "/usr/local/lib:" + fake.env["LD_LIBRARY_PATH"]
    t = finding(fake.judge(), "mooncake.transport")
    assert t["status"] == "fail" and t["observed"] == "none"


def test_source_build_with_version_from_mooncake_master(fake, kit):
    """On the live host, `mooncake_master --version` gives a make install's version; inside
    --root the binary is never run (listed in not_run) and the version stays unknown."""
    from doctor.facts import Facts, HostFacts, MooncakeFacts
    from doctor.probes.mooncake import MooncakeOptions, _version
    from doctor.shell.host.root import Host

    ascend_host(fake, "0.18.0")
    cann_libs(fake, kit)
    make_install(fake, kit, master_output="mooncake_master version 0.3.11.post1 (git: e9c6107)\n")
    fake.env["LD_LIBRARY_PATH"] = "/usr/local/lib:" + fake.env["LD_LIBRARY_PATH"]
    doc = fake.judge()
    inst = finding(doc, "mooncake.installed")
    assert inst["status"] == "info" and "version unknown" in inst["title"]
    assert finding(doc, "mooncake.transport")["status"] == "ok"
    assert finding(doc, "mooncake.loader_path")["status"] == "ok"

    def probe(host):
        m = MooncakeFacts(package_dir="/x/mooncake")
        facts = Facts(tool_version="t", collected_at="t", host=HostFacts(root="/", cwd="/", uid=0, gids=[]))
        _version(m, host, facts, MooncakeOptions())
        return m, facts

    m, facts = probe(Host(root=str(fake.root), env={"PATH": "/usr/local/bin"}))
    assert m.version is None and facts.not_run == ["/usr/local/bin/mooncake_master"]
    live_bin = str(fake.p("/usr/local/bin"))
    m, facts = probe(Host(env={"PATH": live_bin + ":/usr/bin:/bin"}))  # the live host: its own binary runs
    assert (m.version, m.version_source) == ("0.3.11.post1", "mooncake_master --version") and not facts.not_run


def test_loader_path_missing_usr_local_lib(fake, kit):
    ascend_host(fake, "0.22.1rc1")
    cann_libs(fake, kit)
    make_install(fake, kit)
    doc = fake.judge()
    f = finding(doc, "mooncake.loader_path")
    assert f["status"] == "fail" and "is in /usr/local/lib, which is neither on LD_LIBRARY_PATH nor in the ld.so cache" in f["title"]
    assert "export LD_LIBRARY_PATH=/usr/local/lib:$LD_LIBRARY_PATH" in f["hint"] and "ldconfig" in f["hint"]
    assert finding(doc, "mooncake.transport")["status"] == "ok"  # the build itself is right


@pytest.mark.skipif(shutil.which("ldconfig") is None and not Path("/sbin/ldconfig").exists(), reason="no ldconfig")
def test_ldconfig_does_not_cache_ascend_transport(fake, kit):
    """The usual advice run for real (ld.so.conf.d + ldconfig inside the fake root): it caches
    libtransfer_engine.so, but not ascend_transport.so, whose name does not start with "lib":
    exactly vllm-ascend #6949's 'ascend_transport.so: cannot open shared object file'."""
    ascend_host(fake, "0.22.1rc1")
    cann_libs(fake, kit)
    make_install(fake, kit)
    fake.write("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n")
    fake.write("/etc/ld.so.conf.d/mooncake.conf", "/usr/local/lib\n")
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    subprocess.run([ldconfig, "-r", str(fake.root)], check=True, capture_output=True, timeout=60)
    doc = fake.judge()
    f = finding(doc, "mooncake.loader_path")
    assert f["status"] == "fail" and f["title"].startswith("ascend_transport.so is in /usr/local/lib")
    assert "ldconfig ignores ascend_transport.so" in f["hint"]
    fake.env["LD_LIBRARY_PATH"] = "/usr/local/lib:" + fake.env["LD_LIBRARY_PATH"]
    f = finding(fake.judge(), "mooncake.loader_path")
    assert f["status"] == "ok"
    assert "libtransfer_engine.so -> /usr/local/lib/libtransfer_engine.so (LD_LIBRARY_PATH)" in f["evidence"]


def test_loader_path_cann_not_sourced(fake, kit):
    ascend_host(fake, "0.23.0")
    cann_libs(fake, kit)
    npu_wheel(fake, kit)
    fake.env["LD_LIBRARY_PATH"] = "/usr/local/Ascend/driver/lib64/common/:/usr/local/Ascend/driver/lib64/driver/"
    doc = fake.judge()
    f = finding(doc, "mooncake.loader_path")
    assert f["status"] == "fail" and "libascendcl.so" in f["title"] and "set_env.sh is not sourced" in f["title"]
    assert f["hint"].startswith("source /usr/local/Ascend/cann")


def test_loader_path_llm_datadist_missing_from_cann(fake, kit):
    ascend_host(fake, "0.23.0")
    cann_libs(fake, kit, names=("libascendcl.so", "libmetadef.so"))
    npu_wheel(fake, kit)
    doc = fake.judge()
    f = finding(doc, "mooncake.loader_path")
    assert f["status"] == "fail" and "libllm_datadist.so is missing from CANN" in f["title"] and f["fixable"] == "vendor"


def test_build_stage_makes_loader_problems_warnings(fake, kit):
    fake.toolkit("8.3.RC2").sourced(driver=False)
    from fakehost.scenarios import release_packages

    fake.venv(release_packages("0.22.1rc1"))
    cann_libs(fake, kit)
    make_install(fake, kit)
    fake.env["MOONCAKE_CONFIG_PATH"] = "/etc/mooncake/mooncake.json"  # mounted only when the container runs
    doc = fake.judge()
    assert doc["stage"] == "build" and finding(doc, "mooncake.loader_path")["status"] == "warn"
    assert finding(doc, "mooncake.config")["status"] == "warn"


def test_installed_under_cann_site_packages_but_not_on_sys_path(fake, kit):
    ascend_host(fake, "0.13.0")
    cann_libs(fake, kit)
    make_install(fake, kit, site=fake.p(CANN_SITE))
    doc = fake.judge()
    f = finding(doc, "mooncake.installed")
    assert f["status"] == "warn" and f"installed into {CANN_SITE}" in f["title"]
    assert f"export PYTHONPATH={CANN_SITE}:$PYTHONPATH" in f["hint"]


def seed001(fake, kit, tmp_path):
    """The 0.11.0rc3 image of seed 001: Mooncake v0.3.7.post2 built into CANN's site-packages
    (on PYTHONPATH through set_env.sh), the seed's mooncake.json and launch script."""
    ascend_host(fake, "0.11.0rc3")
    cann_libs(fake, kit)
    make_install(fake, kit, site=fake.p(CANN_SITE), layout=kit.src_v037)
    fake.env["PYTHONPATH"] = CANN_SITE
    fake.write("/opt/files/src/kv-cache/conf/mooncake_vllm.json", (DATA / "seed001_mooncake_first.json").read_text())
    meminfo(fake, total_gb=1536, available_gb=1400)
    script = tmp_path / "launch.sh"
    shutil.copy(DATA / "seed001_launch.sh", script)
    return script


def test_seed_001_config_and_serve_command(fake, kit, tmp_path):
    script = seed001(fake, kit, tmp_path)
    doc = fake.judge(serve_args_file=str(script))
    inst = finding(doc, "mooncake.installed")
    assert inst["status"] == "info" and f"in {CANN_SITE}" in inst["title"] and inst["expected"] == "0.3.7.post2"
    t = finding(doc, "mooncake.transport")
    assert t["status"] == "ok" and "v0.3.7 layout" in t["title"]
    assert finding(doc, "mooncake.loader_path")["status"] == "ok"
    cfg = [f for f in doc["findings"] if f["id"] == "mooncake.config"]
    assert cfg[0]["status"] == "fail" and "'xxxxxxx:50088' is a placeholder" in cfg[0]["title"]
    assert any(f["status"] == "info" and "local_hostname" in f["title"] for f in cfg)
    env = {f["title"] for f in doc["findings"] if f["id"] == "mooncake.env"}
    assert {"ASCEND_BUFFER_POOL=4:8: 4 buffers of 8 MB", "ASCEND_CONNECT_TIMEOUT=10000 ms",
            "ASCEND_TRANSFER_TIMEOUT=10000 ms"} <= env
    serve = [f for f in doc["findings"] if f["id"] == "mooncake.serve_args"]
    assert serve[0]["status"] == "ok" and "MooncakeConnectorStoreV1 as kv_both" in serve[0]["title"]
    assert any("connectors read from" in e and "vllm_ascend/distributed/__init__.py" in e for e in serve[0]["evidence"])
    assert not [f for f in doc["findings"] if f["id"] == "mooncake.master"]  # a placeholder is not probed
    assert doc["summary"]["root_cause"] == "mooncake.config"


def test_seed_001_segment_too_big_for_this_host(fake, kit, tmp_path):
    script = seed001(fake, kit, tmp_path)
    meminfo(fake, total_gb=32)
    doc = fake.judge(serve_args_file=str(script))
    cfg = [f for f in doc["findings"] if f["id"] == "mooncake.config"]
    assert any(f["status"] == "fail" and "58.18 GB" in f["title"] and "32.00 GB" in f["title"] for f in cfg)


def test_store_connector_without_mooncake_installed(fake):
    ascend_host(fake, "0.22.1rc1")
    doc = fake.judge(serve_args=(DATA / "seed003_launch.sh").read_text())
    f = finding(doc, "mooncake.installed")
    assert f["status"] == "fail" and "MooncakeConnectorStoreV1 needs Mooncake" in f["title"]
    assert shells(f)[0].startswith("ascend-doctor mooncake build --tag v0.3.9")
    cfg = finding(doc, "mooncake.config")  # /vllm-workspace/mooncake.json from the script's export
    assert cfg["status"] == "fail" and "MOONCAKE_CONFIG_PATH=/vllm-workspace/mooncake.json: no such file" in cfg["title"]


def test_unknown_connector_for_the_installed_vllm_ascend(fake):
    ascend_host(fake, "0.13.0")
    doc = fake.judge(serve_args="vllm serve /m --kv-transfer-config "
                                "'{\"kv_connector\": \"MooncakeHybridConnector\", \"kv_role\": \"kv_producer\"}'")
    f = finding(doc, "mooncake.serve_args")
    assert f["status"] == "fail" and "not registered by the installed vllm-ascend 0.13.0" in f["title"]
    assert "AscendStoreConnector" in f["hint"]


def test_snapshot_keeps_the_mooncake_verdict(fake, kit, tmp_path):
    from doctor.usecases.check import CheckOptions, gather, run_check, snapshot_json

    script = seed001(fake, kit, tmp_path)
    opts = dict(root=str(fake.root), python=str(fake.python), cwd=str(fake.workdir), serve_args_file=str(script))
    direct = fake.judge(serve_args_file=str(script))
    snap = tmp_path / "snap.json"
    snap.write_text(snapshot_json(gather(CheckOptions(**opts), env=dict(fake.env))))
    assert json.loads(snap.read_text())["mooncake"]["serve_args_source"] == str(script)
    replay = run_check(CheckOptions(snapshot=str(snap)))
    assert [(f.id, f.status, f.title.text("en")) for f in replay.verdict.findings if f.layer == "mooncake"] == \
        [(f["id"], f["status"], f["title"]) for f in direct["findings"] if f["layer"] == "mooncake"]


@pytest.mark.parametrize("args,words", [
    (("--serve-args-file", "/nonexistent/launch.sh"), "--serve-args-file /nonexistent/launch.sh: no such file"),
    (("--mooncake-master", "not-an-address"), "--mooncake-master 'not-an-address'"),
    (("--serve-args", "vllm serve m", "--serve-args-file", __file__), "either --serve-args or --serve-args-file"),
])
def test_bad_options_are_one_line_usage_errors(fake, args, words):
    fake.toolkit("8.3.RC2")
    proc = fake.run("check", *args)
    assert proc.returncode == 2 and words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_check_command_line_with_mooncake_options(fake, kit, tmp_path):
    script = seed001(fake, kit, tmp_path)
    proc = fake.run("check", "--serve-args-file", str(script))
    assert proc.returncode == 3, proc.stderr
    assert "mooncake.config" in proc.stdout and "placeholder" in proc.stdout
