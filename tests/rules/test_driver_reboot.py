"""doctor/rules/hardware.py: driver.reboot_pending, the driver npu-smi reports loaded against the
installed one (a container asks the host to reboot)."""

import pytest

from doctor.rules import hardware as hw

from .build import (absent, context, devices, driver, expect, facts, host, judge, npu_smi)


# -- driver.reboot_pending --------------------------------------------------------------------------


def _loaded(version):
    d = devices()
    d.npu_smi_info.driver_version = version
    return d


def test_driver_loaded_is_not_the_installed_one():
    ctx = context(facts(devices=_loaded("24.1.rc3")))
    f = expect(judge(hw.driver_reboot_pending, ctx), "driver.reboot_pending", "warn")
    assert f.observed.startswith("24.1.rc3") and f.expected.startswith("25.0.rc1.1")
    assert [c.shell() for c in f.commands] == ["npu-smi info", "reboot"]
    assert "24.1.rc3" in f.title.text("zh") and "25.0.rc1.1" in f.title.text("zh")


def test_container_says_the_host_reboots():
    ctx = context(facts(host=host(in_container=True), devices=_loaded("24.1.rc3")))
    f = expect(judge(hw.driver_reboot_pending, ctx), "driver.reboot_pending", "warn")
    assert "not this container" in f.commands[1].label.text("en")


@pytest.mark.parametrize("loaded", ["25.0.rc1.1", "25.0.RC1.1"])  # npu-smi and version.info may differ in case
def test_same_driver_loaded_and_installed_says_nothing(loaded):
    absent(judge(hw.driver_reboot_pending, context(facts(devices=_loaded(loaded)))), "driver.reboot_pending")


def test_reboot_pending_needs_both_versions_and_the_runtime_stage():
    absent(judge(hw.driver_reboot_pending, context(facts(devices=_loaded(None)))), "driver.reboot_pending")
    absent(judge(hw.driver_reboot_pending, context(facts(driver=driver(version=None), devices=_loaded("24.1.rc3")))),
           "driver.reboot_pending")
    absent(judge(hw.driver_reboot_pending, context(facts(devices=_loaded("24.1.rc3")), stage="build")),
           "driver.reboot_pending")
    failed = devices(**npu_smi(returncode=255))  # npu-smi failed: nothing loaded to compare
    absent(judge(hw.driver_reboot_pending, context(facts(devices=failed))), "driver.reboot_pending")
