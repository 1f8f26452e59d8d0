"""doctor/versions.py, example by example: the orders and ranges the rules rely on."""
import pytest

from doctor.versions import (AscendVersion, in_version_range, local_label, parse_ranges, pep440, public, same_release,
                             satisfies)


@pytest.mark.parametrize("lo,hi", [
    ("23.0.rc1", "23.0.rc1.b070"),  # a build number comes after the plain version ...
    ("23.0.rc1.b070", "23.0.rc1.b080"),  # ... in numeric order ...
    ("23.0.rc1.b080", "23.0.rc2"),  # ... and before the next RC
    ("24.1.rc2", "24.1.rc2.2"), ("24.1.rc2", "24.1.rc2.b001"),  # x < x.2, x < x.bNNN
    ("8.2.RC1.alpha002", "8.2.RC1"), ("8.0.RC3", "8.0.0"),
])
def test_ascend_order(lo, hi):
    assert AscendVersion(lo) < AscendVersion(hi) and not AscendVersion(hi) < AscendVersion(lo)
    assert AscendVersion(lo) != AscendVersion(hi)


def test_case_and_separators_do_not_matter():
    assert AscendVersion("8.3.RC2") == AscendVersion("8.3.rc2") and AscendVersion("9.1.0-beta.1") == AscendVersion("9.1.0.beta1")


@pytest.mark.parametrize("version,line", [
    ("8.2.RC1.B150", "8.2.rc1"), ("25.0.rc1.1", "25.0.rc1"), ("8.5.0.2.220", "8.5.0"), ("8.0.0", "8.0.0"),
    ("8.3.RC2", "8.3.rc2"), ("24.1", "24.1"),
])
def test_release_line(version, line):
    assert AscendVersion(version).release_line() == line


def test_release_lines_of_different_rcs_differ():
    assert AscendVersion("8.3.RC1").release_line() != AscendVersion("8.3.RC2").release_line()
    assert AscendVersion("8.3.RC2.B010").release_line() == AscendVersion("8.3.RC2").release_line()


@pytest.mark.parametrize("version,expected", [
    ("7.0.0.1.1", True),  # the lower bound is in
    ("7.7.99", True),  # the upper bound is in
    ("7.7.99.1.231", True),  # compared on the bounds' three parts
    ("7.5.0.1.129", True),
    ("6.9.99", False), ("7.8.0", False),
])
def test_inclusive_ranges(version, expected):
    assert in_version_range(version, "7.0.0", "7.7.99") is expected


@pytest.mark.parametrize("version,expected", [("24.1.rc3", True), ("24.1.0", True), ("24.1", True),
                                              ("24.10.0", False), ("25.0.rc1", False), ("24.0.9", False)])
def test_prefix_family(version, expected):
    # [24.1,24.1.] is firmware's way of saying "the 24.1 family"
    assert in_version_range(version, "24.1", "24.1.") is expected


def test_parse_ranges():
    assert parse_ranges("[6.4.0,6.4.99],[7.0.0,7.7.99]") == [("6.4.0", "6.4.99"), ("7.0.0", "7.7.99")]
    assert parse_ranges("[24.1]") == [("24.1", "24.1")] and parse_ranges("none") == []


def test_pep440_helpers():
    assert same_release("2.7.1+cpu", "2.7.1") and not same_release("2.7.1", "2.7.1.post1")
    assert not same_release(None, "2.7.1") and not same_release("x", "x")
    assert public("0.11.2+empty") == "0.11.2" and public("garbage!") == "garbage!"
    assert local_label("0.11.2+empty") == "empty" and local_label("0.11.2") is None
    assert satisfies("1.26.4", "<2.0.0") is True and satisfies("2.2.0", "<2.0.0") is False
    assert satisfies("0.13.0rc1", ">=0.12") is True  # pre-releases count
    assert satisfies("x", "<2") is None and satisfies("1.0", "not a spec") is None
    assert pep440("") is None and pep440(" 1.0 ") == pep440("1.0")
