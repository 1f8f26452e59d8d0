"""Strings read from the host that are no versions or carry shell syntax: malformed vendor
versions leave the facts before any rule (doctor/probes/malformed.py, versions.version_problem),
host paths in hints and commands are shell-quoted."""
import shlex

import pytest

from doctor.probes.malformed import reject_malformed_versions
from doctor.rules import cann as cann_rules, hardware as hw
from doctor.versions import version_problem

from .build import (absent, cann, context, devices, driver, expect, facts, firmware, host, judge, nnal)


VERSION_INFO = "/usr/local/Ascend/driver/version.info"


def _loaded(version):
    d = devices()
    d.npu_smi_info.driver_version = version
    return d


# -- malformed vendor versions -----------------------------------------------------------------------


@pytest.mark.parametrize("text", ["8.3.RC2;touch${IFS}/tmp/x;#", "8.3.RC2\ufffd\ufffd", "25.0.rc1.1 $(id)", "8.3.RC2`id`",
                                  "1" * 80, "８.３.RC2"])
def test_what_is_not_a_version(text):
    assert version_problem(text)


@pytest.mark.parametrize("text", ["8.3.RC2", "9.1.0-beta.1", "23.0.rc1.b070", "7.7.0.1.231", "8.2.RC1.alpha002",
                                  "24.1.rc2.2", "25.0.rc1.1", "8.0.RC3", "9.2.beta2"])
def test_what_is_a_version(text):
    assert version_problem(text) is None


def test_malformed_versions_leave_the_facts_before_any_rule():
    f = facts(driver=driver(version="25.0.rc1.1;id"), firmware=firmware(version="7.7.0\ufffd"),
              cann=cann(version="8.3.RC2;touch${IFS}/tmp/x;#", ops_version="8.3.RC2$(id)",
                        nnal=nnal(version="8.3.RC2 && id")),
              devices=_loaded("25.0.rc1.1;reboot"))
    reject_malformed_versions(f)
    assert (f.driver.version, f.firmware.version, f.cann.version, f.cann.ops_version, f.cann.nnal.version) == (None,) * 5
    assert "is not a version" in f.driver.malformed and VERSION_INFO in f.driver.malformed
    assert "bytes that are not UTF-8" in f.firmware.malformed
    assert f.devices.npu_smi_info.driver_version is None
    assert any(e.probe == "devices" and "npu-smi" in e.error for e in f.probe_errors)
    ctx = context(f)
    installed = expect(judge(cann_rules.cann_installed, ctx), "cann.installed", "fail")
    assert f.cann.install_info_path in installed.title.text("en") and "is not a version" in installed.observed
    expect(judge(hw.driver_installed, ctx), "driver.installed", "fail")
    absent(judge(cann_rules.cann_driver, ctx), "cann.driver_compat")  # never judged as a version
    absent(judge(cann_rules.cann_release, ctx), "cann.release_match")


def test_malformed_ops_and_nnal_versions_are_their_files():
    f = facts(cann=cann(ops_version=None, ops_malformed="opp_kernel/version.info: version= 'x;y' is not a version",
                        nnal=nnal(version=None, malformed="latest/version.info: 'x;y' is not a version")))
    ctx = context(f)
    expect(judge(cann_rules.cann_kernels, ctx), "cann.kernels", "fail")
    expect(judge(cann_rules.cann_nnal, ctx), "cann.nnal", "fail")


def test_host_paths_in_hints_are_shell_quoted():
    lib_dir = "/opt/my npu;touch x/driver/lib64"
    ctx = context(facts(host=host(in_container=True, user="a b"), driver=driver(lib_dir=lib_dir, hal_lib_found=False)))
    hint = expect(judge(hw.driver_libs, ctx), "driver.libs", "fail").hint.text("en")
    words = shlex.split(hint.split("docker run option:", 1)[1].replace("...", ""))
    assert words == ["-v", f"{lib_dir}/:{lib_dir}/"]
    path = "/opt/x;y/Ascend/nnal/atb"
    ctx = context(facts(cann=cann(nnal=nnal(found=False, path=path))))
    f = expect(judge(cann_rules.cann_nnal, ctx), "cann.nnal", "fail")
    printed = f.hint.text("en") + "\n" + "\n".join(c.shell() for c in f.commands)
    assert shlex.quote(path) in printed and f"{path};" not in printed.replace(shlex.quote(path), "")
