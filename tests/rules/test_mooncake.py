"""doctor/rules/mooncake.py: which Mooncake is installed, its transport, the loader, config, env,
serve command and master, from plain facts (the ELF and network parts already read)."""
import pytest

from doctor.facts import ElfFacts, HttpFact, LibLookup, MasterFacts, MooncakeDist, MooncakeFacts
from doctor.rules import mooncake as rules

from .build import absent, context, dist, expect, facts, judge, matrix, packages, python, release, stack

SITE = "/env/lib/python3.11/site-packages"
PKG = f"{SITE}/mooncake"
PIP_ROW = release(vllm_ascend="0.23.0", mooncake="0.3.11.post1", mooncake_install="pip")
SOURCE_ROW = release()  # 0.11.0rc3 images build Mooncake 0.3.7.post2 from source
STORE = ("vllm serve m --kv-transfer-config "
         "'{\"kv_connector\": \"MooncakeConnectorStoreV1\", \"kv_role\": \"kv_both\"}'")


def wheel(version="0.3.11.post1", name="mooncake-transfer-engine-npu", owns=True):
    return MooncakeDist(name=name, version=version, location=SITE, installer="pip", owns_package=owns)


def ascend_elf():
    return [ElfFacts(path=f"{PKG}/engine.cpython-311-x86_64-linux-gnu.so", needed=["libtransfer_engine.so"]),
            ElfFacts(path=f"{PKG}/ascend_transport.so", needed=["libascendcl.so", "libllm_datadist.so", "libc.so.6"])]


def mooncake(**kw) -> MooncakeFacts:
    base = dict(dists=[wheel()], package_dir=PKG, package_dirs=[PKG], version="0.3.11.post1", version_source="dist",
                elf=ascend_elf(), lookups=[
                    LibLookup("libtransfer_engine.so", f"{PKG}/engine.cpython-311-x86_64-linux-gnu.so",
                              found=f"{PKG}/libtransfer_engine.so", how="RUNPATH"),
                    LibLookup("ascend_transport.so", f"{PKG}/libtransfer_engine.so", found=f"{PKG}/ascend_transport.so",
                              how="RUNPATH"),
                    LibLookup("libascendcl.so", f"{PKG}/ascend_transport.so",
                              found="/usr/local/Ascend/ascend-toolkit/latest/lib64/libascendcl.so", how="LD_LIBRARY_PATH")])
    base.update(kw)
    return MooncakeFacts(**base)


def ctx_with(m=None, row=PIP_ROW, stage="runtime", **facts_kw):
    dists = stack(vllm_ascend=row.vllm_ascend if row else "0.11.0rc3")
    return context(facts(mooncake=m, packages=packages(dists), **facts_kw), m=matrix([row] if row else []),
                   row=row, stage=stage)


# -- installed --------------------------------------------------------------------------------------------


def test_npu_wheel_of_the_release_is_ok():
    f = expect(judge(rules.mooncake_installed, ctx_with(mooncake())), "mooncake.installed", "ok")
    assert "(pip is enough)" in f.title.text("en") and f.expected == "0.3.11.post1"


def test_older_npu_wheel_warns_with_the_pip_remedy():
    f = expect(judge(rules.mooncake_installed, ctx_with(mooncake(dists=[wheel("0.3.10")], version="0.3.10"))),
               "mooncake.installed", "warn")
    assert [c.shell() for c in f.commands] == ["/env/bin/python -m pip install mooncake-transfer-engine-npu==0.3.11.post1"]
    assert f.fixable == "auto"


def test_newer_wheel_than_a_source_release_is_information():
    f = expect(judge(rules.mooncake_installed, ctx_with(mooncake(), row=SOURCE_ROW)), "mooncake.installed", "info")
    assert "build Mooncake v0.3.7.post2 from source" in f.title.text("en")


