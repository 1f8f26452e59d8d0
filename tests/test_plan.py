"""The fix plan as a pure function of check's facts, findings and the matrix (no pip runs here)."""
import pytest
from fakehost import official_image
from fakehost.dists import NVIDIA_FOR_TORCH, Stub
from fakehost.scenarios import ascend_host

from doctor.usecases.check import CheckOptions, gather
from doctor.errors import UsageError
from doctor.shell.install.installer import Installer, choose, uv_flags
from doctor.shell.install.index import pip_index_config
from doctor.plan.builder import (
    TORCH_CPU_INDEX,
    PlanOptions,
    constraints_text,
    plan_for,
    requirements_text,
    unmet_requirements,
)
from doctor.rules.engine import make_context, run_rules
from shipped import matrix as shipped_matrix

MATRIX = shipped_matrix()
PIP = Installer("pip", "/env/bin/python", ("/env/bin/python", "-m", "pip"))
MIRROR = "https://mirrors.huaweicloud.com/ascend/repos/pypi"


def facts_of(fake):
    return gather(CheckOptions(root=str(fake.root), python=str(fake.python), cwd=str(fake.workdir),
                               npu_smi=fake.npu_smi_binary()), env=dict(fake.env))


def plan_of(facts, installer=PIP, **kw):
    ctx = make_context(facts, MATRIX, "auto")
    opts = PlanOptions(installer=installer, doctor_python="/doctor/bin/python", constraint_file="/env/.ascend-doctor/constraints.txt",
                       src_dir="/env/.ascend-doctor/src", **kw)
    return plan_for(facts, MATRIX, lambda v: run_rules(make_context(facts, MATRIX, "auto", v)), ctx.hardware, opts)


def plan(fake, **kw):
    return plan_of(facts_of(fake), **kw)


def runs(p):
    return [s for s in p.steps if s.runs]


def test_healthy_environment_gives_an_empty_plan(fake):
    ascend_host(fake, "0.11.0rc3")
    p = plan(fake)
    assert p.steps == [] and p.empty
    assert p.pins == {"torch": "2.7.1+cpu", "torchvision": "0.22.1", "torch-npu": "2.7.1", "vllm": "0.11.0",
                      "vllm-ascend": "0.11.0rc3", "numpy": "1.26.4", "transformers": "4.57.1"}
    assert p.to_json()["steps"] == []


def test_seed_001_replaces_only_vllm(fake, tmp_path):
    ascend_host(fake, "0.11.0rc3")
    fake.install(official_image(workspace=tmp_path / "ws"))
    p = plan(fake)
    steps = runs(p)
    assert [(s.action, s.removes or s.packages or s.requirements_of) for s in steps] == [
        ("remove", ["vllm"]), ("install", ["vllm==0.11.0"]), ("requirements", ["vllm==0.11.0"])]
    assert steps[1].argv == ["/env/bin/python", "-m", "pip", "install", "--no-deps", "vllm==0.11.0"]
    assert "editable at" in steps[0].why.text("en") and "cannot be downloaded again" in steps[0].why.text("en")
    assert p.pins["vllm"] == "0.11.0" and p.pins["torch"] == "2.7.1+cpu"
    assert "torch" in steps[2].exclude and "xformers" in steps[2].exclude
    doc = p.to_json("zh")
    assert doc["target"] == {"vllm-ascend": "0.11.0rc3"} and "不配套" in doc["steps"][0]["why"]
    assert any("torch-npu 2.7.1" in r and "2.7.1.post1" in r for r in doc["expected_residual"])
    assert any(a.get("vllm_from") == "source" and "VLLM_TARGET_DEVICE=empty" in a["how"] for a in doc["alternatives"])


def test_torch_moved_by_vllm_goes_back_to_the_cpu_build(fake):
    ascend_host(fake, "0.11.0rc3", torch="2.8.0+cpu", torchvision="0.23.0+cpu")
    facts = facts_of(fake)
    facts.python.machine = "x86_64"
    steps = runs(plan_of(facts))
    assert len(steps) == 1
    assert steps[0].packages == ["torch==2.7.1+cpu", "torchvision==0.22.1+cpu"]
    assert steps[0].argv[-2:] == ["--extra-index-url", TORCH_CPU_INDEX]


