"""doctor/matrix/query.py on small literal matrices: which release runs here (CANN against the
driver: tests/test_matrix_query.py)."""

from doctor.matrix import query
from doctor.matrix.model import CannDriver

from rules.build import matrix, release

OLD = release(vllm_ascend="0.11.0", hardware=("A2", "A3", "310P"))
NEW_A3 = release(vllm_ascend="0.13.0", hardware=("A3",))
M = matrix([OLD, NEW_A3])


def test_the_hardware_filter_picks_a_release_that_supports_it():
    assert query.newest_release(M, hardware="A3").vllm_ascend == "0.13.0"
    assert query.newest_release(M, hardware="A2").vllm_ascend == "0.11.0"
    assert query.newest_release(M, hardware="A5") is None
    assert query.newest_release(M).vllm_ascend == "0.13.0"  # unknown hardware excludes nothing


def test_misfits_name_the_hardware():
    assert query.release_misfits(M, NEW_A3, hardware="310P") == ["runs on A3, not 310P"]
    assert query.release_misfits(M, OLD, hardware="310P") == []


def test_misfits_say_why():
    m = matrix([OLD], cann_driver=[CannDriver(cann="8.3.RC2", compatible=("25.0",), incompatible=("24.1",), source="s")])
    # no driver row for the installed CANN: the driver is not held against the release
    assert query.release_misfits(m, OLD, cann="8.2.RC1", driver="24.1.rc3", python="3.12.1", glibc="2.17") == [
        "needs CANN 8.3.RC2, not 8.2.RC1", "supports Python >=3.9,<3.12, not 3.12.1", "needs glibc >= 2.24, host has 2.17"]
    two = release(cann=("8.3.RC2", "8.3.RC1"))
    assert query.release_misfits(m, two, cann="8.2.RC1") == ["needs CANN 8.3.RC2 or 8.3.RC1, not 8.2.RC1"]
    assert query.release_misfits(m, OLD, driver="24.1.rc3") == ["driver 24.1.rc3 is too old for CANN 8.3.RC2"]
    assert query.release_misfits(m, OLD, driver="25.0.rc1") == []


def test_other_filters():
    assert query.newest_release(M, cann="8.2.RC1") is None
    assert query.newest_release(M, python="3.12.0") is None
    assert query.newest_release(M, python="3.11.4").vllm_ascend == "0.13.0"
    assert query.newest_release(matrix([OLD, release(vllm_ascend="0.13.0rc1")]), include_prereleases=False) \
        .vllm_ascend == "0.11.0"
    assert query.newest_release(M, glibc="2.17") is None


def test_release_for_installed():
    assert query.release_for_installed(M, "0.11.0")[0] is OLD
    row, note = query.release_for_installed(M, "0.11.0+local")
    assert row is OLD and "local build" in note
    row, note = query.release_for_installed(M, "0.12.1.dev4+gabc")
    assert row is OLD and "development build" in note
    assert query.release_for_installed(M, "0.14.0")[0] is None
    assert query.release_for_installed(M, "0.1.dev1+g1")[0] is None
