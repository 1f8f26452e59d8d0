"""`ascend-doctor check` on fake Ascend hosts: the scenarios of issue 2 and public cases."""
import sys
import time
from pathlib import Path

import pytest
from fakehost import finding, official_image, statuses
from fakehost.dists import Stub
from fakehost.scenarios import ascend_host, release_packages
import doctor_fork
from shipped import matrix as shipped_matrix


def fails(doc):
    return [f["id"] for f in doc["findings"] if f["status"] == "fail"]


# -- the scenarios named in issue 2 ---------------------------------------------------------------



def shells(f):
    """A JSON finding's commands as printed."""
    return [c["shell"] for c in f.get("commands", [])]

def test_seed_001_official_image_vllm_does_not_match(fake, tmp_path):
    """quay.io/ascend/vllm-ascend:v0.11.0rc3 ships vllm 0.11.2+empty (seed 001)."""
    ascend_host(fake, "0.11.0rc3")
    fake.install(official_image(workspace=tmp_path / "vllm-workspace"))
    doc = fake.judge()
    assert doc["summary"]["root_cause"] == "vllm.version"
    f = finding(doc, "vllm.version")
    assert (f["observed"], f["expected"], f["fixable"]) == ("0.11.2+empty", "0.11.0", "auto")
    assert "0.11.2+empty" in f["title"] and "0.11.0rc3" in f["title"]
    # the repair is the plan, not a by-hand `pip install --no-deps vllm==0.11.0` (that alone leaves
    # vllm's own requirements broken): the command runs the doctor's fix on this very environment
    commands = shells(f)
    assert commands and all(" fix --apply " in c and f"--python {fake.python}" in c for c in commands), commands
    assert not any("--no-deps" in c for c in commands)
    assert finding(doc, "torch.version")["status"] == "ok"
    assert finding(doc, "torch_npu.version")["status"] == "info"  # docs recommend 2.7.1.post1
    assert doc["target"] == {"vllm_ascend": "0.11.0rc3", "matrix_row": "v0.11.0rc3"}
    assert doc["exit_code"] == 3


def test_pip_install_vllm_moved_torch(fake):
    """`pip install vllm==0.11.0` replaced torch 2.7.1 by 2.8.0 (seed 001's first attempt)."""
    ascend_host(fake, "0.11.0rc3", torch="2.8.0")
    doc = fake.judge()
    assert doc["summary"]["root_cause"] == "torch.version"
    torch = finding(doc, "torch.version")
    assert torch["expected"] == "2.7.1" and "vllm 0.11.0 pins torch 2.8.0" in torch["title"]
    assert finding(doc, "torch_npu.version")["blocked_by"] == "torch.version"
    assert finding(doc, "vllm.version")["status"] == "ok"


def test_seed_001_naive_fix_leaves_vllm_ascend_broken(fake):
    """The seed's "fix" `pip install vllm==0.11.0 torch_npu==2.8.0` (torch 2.8.0 came with it)."""
    ascend_host(fake, "0.11.0rc3", torch="2.8.0", torch_npu="2.8.0", torchvision="0.23.0")
    doc = fake.judge()
    assert doc["summary"]["root_cause"] == "torch.version"
    assert finding(doc, "torch_npu.version")["status"] == "fail"
    assert doc["exit_code"] == 3


def test_cuda_torch_with_nvidia_packages(fake):
    nvidia = {n: Stub(n, v) for n, v in (("nvidia-cuda-runtime-cu12", "12.6.77"), ("nvidia-cublas-cu12", "12.6.4.1"),
                                        ("nvidia-cudnn-cu12", "9.5.1.17"), ("nvidia-nccl-cu12", "2.26.2"))}
    ascend_host(fake, "0.11.0rc3", torch=Stub("torch", "2.7.1", cuda="12.6"), **nvidia)
    doc = fake.judge()
    f = finding(doc, "torch.build")
    assert f["status"] == "fail" and "CUDA 12.6" in f["title"] and "4 nvidia-*" in f["title"]
    assert doc["summary"]["root_cause"] == "torch.build"
    assert shells(f)[-1].endswith("--extra-index-url https://download.pytorch.org/whl/cpu torch==2.7.1+cpu")


