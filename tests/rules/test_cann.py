"""doctor/rules/cann.py: toolkit, ops/kernels, NNAL, CANN against the driver and the release."""
import dataclasses

import pytest

from doctor.matrix.model import CannDriver
from doctor.rules import cann as rules

from .build import _shipped, absent, cann, context, driver, expect, facts, judge, matrix, nnal, python, release


def test_installed_ok():
    f = expect(judge(rules.cann_installed, context()), "cann.installed", "ok")
    assert f.observed == "8.3.RC2" and "(ascend-toolkit layout" in f.title.text("en")


def test_not_installed_names_the_release_cann_and_the_arch():
    ctx = context(facts(cann=cann(found=False, version=None, searched=["/usr/local/Ascend"]),
                        python=python(machine="aarch64")))
    f = expect(judge(rules.cann_installed, ctx), "cann.installed", "fail")
    hint = f.hint.text("en")
    assert f.fixable == "vendor" and f.expected == "CANN 8.3.RC2"
    assert "Ascend-cann-toolkit_8.3.RC2_linux-aarch64.run" in hint and "CANN%208.3.RC2/" in hint
    assert f.source == "matrices/vllm-ascend.toml"


def test_not_installed_without_a_release():
    ctx = context(facts(cann=cann(found=False, version=None)), row=None)
    f = expect(judge(rules.cann_installed, ctx), "cann.installed", "fail")
    assert f.expected == "CANN installed" and "CANN%20<version>/" in f.hint.text("en")
    assert "CANN%20<版本>/" in f.hint.text("zh")


def test_unreadable_version_and_missing_libraries_fail():
    f = expect(judge(rules.cann_installed, context(facts(cann=cann(version=None, malformed="empty file")))),
               "cann.installed", "fail")
    assert f.observed == "empty file"
    f = expect(judge(rules.cann_installed, context(facts(cann=cann(libs={"libascendcl.so": True, "libhccl.so": False})))),
               "cann.installed", "fail")
    assert f.observed == "missing libhccl.so"


def test_malformed_but_versioned_install_warns():
    f = expect(judge(rules.cann_installed, context(facts(cann=cann(malformed="odd arch line")))), "cann.installed", "warn")
    assert f.title.text("en").endswith(" (odd arch line)")


def test_no_cann_section():
    ctx = context(facts(cann=None))
    absent(judge(rules.cann_installed, ctx), "cann.installed")
    for check in (rules.cann_installed, rules.cann_kernels, rules.cann_nnal, rules.cann_driver, rules.cann_release):
        assert judge(check, ctx) == []


# -- ops/kernels ------------------------------------------------------------------------------------


def test_kernels_ok():
    expect(judge(rules.cann_kernels, context()), "cann.kernels", "ok")


def test_kernels_missing_fails():
    f = expect(judge(rules.cann_kernels, context(facts(cann=cann(ops_found=False)))), "cann.kernels", "fail")
    assert "Ascend-cann-<chip>-ops_8.3.RC2" in f.hint.text("en")


def test_kernels_of_another_version_fail():
    # an ops package that does not match the toolkit breaks operators at run time: a failure
    f = expect(judge(rules.cann_kernels, context(facts(cann=cann(ops_version="8.2.RC1")))), "cann.kernels", "fail")
    assert (f.observed, f.expected, f.fixable) == ("8.2.RC1", "8.3.RC2", "vendor")


def test_kernels_and_nnal_not_judged_without_a_toolkit_version():
    absent(judge(rules.cann_kernels, context(facts(cann=cann(version=None)))), "cann.kernels")
    absent(judge(rules.cann_nnal, context(facts(cann=cann(version=None)))), "cann.nnal")
    absent(judge(rules.cann_kernels, context(facts(cann=cann(found=False, version=None)))), "cann.kernels")


# -- NNAL -----------------------------------------------------------------------------------------


def test_nnal_ok_and_unknown_version():
    expect(judge(rules.cann_nnal, context()), "cann.nnal", "ok")
    f = expect(judge(rules.cann_nnal, context(facts(cann=cann(nnal=nnal(version=None))))), "cann.nnal", "ok")
    assert f.title.text("en") == "NNAL (version unknown)"


def test_nnal_missing_fails():
    f = expect(judge(rules.cann_nnal, context(facts(cann=cann(nnal=nnal(found=False))))), "cann.nnal", "fail")
    assert f.expected == "NNAL 8.3.RC2"