def test_a_generic_wheel_without_the_ascend_transport_fails():
    m = mooncake(dists=[wheel("0.3.9", name="mooncake-transfer-engine")],
                 elf=[ElfFacts(path=f"{PKG}/engine.so", needed=["libcudart.so.12"])])
    f = expect(judge(rules.mooncake_installed, ctx_with(m)), "mooncake.installed", "fail")
    assert [c.shell() for c in f.commands][0] == "/env/bin/python -m pip uninstall -y mooncake-transfer-engine"
    assert f.hint.text("en").startswith("remove mooncake-transfer-engine first")
    t = expect(judge(rules.mooncake_transport, ctx_with(m)), "mooncake.transport", "fail")
    assert t.blocked_by == "mooncake.installed" and t.observed == "cuda"


def test_two_builds_in_one_package_fail():
    m = mooncake(dists=[wheel(), wheel("0.3.9", name="mooncake-transfer-engine")])
    f = expect(judge(rules.mooncake_installed, ctx_with(m)), "mooncake.installed", "fail")
    assert " and " in f.title.text("en") and "、" in f.title.text("zh")


def test_not_installed():
    none = mooncake(dists=[], package_dir=None, package_dirs=[], version=None, elf=[], lookups=[])
    expect(judge(rules.mooncake_installed, ctx_with(none)), "mooncake.installed", "info")
    needed = ctx_with(mooncake(dists=[], package_dir=None, package_dirs=[], version=None, elf=[], lookups=[],
                               serve_args=STORE))
    f = expect(judge(rules.mooncake_installed, needed), "mooncake.installed", "fail")
    assert f.title.text("en").startswith("MooncakeConnectorStoreV1 needs Mooncake")
    configured = ctx_with(none, env={"MOONCAKE_CONFIG_PATH": "/etc/mooncake.json"})
    expect(judge(rules.mooncake_installed, configured), "mooncake.installed", "warn")
    absent(judge(rules.mooncake_installed, ctx_with(none, row=release(mooncake=None))), "mooncake.installed")


def test_installed_outside_sys_path_and_metadata_only():
    off = mooncake(dists=[], package_dir=None, package_dirs=[], off_path_dirs=["/cann/python/site-packages/mooncake"])
    f = expect(judge(rules.mooncake_installed, ctx_with(off)), "mooncake.installed", "warn")
    assert "export PYTHONPATH=/cann/python/site-packages:$PYTHONPATH" in f.hint.text("en")
    meta = mooncake(package_dir=None, package_dirs=[])
    f = expect(judge(rules.mooncake_installed, ctx_with(meta)), "mooncake.installed", "fail")
    assert f.commands[0].shell().endswith("--no-deps --force-reinstall mooncake-transfer-engine-npu==0.3.11.post1")


def test_source_builds():
    src = mooncake(dists=[], version="0.3.7.post2", version_source="mooncake_master --version")
    f = expect(judge(rules.mooncake_installed, ctx_with(src, row=SOURCE_ROW)), "mooncake.installed", "ok")
    assert f.title.text("zh").startswith("源码编译版本（版本 0.3.7.post2）")
    other = mooncake(dists=[], version="0.3.6")
    f = expect(judge(rules.mooncake_installed, ctx_with(other, row=SOURCE_ROW)), "mooncake.installed", "warn")
    assert f.commands[0].shell() == "ascend-doctor mooncake build --tag v0.3.7.post2 --python /env/bin/python"
    unknown = mooncake(dists=[], version=None)
    expect(judge(rules.mooncake_installed, ctx_with(unknown, row=SOURCE_ROW)), "mooncake.installed", "info")
    f = expect(judge(rules.mooncake_installed, ctx_with(other)), "mooncake.installed", "info")
    assert "pip is enough for this release" in f.title.text("en")


def test_old_glibc_needs_a_source_build():
    m = mooncake(dists=[wheel("0.3.10")], version="0.3.10")
    f = expect(judge(rules.mooncake_installed, ctx_with(m, python=python(glibc="2.31"))), "mooncake.installed", "warn")
    assert "glibc 2.31 < 2.35" in f.hint.text("en") and "mooncake build --tag v0.3.11.post1" in f.commands[0].shell()


