"""Selection questions: which row, which release runs here, which pins, CANN <-> driver."""
from __future__ import annotations

from pathlib import Path

import pytest

from doctor.matrix.load import load_matrix, parse_file
from doctor.matrix.model import Matrix
from doctor.matrix.query import (
    cann_supports_driver,
    newest_release,
    pins_for,
    release_for_installed,
    release_misfits,
    release_row,
    torch_npu_row,
)


@pytest.fixture(scope="module")
def shipped():
    return load_matrix(user_overlays=False)


def synthetic(tmp_path: Path, text: str) -> Matrix:
    p = tmp_path / "m.toml"
    p.write_text(text, encoding="utf-8")
    d = parse_file(p)
    return Matrix(releases=d.get("release", []), cann_driver=d.get("cann", []),
                  torch_npu=d.get("torch_npu", []), torch=d.get("torch", []), signatures=[], files=[str(p)])


# ---------------------------------------------------------------------------------------------
# release_for_installed


@pytest.mark.parametrize("installed,row,note_has", [
    ("0.11.0rc3", "0.11.0rc3", None),
    ("0.11.0rc3+local", "0.11.0rc3", "local build"),
    ("0.23.1.dev0+g5cb98caaa.d20260915", "0.23.0.post1", "development build"),
    ("0.11.1.dev6+gb30408353", "0.11.0", "development build"),
    ("0.10.2rc2.dev5+g88ca8a051", "0.10.2rc1", "development build"),
    ("0.13.0rc3.dev2", "0.13.0rc2", "development build"),
    ("0.1.dev1+g1234abc", None, "without a release tag"),
    ("0.99.0", None, "newer than the matrix"),
    ("0.9.9", None, "not a published release"),
    ("not-a-version", None, "not a PEP 440 version"),
    ("", None, "no vllm-ascend version"),
])
def test_release_for_installed(shipped, installed, row, note_has):
    got, note = release_for_installed(shipped, installed)
    assert (got.vllm_ascend if got else None) == row
    if note_has is None:
        assert note is None
    else:
        assert note_has in note and (installed or "") in note


# ---------------------------------------------------------------------------------------------
# newest_release


def test_newest_release_on_the_shipped_matrix(shipped):
    assert newest_release(shipped).vllm_ascend == shipped.releases[-1].vllm_ascend
    assert newest_release(shipped, include_prereleases=False).vllm_ascend == "0.23.0.post1"
    assert newest_release(shipped, cann="8.2.RC1", python="3.11").vllm_ascend == "0.11.0rc0"
    assert newest_release(shipped, cann="8.3.RC2", python="3.9").vllm_ascend == "0.11.0"
    assert newest_release(shipped, cann="8.3.RC2", python="3.11").vllm_ascend == "0.13.0rc1"
    assert newest_release(shipped, cann="8.5.1", python="3.11").vllm_ascend == "0.19.1rc1"
    # Python 3.12 starts at 0.21.0rc1
    assert newest_release(shipped, cann="9.0.0", python="3.12").vllm_ascend == "0.22.1rc1"
    assert newest_release(shipped, cann="9.0.0", python="3.12.1").vllm_ascend == "0.22.1rc1"
    assert newest_release(shipped, cann="8.5.1", python="3.12") is None
    # the 310P images of 0.20.2rc1..0.25.1rc1 use CANN 9.1.0-beta.1; other hardware never gets it
    assert newest_release(shipped, cann="9.1.0-beta.1", hardware="310P").vllm_ascend == "0.25.1rc1"
    assert newest_release(shipped, cann="9.1.0-beta.1", hardware="A2") is None
    assert newest_release(shipped, hardware="A5", cann="9.0.0").vllm_ascend == "0.22.1rc1"
    assert newest_release(shipped, hardware="A3", cann="8.2.RC1").vllm_ascend == "0.11.0rc0"