@pytest.mark.parametrize("version,status", [("8.3.RC2.B010", "ok"), ("8.3.RC1", "fail"), ("8.2.RC2", "fail")])
def test_nnal_compares_release_lines(version, status):
    # a build suffix is the same release line; another RC is not
    expect(judge(rules.cann_nnal, context(facts(cann=cann(nnal=nnal(version=version))))), "cann.nnal", status)


# -- CANN and the driver ------------------------------------------------------------------------------

ROWS = [CannDriver(cann="8.3.RC2", compatible=("25.2", "25.0"), incompatible=("24.1",), source="matrices/cann-driver.toml")]


@pytest.mark.parametrize("drv,status", [
    ("25.0.rc1.1", "ok"),
    ("24.1.rc3", "fail"),  # the matrix excludes this line: never only information
    ("23.0.7", "fail"),  # below the line documented incompatible
    ("26.0.rc1", "warn"),  # newer than every listed line: untested
    ("25.1.rc1", "warn"),  # between listed lines: undocumented, the nearest documented pairing named
])
def test_cann_against_the_driver(drv, status):
    ctx = context(facts(driver=driver(version=drv)), m=matrix(cann_driver=ROWS))
    f = expect(judge(rules.cann_driver, ctx), "cann.driver_compat", status)
    assert f.source == "matrices/cann-driver.toml"
    if status == "fail":
        assert f.fixable == "vendor" and "25.2, 25.0" in f.hint.text("en")


def test_cann_without_a_matrix_row_names_the_nearest_documented_pairing():
    ctx = context(facts(cann=cann(version="9.9.0")), m=matrix(cann_driver=ROWS))
    f = expect(judge(rules.cann_driver, ctx), "cann.driver_compat", "warn")
    assert "CANN 8.3.RC2" in f.title.text("en") and f.source == "matrices/cann-driver.toml"


def test_cann_without_any_documented_pairing_is_unknown():
    ctx = context(facts(cann=cann(version="9.9.0")), m=dataclasses.replace(matrix(), cann_driver=[]))
    f = expect(judge(rules.cann_driver, ctx), "cann.driver_compat", "warn")
    assert "9.9.0" in f.title.text("en") and f.source is None


def test_cann_driver_skipped():
    expect(judge(rules.cann_driver, context(stage="build")), "cann.driver_compat", "skip")
    expect(judge(rules.cann_driver, context(facts(driver=driver(version=None)))), "cann.driver_compat", "skip")
    absent(judge(rules.cann_driver, context(facts(cann=cann(version=None)))), "cann.driver_compat")


# -- CANN and the release ---------------------------------------------------------------------------


def test_release_match():
    expect(judge(rules.cann_release, context()), "cann.release_match", "ok")
    f = expect(judge(rules.cann_release, context(facts(cann=cann(version="8.2.RC1")))), "cann.release_match", "fail")
    assert f.commands[0].argv[:4] == ("ascend-doctor", "fix", "--prefer", "keep-cann")
    assert f.hint.text("zh").startswith("安装 CANN 8.3.RC2") and "./" not in f.hint.text("en")  # words, no command
    f = expect(judge(rules.cann_release, context(facts(cann=cann(version="8.5.0")))), "cann.release_match", "warn")
    assert "8.3.RC2" in f.hint.text("en")
    absent(judge(rules.cann_release, context(row=None)), "cann.release_match")


def test_release_match_uses_the_hardware_cann():
    row = release(cann=("8.3.RC2",), cann_by_hardware={"310P": "8.2.RC1"})
    ctx = context(facts(cann=cann(version="8.2.RC1")), m=matrix([row]), hardware="310P")
    expect(judge(rules.cann_release, ctx), "cann.release_match", "ok")


# -- an undocumented CANN/driver pairing -------------------------------------------------------------


def _release_0_11_0rc3():
    return next(r for r in _shipped().releases if r.vllm_ascend == "0.11.0rc3")


def test_driver_not_documented_for_cann_is_a_warning_naming_the_documented_pairing():
    """CANN 8.3.RC2 has no published HDK list; driver 24.1.rc2 with it is unknown, never only
    information and never "too old": a warning that names the nearest documented pairing."""
    m = _shipped()
    ctx = context(facts(driver=driver(version="24.1.rc2")), m=m, row=_release_0_11_0rc3())
    f = expect(judge(rules.cann_driver, ctx), "cann.driver_compat", "warn")
    assert f.expected == "CANN 8.3.RC1 + HDK 25.3.rc1"
    assert "8.3.RC1" in f.title.text("en") and "25.3.rc1" in f.hint.text("en") and "too old" not in f.title.text("en")