def test_an_old_snapshot_is_judged_by_distribution_names():
    f = facts(packages=packages({**stack(vllm_ascend="0.23.0"),
                                 "mooncake-transfer-engine": dist("mooncake-transfer-engine", "0.3.9")}))
    found = expect(judge(rules.mooncake_installed, context(f, m=matrix([PIP_ROW]), row=PIP_ROW)), "mooncake.installed", "fail")
    assert "'Unsupported transport ascend'" in found.title.text("en")
    f = facts(packages=packages({**stack(), "mooncake-transfer-engine-npu": dist("mooncake-transfer-engine-npu", "0.3.11.post1")}))
    expect(judge(rules.mooncake_installed, context(f)), "mooncake.installed", "ok")
    assert judge(rules.mooncake_installed, context(facts(packages=None))) == []


# -- transport -----------------------------------------------------------------------------------------------


def test_transport():
    f = expect(judge(rules.mooncake_transport, ctx_with(mooncake())), "mooncake.transport", "ok")
    assert f.observed.endswith("ascend_transport.so")
    builtin = mooncake(elf=[ElfFacts(path=f"{PKG}/engine.so", needed=["libllm_datadist.so", "libascendcl.so"])])
    expect(judge(rules.mooncake_transport, ctx_with(builtin)), "mooncake.transport", "ok")
    unlinked = mooncake(elf=[ElfFacts(path=f"{PKG}/ascend_transport.so", needed=["libc.so.6"])])
    expect(judge(rules.mooncake_transport, ctx_with(unlinked)), "mooncake.transport", "fail")
    nothing = mooncake(elf=[])
    expect(judge(rules.mooncake_transport, ctx_with(nothing)), "mooncake.transport", "warn")
    legacy = mooncake(dists=[], elf=[ElfFacts(path="/usr/local/lib/libtransfer_engine.so", needed=["libhccl.so"])])
    f = expect(judge(rules.mooncake_transport, ctx_with(legacy)), "mooncake.transport", "fail")
    assert f.observed == "legacy-hccl"
    absent(judge(rules.mooncake_transport, ctx_with(mooncake(package_dir=None))), "mooncake.transport")


# -- loader path -------------------------------------------------------------------------------------------------


def test_loader_path():
    expect(judge(rules.mooncake_loader_path, ctx_with(mooncake())), "mooncake.loader_path", "ok")
    lost = [LibLookup("libtransfer_engine.so", f"{PKG}/engine.so", on_disk=["/usr/local/lib/libtransfer_engine.so"])]
    f = expect(judge(rules.mooncake_loader_path, ctx_with(mooncake(lookups=lost))), "mooncake.loader_path", "fail")
    assert f.hint.text("en").startswith("export LD_LIBRARY_PATH=/usr/local/lib:$LD_LIBRARY_PATH   (or for good")
    expect(judge(rules.mooncake_loader_path, ctx_with(mooncake(lookups=lost), stage="build")), "mooncake.loader_path", "warn")
    cann_lost = [LibLookup("libascendcl.so", f"{PKG}/ascend_transport.so",
                           on_disk=["/usr/local/Ascend/ascend-toolkit/latest/lib64/libascendcl.so"])]
    f = expect(judge(rules.mooncake_loader_path, ctx_with(mooncake(lookups=cann_lost))), "mooncake.loader_path", "fail")
    assert f.hint.text("en") == "source /usr/local/Ascend/ascend-toolkit/set_env.sh" and f.fixable == "manual"
    stale = mooncake(ld_missing_dirs=["/usr/local/mooncake/lib"])
    found = judge(rules.mooncake_loader_path, ctx_with(stale))
    assert [(x.id, x.status) for x in found] == [("mooncake.loader_path", "ok"), ("mooncake.loader_path", "info")]
    absent(judge(rules.mooncake_loader_path, ctx_with(mooncake(lookups=[]))), "mooncake.loader_path")