def test_triton_next_to_triton_ascend(fake):
    ascend_host(fake, "0.13.0", triton="3.4.0")
    doc = fake.judge()
    f = finding(doc, "vllm_ascend.triton")
    assert f["status"] == "fail" and f"{sys.executable} -m pip --python {fake.python} uninstall -y triton triton-ascend" in shells(f)
    assert doc["summary"]["root_cause"] == "vllm_ascend.triton"


def test_numpy_2_with_a_release_that_needs_numpy_1(fake):
    ascend_host(fake, "0.11.0rc3", numpy="2.1.0")
    doc = fake.judge()
    f = finding(doc, "vllm_ascend.numpy")
    assert (f["status"], f["observed"], f["expected"]) == ("fail", "2.1.0", "<2.0.0")
    assert doc["summary"]["root_cause"] == "vllm_ascend.numpy"


def test_cann_not_sourced(fake):
    ascend_host(fake, "0.11.0rc3")
    for var in ("LD_LIBRARY_PATH", "ASCEND_OPP_PATH", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ATB_HOME_PATH",
                "ASCEND_AICPU_PATH"):
        fake.env.pop(var)
    doc = fake.judge()
    f = finding(doc, "env.cann_env")
    assert f["status"] == "fail" and shells(f) == ["source /usr/local/Ascend/ascend-toolkit/set_env.sh"]
    assert finding(doc, "env.nnal_env")["status"] == "fail"
    assert doc["summary"]["root_cause"] == "env.cann_env"
    assert finding(doc, "cann.installed")["status"] == "ok"  # CANN is there, just not set up


def test_container_without_driver_mounts(fake):
    ascend_host(fake, "0.11.0rc3")
    fake.remove("/usr/local/Ascend/driver")
    fake.remove("/etc/ascend_install.info")
    fake.remove("/usr/local/bin/npu-smi")
    doc = fake.judge()
    assert doc["stage"] == "runtime"  # devices are there, so this is not a build
    f = finding(doc, "driver.installed")
    assert f["status"] == "fail" and f["root_cause"] and f["fixable"] == "manual"
    assert "-v /usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/" in f["hint"]
    assert "mount" in finding(doc, "devices.npu_smi")["hint"]


def test_healthy_a2_host_exits_0(fake):
    # CANN 8.5.0 documents driver 25.0.X (8.3.RC2, 0.11.0rc3's CANN, documents no driver at all)
    ascend_host(fake, "0.13.0", container=False, torch_npu="2.8.0.post2")
    doc = fake.judge()
    assert doc["exit_code"] == 0, [(f["id"], f["title"]) for f in doc["findings"] if f["status"] in ("warn", "fail")]
    assert doc["summary"]["root_cause"] is None
    assert finding(doc, "cann.driver_compat")["status"] == "ok"
    # vllm from the index pins torch 2.9.0: reported as the expected residual, not a failure
    pip = finding(doc, "env.pip_check")
    assert pip["status"] == "info" and "torch==2.9.0" in pip["title"]
    assert finding(doc, "firmware.compat")["status"] == "ok"
    assert finding(doc, "devices.npu_smi")["observed"] == "A2"


def test_build_stage_skips_hardware_and_judges_python(fake):
    fake.toolkit("8.3.RC2").sourced(driver=False)
    fake.venv(release_packages("0.11.0rc3"))
    doc = fake.judge()
    assert doc["stage"] == "build" and doc["exit_code"] == 0
    for fid in ("driver.installed", "devices.nodes", "devices.npu_smi", "cann.driver_compat"):
        assert finding(doc, fid)["status"] == "skip"
    assert "docker build" in finding(doc, "driver.installed")["title"]
    assert finding(doc, "vllm.version")["status"] == "ok"


def test_build_stage_still_fails_a_broken_python_stack(fake):
    fake.toolkit("8.3.RC2").sourced(driver=False)
    fake.venv(release_packages("0.11.0rc3", vllm="0.11.2"))
    doc = fake.judge()
    assert doc["stage"] == "build" and doc["summary"]["root_cause"] == "vllm.version"


def test_runtime_stage_forced_fails_missing_hardware(fake):
    fake.toolkit("8.3.RC2").sourced(driver=False)
    fake.venv(release_packages("0.11.0rc3"))
    doc = fake.judge(stage="runtime")
    assert finding(doc, "driver.installed")["status"] == "fail"
    assert finding(doc, "devices.nodes")["status"] == "fail"


