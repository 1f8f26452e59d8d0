"""doctor/rules/hardware.py: driver, firmware and devices, from plain facts."""
import pytest

from doctor.facts import CommandFact, NpuProcess
from doctor.rules import hardware as hw

from .build import absent, chips, context, devices, driver, expect, facts, firmware, host, judge, matrix, node, npu_smi, release

# -- driver.installed / driver.libs -------------------------------------------------------------


def test_driver_ok():
    f = expect(judge(hw.driver_installed, context()), "driver.installed", "ok")
    assert f.observed == "25.0.rc1.1"
    expect(judge(hw.driver_libs, context()), "driver.libs", "ok")


def test_no_driver_on_a_host_is_a_vendor_install():
    ctx = context(facts(driver=driver(found=False, version=None)))
    f = expect(judge(hw.driver_installed, ctx), "driver.installed", "fail")
    assert f.fixable == "vendor" and "Ascend-hdk-910b-npu-driver" in f.hint.text("en")
    absent(judge(hw.driver_libs, ctx), "driver.libs")  # nothing to say about the libraries of no driver


def test_no_driver_in_a_container_is_a_mount():
    ctx = context(facts(host=host(in_container=True), driver=driver(found=False, version=None)))
    f = expect(judge(hw.driver_installed, ctx), "driver.installed", "fail")
    assert f.fixable == "manual" and "docker run options: -v /usr/local/Ascend/driver/lib64/" in f.hint.text("en")
    assert "--device /dev/davinci_manager" in f.hint.text("zh")


def test_unreadable_version_info_fails_but_the_libraries_are_still_judged():
    ctx = context(facts(driver=driver(malformed="no Version= line", hal_lib_found=False)))
    expect(judge(hw.driver_installed, ctx), "driver.installed", "fail")
    expect(judge(hw.driver_libs, ctx), "driver.libs", "fail")


@pytest.mark.parametrize("container,fixable,words", [(True, "manual", "docker run option: -v"), (False, "vendor", "reinstall")])
def test_missing_libascend_hal(container, fixable, words):
    ctx = context(facts(host=host(in_container=container), driver=driver(hal_lib_found=False)))
    f = expect(judge(hw.driver_libs, ctx), "driver.libs", "fail")
    assert f.fixable == fixable and words in f.hint.text("en")


def test_driver_is_skipped_in_the_build_stage():
    ctx = context(stage="build")
    expect(judge(hw.driver_installed, ctx), "driver.installed", "skip")
    expect(judge(hw.driver_libs, ctx), "driver.libs", "skip")


def test_no_driver_section_no_driver_findings():
    ctx = context(facts(driver=None))
    absent(judge(hw.driver_installed, ctx), "driver.installed")
    absent(judge(hw.driver_libs, ctx), "driver.libs")
    absent(judge(hw.firmware_installed, ctx), "firmware.installed")


# -- firmware ------------------------------------------------------------------------------------


def test_firmware_ok_and_compatible():
    expect(judge(hw.firmware_installed, context()), "firmware.installed", "ok")
    expect(judge(hw.firmware_compat, context()), "firmware.compat", "ok")


def test_firmware_missing_on_a_host_warns_in_a_container_informs():
    fw = firmware(found=False, version=None)
    f = expect(judge(hw.firmware_installed, context(facts(firmware=fw))), "firmware.installed", "warn")
    assert f.fixable == "vendor"
    expect(judge(hw.firmware_installed, context(facts(firmware=fw, host=host(in_container=True)))),
           "firmware.installed", "info")
    absent(judge(hw.firmware_compat, context(facts(firmware=fw))), "firmware.compat")


def test_malformed_firmware_warns():
    expect(judge(hw.firmware_installed, context(facts(firmware=firmware(malformed="garbage")))), "firmware.installed", "warn")


def test_firmware_without_a_version_is_not_compared():
    # a snapshot from before the probe recorded why (no Version= line): nothing to compare
    absent(judge(hw.firmware_compat, context(facts(firmware=firmware(version=None)))), "firmware.compat")


def test_driver_that_rejects_the_firmware_fails():
    ctx = context(facts(driver=driver(compatible_fw=[["7.0.0", "7.5.99"]])))
    f = expect(judge(hw.firmware_compat, ctx), "firmware.compat", "fail")
    assert f.expected == "firmware in [7.0.0,7.5.99]" and f.observed == "7.7.0.1.231"