def test_newest_release_respects_glibc_per_arch(shipped):
    # aarch64 wheels of 0.20.2rc1..0.22.1rc1 are manylinux_2_34, x86_64 ones manylinux_2_24
    kw = dict(python="3.11", cann="9.0.0", glibc="2.31", wheel_only=True)
    assert newest_release(shipped, arch="x86_64", **kw).vllm_ascend == "0.22.1rc1"
    assert newest_release(shipped, arch="aarch64", **kw) is None
    # torch-npu 2.7.1+ wheels need glibc 2.28 even where vllm-ascend's own wheel needs 2.24
    assert newest_release(shipped, arch="x86_64", glibc="2.27", python="3.11", wheel_only=True).vllm_ascend == "0.9.2rc1"
    row = release_row(shipped, "0.11.0")
    assert any("glibc >= 2.28" in w for w in release_misfits(shipped, row, arch="x86_64", glibc="2.27"))


def test_newest_release_respects_the_driver(shipped):
    # CANN 9.1.0 excludes HDK 25.0.X; 9.0.1 still takes it
    assert newest_release(shipped, cann="9.1.0", driver="25.0.rc1.1") is None
    assert newest_release(shipped, driver="25.0.rc1.1", python="3.11").vllm_ascend == "0.25.1rc1"
    assert newest_release(shipped, driver="26.0.rc1").vllm_ascend == shipped.releases[-1].vllm_ascend
    row = release_row(shipped, "0.23.0")
    assert any("driver 25.0.rc1.1" in w for w in release_misfits(shipped, row, driver="25.0.rc1.1"))


def test_newest_release_skips_sdist_only_when_asked(shipped):
    assert newest_release(shipped, wheel_only=True).vllm_ascend == "0.26.0rc1"


# ---------------------------------------------------------------------------------------------
# pins_for


def test_pins_for_a_plain_release(shipped):
    pins = pins_for(shipped, "0.11.0rc3")
    assert pins.packages == {"vllm-ascend": "0.11.0rc3", "vllm": "0.11.0", "torch": "2.7.1",
                             "torch-npu": "2.7.1.post1", "torchvision": "0.22.1", "torchaudio": "2.7.1"}
    assert pins.extra_index_urls == ["https://mirrors.huaweicloud.com/ascend/repos/pypi"]
    assert pins.urls == {} and pins.notes == []


def test_pins_for_a_release_with_triton_and_exact_companions(shipped):
    pins = pins_for(shipped, release_row(shipped, "0.23.0"), arch="aarch64", python="3.12")
    p = pins.packages
    assert (p["torch"], p["torch-npu"], p["torchvision"], p["torchaudio"], p["triton-ascend"]) == \
        ("2.10.0", "2.10.0.post4", "0.25.0", "2.10.0", "3.2.2")
    assert "memfabric-hybrid" not in p  # unpinned extra requirement: no exact version to give


def test_pins_for_per_arch_python_builds(shipped):
    x86 = pins_for(shipped, "0.18.0", arch="x86_64", python="3.11")
    assert x86.packages["torch-npu"] == "2.9.0.post1+gitdc51c2d"
    assert x86.urls["torch-npu"].endswith("torch_npu-2.9.0.post1%2Bgitdc51c2d-cp311-cp311-manylinux_2_28_x86_64.whl")
    arm = pins_for(shipped, "0.18.0", arch="aarch64", python="3.10.14")
    assert arm.packages["torch-npu"] == "2.9.0.post1+git4c901a4"
    assert arm.packages["memfabric-hybrid"] == "1.0.8" and arm.packages["memcache-hybrid"] == "1.0.4"
    none = pins_for(shipped, "0.18.0", arch="aarch64", python="3.12")
    assert none.packages["torch-npu"] == "2.9.0"
    assert any("no torch-npu 2.9.0.post1 build for Python 3.12 on aarch64" in n for n in none.notes)
    assert any("outside" in n for n in none.notes)
    unknown = pins_for(shipped, "0.18.0")
    assert unknown.packages["torch-npu"] == "2.9.0.post1+git4c901a4"
    assert any("pass arch and Python" in n for n in unknown.notes)