def test_npu_smi_hang_is_a_finding_within_the_timeout(fake):
    ascend_host(fake, "0.11.0rc3")
    fake.npu_smi(hang=True)
    start = time.monotonic()
    doc = fake.judge(npu_smi_timeout=1.0)
    assert time.monotonic() - start < 1.0 + 1.0
    f = finding(doc, "devices.npu_smi")
    assert f["status"] == "fail" and "did not answer within 1s" in f["title"]


@pytest.mark.parametrize("output,code,words", [
    ("npu-smi-8020.txt", 255, "held by another container"),
    ("npu-smi-8005.txt", 255, "held by another container"),
])
def test_npu_smi_errors_are_explained(fake, output, code, words):
    ascend_host(fake, "0.11.0rc3")
    fake.npu_smi(output, exit_code=code)
    f = finding(fake.judge(), "devices.npu_smi")
    assert f["status"] == "fail" and words in f["hint"]


def test_a3_and_310p_hardware(fake):
    ascend_host(fake, "0.11.0rc3", npu="npu-smi-a3.txt")
    doc = fake.judge()
    assert finding(doc, "devices.hardware_support")["observed"] == "A3"
    assert "16 chips" in finding(doc, "devices.npu_smi")["title"]
    assert "64 GB HBM per chip, 436 GB in use" in finding(doc, "devices.npu_smi")["title"]


def test_first_generation_910_is_unsupported_and_unhealthy(fake):
    ascend_host(fake, "0.11.0rc3", npu="npu-smi-910a-warning.txt")
    doc = fake.judge()
    assert finding(doc, "devices.hardware_support")["status"] == "fail"
    assert finding(doc, "devices.health")["status"] == "warn"


def test_non_root_user_outside_hwhiaiuser_group(fake):
    ascend_host(fake, "0.11.0rc3")
    doc = fake.judge()
    assert finding(doc, "devices.permissions")["status"] == "ok"  # we run as root here
    from doctor.facts import HostFacts
    from doctor.probes.devices import probe_devices
    from doctor.shell.host.root import Host
    me = HostFacts(root=str(fake.root), cwd="/", uid=1001, gids=[1001], user="alice", groups={})
    dev = probe_devices(Host(str(fake.root), fake.env), me, 5)
    assert not any(n.accessible for n in dev.davinci)


def test_driver_firmware_mismatch(fake):
    ascend_host(fake, "0.11.0rc3", container=False, driver="driver-24.1.rc2.2.info")
    doc = fake.judge()
    f = finding(doc, "firmware.compat")  # driver 24.1.rc2.2 takes fw [7.0.0,7.2.99]; fw is 7.7.0.1.231
    assert f["status"] == "fail" and f["expected"] == "firmware in [7.0.0,7.2.99]"


def test_snapshot_replay_gives_the_same_verdict(fake, tmp_path):
    ascend_host(fake, "0.11.0rc3", torch="2.8.0")
    fake.env["HF_TOKEN"] = "hf_secret_value"
    proc = fake.run("snapshot")
    assert proc.returncode == 0, proc.stderr
    assert "hf_secret_value" not in proc.stdout and '"HF_TOKEN": "<redacted>"' in proc.stdout
    snap = tmp_path / "host.json"
    snap.write_text(proc.stdout)
    live = fake.judge()
    replay = fake.run("check", "--from", str(snap), "--json", with_target=False)
    import json
    replayed = json.loads(replay.stdout)
    assert replay.returncode == live["exit_code"] == 3
    assert [(f["id"], f["status"], f["blocked_by"]) for f in replayed["findings"]] == \
           [(f["id"], f["status"], f["blocked_by"]) for f in live["findings"]]


# -- public cases (facts/cases-public.json) -----------------------------------------------------


def test_AVD_002_vllm_090_torch_251_is_the_correct_state(fake):
    ascend_host(fake, "0.9.0rc2", container=False)
    doc = fake.judge()
    assert finding(doc, "torch.version")["status"] == "ok"
    assert finding(doc, "env.pip_check")["status"] == "info"  # "vllm 0.9.0 requires torch==2.7.0"
    assert "torch==2.7.0" in finding(doc, "env.pip_check")["title"]


def test_AVD_004_torch_28_with_0110rc0(fake):
    ascend_host(fake, "0.11.0rc0", torch="2.8.0", torch_npu="2.8.0", torchvision="0.23.0")
    doc = fake.judge()
    assert doc["summary"]["root_cause"] == "torch.version"
    assert finding(doc, "torch.version")["expected"] == "2.7.1"