def test_firmware_that_does_not_list_the_driver_warns():
    ctx = context(facts(firmware=firmware(compatible_drv=[["23.0", "23.0."]])))
    f = expect(judge(hw.firmware_compat, ctx), "firmware.compat", "warn")
    assert f.expected == "driver in [23.0,23.0.]"


@pytest.mark.parametrize("fw", ["7.0.0.1.1", "7.7.99.5.5"])
def test_firmware_range_bounds_are_inclusive(fw):
    # the driver accepts [7.0.0,7.7.99]: both ends are in, compared on three parts
    ctx = context(facts(firmware=firmware(version=fw)))
    expect(judge(hw.firmware_compat, ctx), "firmware.compat", "ok")


def test_firmware_just_outside_the_range_fails():
    ctx = context(facts(firmware=firmware(version="7.8.0.1.1")))
    expect(judge(hw.firmware_compat, ctx), "firmware.compat", "fail")


def test_firmware_in_the_build_stage():
    expect(judge(hw.firmware_installed, context(stage="build")), "firmware.installed", "skip")
    absent(judge(hw.firmware_compat, context(stage="build")), "firmware.compat")


def test_firmware_compat_needs_a_driver_version():
    absent(judge(hw.firmware_compat, context(facts(driver=driver(version=None)))), "firmware.compat")


# -- devices ---------------------------------------------------------------------------------------


def test_device_nodes_ok():
    f = expect(judge(hw.devices_nodes, context()), "devices.nodes", "ok")
    assert f.observed.startswith("davinci0 davinci1")


@pytest.mark.parametrize("container,fixable", [(True, "manual"), (False, "vendor")])
def test_no_device_nodes(container, fixable):
    ctx = context(facts(host=host(in_container=container), devices=devices(count=0)))
    f = expect(judge(hw.devices_nodes, ctx), "devices.nodes", "fail")
    assert f.fixable == fixable


def test_missing_management_nodes():
    dev = devices()
    dev.management[1].exists = False
    f = expect(judge(hw.devices_nodes, context(facts(devices=dev))), "devices.nodes", "fail")
    assert "--device /dev/devmm_svm" in f.hint.text("en")


def test_permissions():
    expect(judge(hw.devices_permissions, context()), "devices.permissions", "ok")
    dev = devices()
    dev.davinci[0].accessible = False
    f = expect(judge(hw.devices_permissions, context(facts(devices=dev))), "devices.permissions", "fail")
    assert f.hint.text("en").startswith("sudo usermod -aG HwHiAiUser root")
    absent(judge(hw.devices_permissions, context(facts(devices=devices(count=0, management=[])))), "devices.permissions")


def test_npu_smi_ok():
    f = expect(judge(hw.devices_npu_smi, context()), "devices.npu_smi", "ok")
    assert "8 chips (910B4, 32 GB HBM per chip" in f.title.text("en")


def test_npu_smi_not_found_warns():
    ctx = context(facts(devices=devices(npu_smi_path=None, npu_smi=None, npu_smi_info=None)))
    expect(judge(hw.devices_npu_smi, ctx), "devices.npu_smi", "warn")
    absent(judge(hw.devices_health, ctx), "devices.health")


def test_npu_smi_hang_fails():
    ctx = context(facts(devices=devices(**npu_smi(timed_out=True, returncode=None))))
    f = expect(judge(hw.devices_npu_smi, ctx), "devices.npu_smi", "fail")
    assert f.observed == "timeout" and f.fixable == "vendor"
    absent(judge(hw.devices_health, ctx), "devices.health")


@pytest.mark.parametrize("code,words", [(-8005, "--privileged"), (-8020, "another container"),
                                        (-1, "run npu-smi info by hand")])
def test_npu_smi_error_codes(code, words):
    out = f"DrvMngGetConsoleLogLevel failed. (g_conf_file = /etc/x)\ndcmi model initialized failed, because the device is used. ret is {code}"
    ctx = context(facts(devices=devices(**npu_smi(returncode=255, stdout=out))))
    f = expect(judge(hw.devices_npu_smi, ctx), "devices.npu_smi", "fail")
    assert words in f.hint.text("en")