def test_pins_for_dev_build_notes_where_it_lives(shipped):
    pins = pins_for(shipped, "0.7.1rc1")
    assert pins.packages["torch-npu"] == "2.5.1.dev20250218"
    assert any("pytorch-package.obs" in n for n in pins.notes)
    assert pins.packages["torchvision"] == "0.20.1"


def test_pins_for_unknown_release(shipped):
    with pytest.raises(KeyError):
        pins_for(shipped, "0.99.0")


def test_pins_companion_that_breaks_the_row_constraint(tmp_path):
    m = synthetic(tmp_path, """
[[release]]
vllm_ascend = "1.0.0"
vllm = "1.0.0"
python = ">=3.10"
cann = ["8.5.0"]
torch = "2.5.1"
torch_npu = "2.5.1"
torchvision = "<0.20.0"
glibc_min = "2.17"
hardware = ["A2"]
source = "t"

[[torch]]
torch = "2.5.1"
torchvision = "0.20.1"
torchaudio = "2.5.1"
python = ">=3.9"
source = "t"
""")
    pins = pins_for(m, "1.0.0")
    assert "torchvision" not in pins.packages and pins.packages["torchaudio"] == "2.5.1"
    assert any("torchvision <0.20.0" in n for n in pins.notes)


# ---------------------------------------------------------------------------------------------
# cann_supports_driver


CANN = """
[[cann]]
cann = "9.1.0"
drivers = ["26.1.0", "26.0.rc1", "25.5", "25.2"]
not_drivers = ["25.0"]
source = "t"

[[cann]]
cann = "8.5.1"
drivers = ["25.5"]
confirmed = false
source = "t"
"""


@pytest.mark.parametrize("cann,driver,status", [
    ("9.1.0", "25.5.1", "ok"),
    ("9.1.0", "26.0.rc1", "ok"),
    ("9.1.0", "25.2.3", "ok"),
    ("9.1.0", "25.0.rc1.1", "unsupported"),
    ("9.1.0", "24.1.rc3", "too_old"),
    ("9.1.0", "26.2.rc1", "untested"),
    ("9.1.0", "26.0.rc2", "unknown"),      # between listed lines
    ("9.1.0", "25.3.rc1", "unknown"),
    ("8.5.1", "25.5.2", "ok"),             # inferred row that lists it
    ("8.5.1", "24.1.0", "unknown"),        # inferred row: never too_old
    ("7.0.0", "23.0.0", "unknown"),        # no row at all
    ("9.1.0.RC1", "25.5.1", "unknown"),
])
def test_cann_supports_driver(tmp_path, cann, driver, status):
    m = synthetic(tmp_path, CANN)
    got, row = cann_supports_driver(m, cann, driver)
    assert got == status
    assert (row is None) == (cann in ("7.0.0", "9.1.0.RC1"))


def test_cann_supports_driver_on_shipped_rows(shipped):
    assert cann_supports_driver(shipped, "8.2.RC1", "24.1.rc2.2")[0] == "ok"
    assert cann_supports_driver(shipped, "8.2.rc1", "25.2.0")[0] == "ok"   # case of RC does not matter
    assert cann_supports_driver(shipped, "9.2.0", "25.2.1")[0] == "unsupported"
    assert cann_supports_driver(shipped, "8.1.RC1", "24.1.rc3")[0] == "too_old"


# ---------------------------------------------------------------------------------------------
# torch_npu_row


def test_torch_npu_row(shipped):
    assert torch_npu_row(shipped, "2.7.1.post1").index == "ascend-mirror"
    r = torch_npu_row(shipped, "2.9.0.post1+gitee7ba04")
    assert (r.arch, r.python, r.index) == ("aarch64", "==3.11.*", "obs")
    # an unknown local build falls back to its public version's row
    assert torch_npu_row(shipped, "2.10.0.post4+git1234567").version == "2.10.0.post4"
    assert torch_npu_row(shipped, "2.10.0").cann == "9.0.0"
    assert torch_npu_row(shipped, "1.0.0") is None and torch_npu_row(shipped, None) is None