def test_AVD_010_residual_pip_conflict_is_benign(fake):
    ascend_host(fake, "0.10.2rc1", container=False)
    doc = fake.judge()
    assert finding(doc, "env.pip_check")["status"] == "info"
    assert doc["exit_code"] in (0, 4)
    assert "fail" not in statuses(doc).values()


def test_AVD_012_user_chose_torch_260(fake):
    ascend_host(fake, "0.8.5rc1", torch="2.6.0", torchvision="0.21.0")
    doc = fake.judge()
    assert doc["summary"]["root_cause"] == "torch.version"


def test_AVD_014_conda_cuda_torch_for_0130rc1(fake):
    nvidia = {"nvidia-cuda-runtime-cu12": "12.8.90", "nvidia-cublas-cu12": "12.8.4.1"}
    ascend_host(fake, "0.13.0rc1", torch=Stub("torch", "2.8.0", cuda="12.8"), **nvidia)
    doc = fake.judge()
    assert finding(doc, "torch.build")["status"] == "fail"
    assert finding(doc, "torch.version")["status"] == "ok"


def test_AVD_018_dev_vllm_ascend_with_vllm_0111(fake, tmp_path):
    ascend_host(fake, "0.11.0", npu="npu-smi-a3.txt", cann="8.3.RC1",
                vllm=Stub("vllm", "0.11.1+empty", editable=str(tmp_path / "src/vllm")),
                vllm_ascend=Stub("vllm-ascend", "0.11.1.dev6+gb30408353", editable=str(tmp_path / "src/vllm-ascend")))
    doc = fake.judge()
    va = finding(doc, "vllm_ascend.installed")
    assert va["status"] == "warn" and "judged as 0.11.0" in va["title"]
    assert finding(doc, "vllm.version")["status"] == "fail"


def test_AVD_020_stale_vllm_version_and_mainline_triton(fake):
    ascend_host(fake, "0.20.2rc1", triton="3.2.0", transformers="5.5.3")
    fake.env["VLLM_VERSION"] = "0.18.0"
    doc = fake.judge()
    f = finding(doc, "env.vllm_version_override")
    assert f["status"] == "fail" and f["observed"] == "0.18.0" and f["expected"] == "0.20.2"
    assert finding(doc, "vllm_ascend.triton")["status"] == "fail"


def test_AVD_022_tutorial_vllm_version_override(fake):
    ascend_host(fake, "0.24.0rc1", npu="npu-smi-a3.txt")
    fake.env["VLLM_VERSION"] = "0.21.0"
    doc = fake.judge()
    assert finding(doc, "env.vllm_version_override")["status"] == "fail"


def test_AVD_024_vllm_folder_in_cwd(fake, tmp_path):
    ascend_host(fake, "0.11.0rc3")
    (fake.workdir / "vllm" / "vllm").mkdir(parents=True)  # a checkout: repository root, no __init__.py
    doc = fake.judge()
    f = finding(doc, "env.cwd_shadow")
    assert f["status"] == "fail" and "unknown location" in f["title"]


def test_AVD_026_vllm_ascend_namespace_folder(fake):
    ascend_host(fake, "0.10.2rc1", driver="driver-24.1.rc3.info")
    (fake.workdir / "vllm_ascend").mkdir()
    doc = fake.judge()
    assert finding(doc, "env.cwd_shadow")["status"] == "fail"


def test_AVD_026_plugin_entry_point_missing(fake):
    ascend_host(fake, "0.10.2rc1", vllm_ascend=Stub("vllm-ascend", "0.10.2rc1", entry_points={"other": {"x": "y"}}))
    doc = fake.judge()
    assert finding(doc, "vllm_ascend.plugin")["status"] == "fail"


def test_AVD_028_source_build_reports_dev_version(fake):
    ascend_host(fake, "0.23.0", vllm_ascend=Stub("vllm-ascend", "0.23.1.dev0+g5cb98caaa.d20260915"))
    doc = fake.judge()
    assert doc["target"]["matrix_row"].startswith("v0.23.0")  # 0.23.0 or its .post1
    assert finding(doc, "vllm_ascend.installed")["status"] == "warn"


def test_AVD_030_nnal_missing(fake):
    ascend_host(fake, "0.13.0")
    fake.remove("/usr/local/Ascend/nnal")
    doc = fake.judge()
    f = finding(doc, "cann.nnal")
    assert f["status"] == "fail" and "libatb.so" in f["title"] and f["fixable"] == "vendor"