def test_aarch64_takes_torch_from_the_default_index(fake):
    ascend_host(fake, "0.11.0rc3", torch="2.8.0")
    facts = facts_of(fake)
    facts.python.machine = "aarch64"
    steps = runs(plan_of(facts))
    assert steps[0].packages[0] == "torch==2.7.1" and steps[0].extra_index_urls == []
    assert "--extra-index-url" not in steps[0].argv


def test_cuda_torch_and_nvidia_are_removed_first(fake):
    nvidia = {n: v for n, v in (r.split("==") for r in NVIDIA_FOR_TORCH["2.7.1"])}
    ascend_host(fake, "0.11.0rc3", torch=Stub("torch", "2.7.1", cuda="12.6"), **nvidia)
    steps = runs(plan(fake))
    assert steps[0].action == "remove" and steps[0].removes[0] == "torch"
    assert sorted(steps[0].removes[1:]) == sorted(nvidia)
    assert steps[0].argv[:5] == ["/env/bin/python", "-m", "pip", "uninstall", "-y"]
    import platform

    want = "torch==2.7.1+cpu" if platform.machine() == "x86_64" else "torch==2.7.1"
    assert steps[1].packages[0] == want


def test_mainline_triton_goes_and_triton_ascend_is_reinstalled(fake):
    ascend_host(fake, "0.13.0", triton="3.4.0", transformers="4.57.4")
    steps = runs(plan(fake))
    assert steps[0].removes == ["triton"] and "shares the 'triton' package" in steps[0].why.text("en")
    assert steps[1].packages == ["triton-ascend==3.2.0"] and "--no-deps" in steps[1].argv


def test_numpy_2_is_brought_back_under_the_pins(fake):
    ascend_host(fake, "0.11.0rc3", numpy="2.1.0")
    steps = runs(plan(fake))
    assert len(steps) == 1 and steps[0].packages == ["numpy<2.0.0"] and not steps[0].no_deps
    assert steps[0].argv[-3:] == ["--constraint", "/env/.ascend-doctor/constraints.txt", "numpy<2.0.0"]


def test_fresh_install_picks_the_newest_release_for_this_cann(fake):
    ascend_host(fake, "0.11.0rc3", **{n: None for n in ("torch", "torch-npu", "torchvision", "vllm", "vllm-ascend",
                                                          "numpy", "transformers")})
    p = plan(fake)
    assert p.choice == "fresh" and p.target == "0.13.0rc1" and "CANN 8.3.RC2" in p.choice_why.text("en")
    order = [s.packages[0].split("=")[0].split("<")[0] for s in runs(p) if s.action == "install"]
    assert order == ["torch", "torch-npu", "vllm", "vllm-ascend", "numpy"]
    assert runs(p)[-1].requirements_of == ["vllm==0.13.0", "vllm-ascend==0.13.0rc1"]


def test_target_upgrade_and_downgrade(fake):
    ascend_host(fake, "0.12.0rc1")
    up = plan(fake, target="0.13.0rc1")
    assert up.choice == "target" and up.pins["vllm"] == "0.13.0" and up.pins["transformers"] == ">=4.57.3"
    assert [s.packages for s in runs(up) if s.action == "install"][:2] == [["vllm==0.13.0"], ["vllm-ascend==0.13.0rc1"]]
    down = plan(fake, target="0.11.0")
    npu = next(s for s in runs(down) if s.packages and s.packages[0].startswith("torch-npu"))
    # the .post1 build the row recommends, from the extra index the matrix names for it
    assert npu.packages == ["torch-npu==2.7.1.post1"] and npu.extra_index_urls == [MIRROR]
    with pytest.raises(UsageError, match="not in the matrix"):
        plan(fake, target="0.99.0")