# -- config, env, serve args ------------------------------------------------------------------------------------

GOOD_CONFIG = ('{"metadata_server": "P2PHANDSHAKE", "protocol": "ascend", "device_name": "", '
               '"master_server_address": "10.0.0.2:50088", "global_segment_size": "64GB"}')


def test_config():
    m = mooncake(config_var="/etc/mooncake.json", config_found=True, config_text=GOOD_CONFIG,
                 mem_total_kb=512 * 1024 * 1024, mem_available_kb=400 * 1024 * 1024)
    found = judge(rules.mooncake_config, ctx_with(m))
    expect(found, "mooncake.config", "ok")
    missing = mooncake(config_var="/etc/mooncake.json", config_found=False, config_error="not found")
    f = expect(judge(rules.mooncake_config, ctx_with(missing)), "mooncake.config", "fail")
    assert f.title.text("en").startswith("MOONCAKE_CONFIG_PATH=/etc/mooncake.json: no such file;")
    assert str(f.observed) == "no such file"
    expect(judge(rules.mooncake_config, ctx_with(missing, stage="build")), "mooncake.config", "warn")
    absent(judge(rules.mooncake_config, ctx_with(mooncake())), "mooncake.config")


def test_config_too_big_for_the_host_fails():
    m = mooncake(config_var="/c.json", config_found=True, config_text=GOOD_CONFIG.replace("64GB", "600GB"),
                 mem_total_kb=512 * 1024 * 1024, mem_available_kb=400 * 1024 * 1024)
    found = judge(rules.mooncake_config, ctx_with(m))
    assert [x.status for x in found if x.id == "mooncake.config"][0] == "fail"


def test_env():
    found = judge(rules.mooncake_env, ctx_with(mooncake(), env={"ASCEND_BUFFER_POOL": "4x8"}))
    f = expect(found, "mooncake.env", "fail")
    assert f.hint.text("en").startswith("export ASCEND_BUFFER_POOL=4:8")
    expect(judge(rules.mooncake_env, ctx_with(mooncake(), env={"ASCEND_CONNECT_TIMEOUT": "10000"})), "mooncake.env", "ok")
    absent(judge(rules.mooncake_env, ctx_with(mooncake())), "mooncake.env")
    absent(judge(rules.mooncake_env, ctx_with(None)), "mooncake.env")


def test_serve_args():
    f = expect(judge(rules.mooncake_serve_args, ctx_with(mooncake(serve_args="vllm serve m", serve_args_source="x.sh"))),
               "mooncake.serve_args", "info")
    assert f.evidence == ["from x.sh"]
    m = mooncake(serve_args=STORE, serve_args_source="--serve-args",
                 connectors={"MooncakeConnectorStoreV1": "vllm_ascend.store"})
    found = judge(rules.mooncake_serve_args, ctx_with(m))
    assert "fail" in [x.status for x in found]  # MOONCAKE_CONFIG_PATH is not set
    absent(judge(rules.mooncake_serve_args, ctx_with(mooncake())), "mooncake.serve_args")


# -- master ------------------------------------------------------------------------------------------------------


READY = '{"status":"ok","role":"leader","ha_state":"leader","service_ready":true}'


def master(**kw):
    base = dict(address="10.0.0.2:50088", source="--mooncake-master", host="10.0.0.2", port=50088,
                metrics_url="http://10.0.0.2:9003", tcp_ok=True, tcp_ms=1.0,
                health=HttpFact(url="http://10.0.0.2:9003/health", status=200, body=READY))
    base.update(kw)
    return MasterFacts(**base)