def test_critical_and_alarm_chips_fail_a_warning_warns():
    # Critical and Alarm stop a chip: never only a warning
    for health in ("Critical", "Alarm"):
        ctx = context(facts(devices=devices(**npu_smi(chips(("OK", health, "OK"))))))
        f = expect(judge(hw.devices_health, ctx), "devices.health", "fail")
        assert f"NPU 1 chip 0: {health}" in f.title.text("en") and f.fixable == "vendor"
        assert f"NPU 1 芯片 0：{health}" in f.title.text("zh")
        assert [c.shell() for c in f.commands] == ["npu-smi info -t health -i 1"]  # the chip's own error code
    ctx = context(facts(devices=devices(**npu_smi(chips(("Warning", "OK"))))))
    f = expect(judge(hw.devices_health, ctx), "devices.health", "warn")
    assert f.title.text("zh").startswith("1 个芯片状态异常")


def test_healthy_chips():
    expect(judge(hw.devices_health, context()), "devices.health", "ok")


def test_busy_npus_are_information():
    procs = [NpuProcess(npu=0, chip=0, pid=4242, name="python", memory="30000")]
    ctx = context(facts(devices=devices(**npu_smi(processes=procs))))
    f = expect(judge(hw.devices_busy, ctx), "devices.busy", "info")
    assert f.observed == "4242(python)@0"
    absent(judge(hw.devices_busy, context()), "devices.busy")


def test_devices_in_the_build_stage():
    ctx = context(stage="build")
    for check, fid in ((hw.devices_nodes, "devices.nodes"), (hw.devices_permissions, "devices.permissions"),
                       (hw.devices_npu_smi, "devices.npu_smi"), (hw.devices_health, "devices.health")):
        expect(judge(check, ctx), fid, "skip")
    absent(judge(hw.devices_busy, ctx), "devices.busy")
    absent(judge(hw.hardware_support, ctx), "devices.hardware_support")


def test_no_devices_section():
    ctx = context(facts(devices=None))
    absent(judge(hw.devices_nodes, ctx), "devices.nodes")
    absent(judge(hw.devices_npu_smi, ctx), "devices.npu_smi")
    for check in (hw.devices_nodes, hw.devices_permissions, hw.devices_npu_smi, hw.devices_health, hw.devices_busy):
        assert judge(check, ctx) == []


# -- hardware support -------------------------------------------------------------------------------


def test_hardware_support():
    expect(judge(hw.hardware_support, context()), "devices.hardware_support", "ok")
    f = expect(judge(hw.hardware_support, context(hardware="310P")), "devices.hardware_support", "fail")
    assert f.fixable == "auto" and f.expected == "A2, A3"
    f = expect(judge(hw.hardware_support, context(hardware="910")), "devices.hardware_support", "fail")
    assert f.fixable == "none"
    expect(judge(hw.hardware_support, context(row=None)), "devices.hardware_support", "info")
    absent(judge(hw.hardware_support, context(hardware=None)), "devices.hardware_support")
    expect(judge(hw.hardware_support, context(row=release(hardware=("A2", "A3", "310P")), hardware="310P")),
           "devices.hardware_support", "ok")



def test_an_unsupported_release_offers_the_plan_for_one_that_supports_the_hardware_as_a_command():
    """The hint named "ascend-doctor fix --target vllm-ascend==<version>" inside its words (a
    placeholder, not runnable): the newest release that supports the hardware is named, and the
    plan for it is a command of its own, on the same target (this check's --target left out)."""
    old, new = release(), release(vllm_ascend="0.13.0", hardware=("A2", "A3", "310P"))
    ctx = context(m=matrix([old, new]), row=old, hardware="310P")
    ctx.follow_up = ("--npu-smi", "/usr/local/bin/npu-smi", "--target", "vllm-ascend==0.11.0rc3")
    f = expect(judge(hw.hardware_support, ctx), "devices.hardware_support", "fail")
    assert "ascend-doctor" not in f.hint.text("en") and "ascend-doctor" not in f.hint.text("zh")
    assert "0.13.0" in f.hint.text("en") and "0.13.0" in f.hint.text("zh")
    assert [c.argv for c in f.commands] == [("ascend-doctor", "fix", "--target", "vllm-ascend==0.13.0",
                                             "--python", ctx.facts.python.executable, "--npu-smi", "/usr/local/bin/npu-smi")]


def test_npu_smi_command_fact_fixture_is_consistent():
    # the builder's npu-smi run is a success exactly when its CommandFact says so
    assert npu_smi()["npu_smi_info"] is not None
    assert npu_smi(returncode=1)["npu_smi_info"] is None
    assert isinstance(npu_smi()["npu_smi"], CommandFact) and node("/dev/x").accessible