def test_AVD_032_image_without_set_env(fake):
    ascend_host(fake, "0.11.0rc3")
    fake.env.pop("LD_LIBRARY_PATH")
    fake.env.pop("ASCEND_OPP_PATH")
    assert finding(fake.judge(), "env.cann_env")["status"] == "fail"


def test_AVD_034_cann_too_old_for_073(fake):
    ascend_host(fake, "0.7.3rc2", cann="8.0.RC2.2")
    doc = fake.judge()
    f = finding(doc, "cann.release_match")
    assert f["status"] == "fail" and f["observed"] == "8.0.RC2.2"


def test_AVD_038_nnal_does_not_match_toolkit(fake):
    ascend_host(fake, "0.13.0")
    fake.nnal("8.3.RC1")
    f = finding(fake.judge(), "cann.nnal")
    assert (f["status"], f["observed"], f["expected"]) == ("fail", "8.3.RC1", "8.5.0")


def test_AVD_040_driver_too_old_for_the_image_cann(fake):
    ascend_host(fake, "0.23.0", driver="driver-24.1.rc3.info")
    doc = fake.judge()
    f = finding(doc, "cann.driver_compat")
    assert f["status"] == "fail" and f["fixable"] == "vendor"
    assert doc["summary"]["root_cause"] == "cann.driver_compat"


def test_AVD_042_kernels_package_missing(fake):
    ascend_host(fake, "0.11.0rc3")
    fake.remove("/usr/local/Ascend/ascend-toolkit/8.3.RC2/opp_kernel")
    fake.remove("/usr/local/Ascend/ascend-toolkit/latest/opp_kernel")
    assert finding(fake.judge(), "cann.kernels")["status"] == "fail"


def test_AVD_054_triton_ascend_with_a_release_that_does_not_use_it(fake):
    ascend_host(fake, "0.11.0rc1", triton_ascend="3.2.0rc4", vllm="0.11.0+empty", cann="8.3.RC1")
    assert finding(fake.judge(), "vllm_ascend.triton")["status"] == "warn"


def test_AVD_064_python_outside_the_range(fake):
    """A Python the release has no wheels for (3.11 venv judged against a 3.9-only expectation)."""
    ascend_host(fake, "0.23.0")
    doc = fake.judge()
    assert finding(doc, "python.version")["status"] == "ok"
    from doctor.rules.engine import make_context
    from doctor.rules.python import python_version
    from doctor.usecases.check import CheckOptions, gather
    facts = gather(CheckOptions(root=str(fake.root), python=str(fake.python)), env=fake.env)
    facts.python.version = "3.13.1"
    ctx = make_context(facts, shipped_matrix())
    assert [f.status for f in python_version(ctx) if f.id == "python.version"] == ["warn"]
    facts.python.version = "3.9.18"  # below Requires-Python >=3.10
    assert [f.status for f in python_version(ctx) if f.id == "python.version"] == ["fail"]


def test_this_machine_has_no_ascend_stack(tmp_path):
    """`ascend-doctor check` on a machine without Ascend: exit 3, driver/CANN explain why."""
    import json
    import sys
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "check", "--json", "--python", sys.executable],
                          capture_output=True, text=True, timeout=60, env=dict(env, PYTHONPATH=str(Path(__file__).parents[1])),
                          cwd=tmp_path)
    if Path("/usr/local/Ascend").exists():
        pytest.skip("an Ascend stack is installed here")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 3
    assert finding(doc, "cann.installed")["status"] == "fail"
    assert finding(doc, "driver.installed")["status"] == "skip"


def test_an_interpreter_that_cannot_run_is_the_root_cause_not_missing_packages(fake, tmp_path):
    ascend_host(fake, "0.11.0rc3")
    broken = tmp_path / "python3"
    broken.write_text("#!/bin/sh\necho 'error while loading shared libraries: libpython3.11.so.1.0' >&2\nexit 127\n")
    broken.chmod(0o755)
    fake.python = broken
    doc = fake.judge()
    assert doc["summary"]["root_cause"] == "python.interpreter"
    assert "libpython3.11.so.1.0" in finding(doc, "python.interpreter")["observed"]
    assert not any(f["id"].startswith(("torch", "vllm")) for f in doc["findings"])