def test_cann_too_old_prefers_the_way_without_a_vendor_install(fake):
    ascend_host(fake, "0.13.0", cann="8.3.RC2", transformers="4.57.4")
    p = plan(fake)
    assert p.choice == "keep-cann" and p.target == "0.13.0rc1"
    assert p.alternatives[0]["prefer"] == "keep-release" and "CANN 8.3.RC2 is older than 8.5.0" in str(p.alternatives[0]["needs"][0])
    assert not [s for s in p.steps if s.kind == "vendor"]
    keep = plan(fake, prefer="keep-release")
    assert keep.choice == "keep-release" and keep.target == "0.13.0"
    vendor = [s for s in keep.steps if s.kind == "vendor"]
    assert vendor and "Ascend-cann-toolkit_8.5.0" in str(vendor[0].hint) and vendor[0].argv is None
    assert vendor[0].command is None  # words: a vendor package is downloaded first, no command runs as printed
    assert keep.alternatives[0] == {"prefer": "keep-cann", "target": "0.13.0rc1", "needs": []}
    with pytest.raises(UsageError, match="--prefer"):
        plan(fake, prefer="newest")


def test_manual_steps_are_listed_never_run(fake):
    ascend_host(fake, "0.11.0rc3")
    for var in ("LD_LIBRARY_PATH", "ASCEND_OPP_PATH", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ATB_HOME_PATH"):
        fake.env.pop(var)
    p = plan(fake)
    manual = [s for s in p.steps if s.kind == "manual"]
    assert [s.command for s in manual][:2] == ["source /usr/local/Ascend/ascend-toolkit/set_env.sh",
                                              "source /usr/local/Ascend/nnal/atb/set_env.sh"]
    assert runs(p) == [] and all(s.to_json()["command"] for s in manual)


def test_mooncake_source_build_runs_our_own_cli(fake):
    ascend_host(fake, "0.11.0rc3")
    p = plan(fake, with_mooncake=True)
    build = runs(p)[0]
    assert build.kind == "build" and build.argv == ["/doctor/bin/python", "-m", "doctor", "mooncake", "build", "--tag",
                                                    "v0.3.7.post2", "--python", "/env/bin/python"]
    assert plan(fake).steps == []  # not asked for: not touched


def test_a_source_build_without_the_ascend_transport_is_rebuilt(fake, tmp_path):
    """No wheel name to go by: the check's mooncake.transport failure asks for the rebuild."""
    from fakehost.mooncake import CC, ElfKit, cann_libs, make_install

    if CC is None:
        pytest.skip("no C compiler to build the test libraries")
    kit = ElfKit(tmp_path / "kit")
    ascend_host(fake, "0.18.0")
    cann_libs(fake, kit)
    make_install(fake, kit, ascend=False)
    fake.env["LD_LIBRARY_PATH"] = "/usr/local/lib:" + fake.env["LD_LIBRARY_PATH"]
    build = [s for s in runs(plan(fake)) if s.kind == "build"]
    assert [s.argv[-4:] for s in build] == [["--tag", "v0.3.9", "--python", "/env/bin/python"]]
    assert build[0].finding == "mooncake.installed"


def test_mooncake_pip_row_and_the_wrong_build(fake):
    ascend_host(fake, "0.11.0rc3", **{"mooncake-transfer-engine": "0.3.7"})
    p = plan(fake)
    assert runs(p)[0].removes == ["mooncake-transfer-engine"]
    assert runs(p)[1].kind == "build"
    row = next(r for r in MATRIX.releases if r.mooncake_install == "pip")
    facts = facts_of(fake)
    facts.cann.version = row.cann[0]
    p2 = plan_of(facts, target=row.vllm_ascend, with_mooncake=True)
    mc = [s for s in runs(p2) if s.packages and s.packages[0].startswith("mooncake")]
    assert mc[0].packages == [f"mooncake-transfer-engine-npu=={row.mooncake}"]
    assert p2.pins["mooncake-transfer-engine-npu"] == row.mooncake


def test_vllm_from_source_builds_with_target_device_empty(fake, tmp_path):
    ascend_host(fake, "0.11.0rc3")
    fake.install(official_image(workspace=tmp_path / "ws", vllm="0.11.2+empty"))
    p = plan(fake, vllm_from="source")
    fetch, build = [s for s in runs(p) if s.kind in ("fetch", "build")]
    assert fetch.argv[:6] == ["git", "clone", "--depth", "1", "--branch", "v0.11.0"]
    assert build.env == {"VLLM_TARGET_DEVICE": "empty"} and "--no-build-isolation" in build.argv
    assert p.pins["vllm"] == "0.11.0+empty"


def test_uv_commands_carry_the_users_pip_index_configuration(tmp_path):
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nindex-url = https://mirror.example/simple\nextra-index-url = https://extra.example/simple\n"
                    "trusted-host = mirror.example\n")
    cfg = pip_index_config({"PIP_CONFIG_FILE": str(conf), "HOME": str(tmp_path), "PIP_FIND_LINKS": "/wheels /more"},
                           files=[conf])
    assert uv_flags(cfg) == ["--no-config", "--index-url", "https://mirror.example/simple", "--extra-index-url",
                             "https://extra.example/simple", "--find-links", "/wheels", "--find-links", "/more",
                             "--allow-insecure-host", "mirror.example", "--index-strategy", "unsafe-best-match"]
    offline = pip_index_config({"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "/wheels"}, files=[])
    assert uv_flags(offline) == ["--no-config", "--no-index", "--find-links", "/wheels"]
    c = choose("uv", "/env/bin/python", "/doctor/python", True, "/usr/bin/uv", cfg)
    argv = c.installer.install(["torch==2.7.1+cpu"], extra_index_urls=[TORCH_CPU_INDEX])
    assert argv[:4] == ["/usr/bin/uv", "pip", "install", "--python"] and "--index-strategy" in argv
    assert c.downloader.prefix == ("/env/bin/python", "-m", "pip")  # uv cannot download
    with pytest.raises(LookupError, match="uv is not on PATH"):
        choose("uv", "/env/bin/python", "/doctor/python", True, None, cfg)
    auto = choose("auto", "/env/bin/python", "/doctor/python", True, "/usr/bin/uv", cfg)
    assert (auto.resolver.kind, auto.installer.kind, auto.shown.kind) == ("uv", "uv", "pip")
    no_uv = choose("auto", "/env/bin/python", "/doctor/python", True, None, cfg)
    assert (no_uv.resolver.kind, no_uv.installer.kind) == ("pip", "pip") and "uv is not on PATH" in no_uv.notes[-1]
    refused = choose("auto", "/env/bin/python", "/doctor/python", True, "/usr/bin/uv", cfg, "it is EXTERNALLY-MANAGED")
    assert (refused.resolver.kind, refused.installer.kind) == ("uv", "pip")
    nopip = choose("pip", "/env/bin/python", "/doctor/python", False, None, None)
    assert nopip.installer.prefix == ("/doctor/python", "-m", "pip", "--python", "/env/bin/python")


def test_unmet_requirements_leave_out_the_pins_and_cuda():
    from doctor.facts import Distribution

    reqs = ["torch==2.8.0", "xformers==0.0.32.post1; platform_machine == 'x86_64'", "numpy", "regex",
            "transformers>=4.55.2", "nvidia-nccl-cu12==2.27.3", "pandas; extra == 'bench'"]
    installed = {"numpy": Distribution("numpy", "1.26.4"), "transformers": Distribution("transformers", "4.57.1")}
    markers = {"platform_machine": "x86_64", "python_version": "3.11", "sys_platform": "linux"}
    from doctor.matrix.query import package_set

    not_on_ascend = package_set(shipped_matrix(), "vllm_not_on_ascend")
    assert unmet_requirements("vllm", reqs, ["torch", "torch-npu"], installed, markers, not_on_ascend) == ["regex"]
    assert unmet_requirements("vllm-ascend", ["torch==2.7.1", "quart", "numpy<2.0.0"], ["torch"], installed,
                              markers, not_on_ascend) == ["quart"]


def test_requirements_and_constraints_files(fake, tmp_path):
    ascend_host(fake, "0.11.0rc3", numpy="2.1.0")
    p = plan(fake)
    text = requirements_text(p, [TORCH_CPU_INDEX])
    assert f"--extra-index-url {TORCH_CPU_INDEX}\n" in text and "numpy<2.0.0\n" in text and "torch==2.7.1+cpu\n" in text
    assert "--" not in constraints_text(p.pins) and "vllm-ascend==0.11.0rc3\n" in constraints_text(p.pins)