def test_master():
    f = expect(judge(rules.mooncake_master, ctx_with(mooncake(master=master()))), "mooncake.master", "ok")
    assert "service_ready=True" in f.title.text("en")
    plain = judge(rules.mooncake_master, ctx_with(mooncake(master=master(health=HttpFact(url="u", status=200, body="OK")))))
    assert [x.status for x in plain] == ["ok", "info"]  # a master older than this 0.3.11 client
    assert 'plain "OK"' in plain[0].title.text("en")
    f = expect(judge(rules.mooncake_master, ctx_with(mooncake(master=master(tcp_ok=False, tcp_error="connection refused",
                                                                          health=HttpFact(url="u", error="refused"))))),
               "mooncake.master", "fail")
    assert "refuses connections" in f.title.text("en") and "mooncake_master --port 50088" in f.hint.text("en")
    expect(judge(rules.mooncake_master, ctx_with(mooncake(master=master(error="not host:port")))), "mooncake.master", "fail")
    standby = HttpFact(url="u", status=200, body='{"status":"ok","role":"standby","ha_state":"standby","service_ready":false}')
    expect(judge(rules.mooncake_master, ctx_with(mooncake(master=master(health=standby)))), "mooncake.master", "warn")
    absent(judge(rules.mooncake_master, ctx_with(mooncake())), "mooncake.master")


def test_master_storage_nearly_full_warns():
    metrics = HttpFact(url="u/metrics", status=200,
                       body="master_total_capacity_bytes 100\nmaster_allocated_bytes 96\nmaster_key_count 3\n")
    found = judge(rules.mooncake_master, ctx_with(mooncake(master=master(metrics=metrics))))
    assert [(x.status) for x in found] == ["ok", "warn"]
    assert "nearly full" in found[1].title.text("en")


# -- the part of the probe that failed ------------------------------------------------------------------------


def test_probe_errors():
    f = expect(judge(rules.mooncake_probe_errors, ctx_with(mooncake(errors=["elf: permission denied"]))),
               "mooncake.probe_error", "warn")
    assert f.observed == "elf: permission denied"
    absent(judge(rules.mooncake_probe_errors, ctx_with(mooncake())), "mooncake.probe_error")


@pytest.mark.parametrize("check", [rules.mooncake_installed, rules.mooncake_transport, rules.mooncake_loader_path,
                                   rules.mooncake_config, rules.mooncake_serve_args, rules.mooncake_master])
def test_no_mooncake_facts_no_findings_beyond_installed(check):
    found = judge(check, ctx_with(None, row=release(mooncake=None)))
    assert found == []


def test_mooncake_without_the_python_and_packages_sections():
    # a snapshot whose python and packages probes crashed: the remedies still name an interpreter
    ctx = context(facts(mooncake=mooncake(version="0.3.10"), python=None, packages=None), m=matrix([PIP_ROW]), row=PIP_ROW)
    found = [f for r in rules.RULES for f in r.check(ctx)]
    f = expect(found, "mooncake.installed", "warn")
    assert any("pip install mooncake-transfer-engine-npu==0.3.11.post1" in c.shell() for c in f.commands)
    expect(found, "mooncake.transport", "ok")
    ctx = context(facts(mooncake=mooncake(package_dir=None, package_dirs=[], dists=[]), python=None, packages=None),
                  m=matrix([SOURCE_ROW]), row=SOURCE_ROW)
    f = expect([f for r in rules.RULES for f in r.check(ctx)], "mooncake.installed", "info")
    assert any("ascend-doctor mooncake build --tag v0.3.7.post2" in c.shell() for c in f.commands), f.commands


def test_a_builtin_transport_needs_ascendcl_and_its_strings():
    def state(**elf):
        return rules.transport_state(MooncakeFacts(elf=[ElfFacts("/usr/local/lib/libtransfer_engine.so", **elf)]))[0]

    assert state(needed=["libascendcl.so"], ascend_strings=True) == "ascend-builtin"
    assert state(needed=["libascendcl.so"]) == "none"  # ACL alone: any NPU code links it
    assert state(needed=["libhixl.so"]) == "ascend-builtin"
