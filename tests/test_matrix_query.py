"""Selection questions: which row, which release runs here, which pins, CANN <-> driver."""
from __future__ import annotations

from pathlib import Path

import pytest

from doctor.matrix.load import load_matrix, parse_file
from doctor.matrix.model import Matrix
from doctor.matrix.query import (
    cann_supports_driver,
    driver_compat,
    newest_release,
    pins_for,
    release_for_installed,
    release_misfits,
    release_row,
    torch_npu_row,
)
from shipped import matrix as shipped_matrix


@pytest.fixture(scope="module")
def shipped():
    return shipped_matrix()


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
    assert any("no torch-npu 2.9.0.post1 build for Python 3.12 on aarch64" in n for n in map(str, none.notes))
    assert any("outside" in n for n in map(str, none.notes))
    unknown = pins_for(shipped, "0.18.0")
    assert unknown.packages["torch-npu"] == "2.9.0.post1+git4c901a4"
    assert [str(n) for n in unknown.notes] == [
        "torch-npu 2.9.0.post1 is built per Python and arch; 2.9.0.post1+git4c901a4 is the build for aarch64 "
        "Python ==3.10.*: pass arch and Python to pick yours"]


def test_pins_for_dev_build_notes_where_it_lives(shipped):
    pins = pins_for(shipped, "0.7.1rc1")
    assert pins.packages["torch-npu"] == "2.5.1.dev20250218"
    assert any("pytorch-package.obs" in n for n in map(str, pins.notes))
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
    assert any("torchvision <0.20.0" in n for n in map(str, pins.notes))


# ---------------------------------------------------------------------------------------------
# CANN <-> driver: documented compatible / documented incompatible / undocumented


CANN = """
[[cann]]
cann = "9.1.0"
paired = "26.0.rc1"
compatible = ["26.1.0", "25.5", "25.2"]
incompatible = ["25.0"]
source = "https://example.org/910"
[cann.sources]
"26.1.0" = "https://example.org/911"

[[cann]]
cann = "9.2.0"
paired = "26.2.rc1"
compatible = ["25.5", "25.3"]
incompatible = ["27.0", "25.2"]
source = "https://example.org/920"

[[cann]]
cann = "8.1.RC1"
paired = "25.0.rc1"
source = "https://example.org/deployer"

[[cann]]
cann = "8.3.RC1"
paired = "25.3.rc1"
source = "https://example.org/831"

[[cann]]
cann = "8.3.RC2"
notes = "nothing documented"
source = "docs/sources/cann-driver.md"
"""


@pytest.mark.parametrize("cann,driver,status,line,source", [
    ("9.1.0", "25.5.1", "ok", "25.5", "https://example.org/910"),
    ("9.1.0", "26.0.rc1.2", "ok", "26.0.rc1", "https://example.org/910"),   # the paired HDK counts
    ("9.1.0", "26.1.0", "ok", "26.1.0", "https://example.org/911"),         # a line's own source
    ("9.1.0", "25.0.rc1.1", "too_old", "25.0", "https://example.org/910"),  # an N line below the Y lines
    ("9.1.0", "24.1.rc3", "too_old", "25.0", "https://example.org/910"),    # below that N line too
    ("9.2.0", "27.0.1", "too_new", "27.0", "https://example.org/920"),      # an N line above the Y lines
    ("9.2.0", "25.2.1", "too_old", "25.2", "https://example.org/920"),
    ("9.2.0", "26.0.rc1", "unsupported", "25.2", None),                     # not below 27.0's floor... see below
])
def test_driver_compat_documented(tmp_path, cann, driver, status, line, source):
    m = synthetic(tmp_path, CANN)
    got = driver_compat(m, cann, driver)
    if cann == "9.2.0" and driver == "26.0.rc1":
        # between the Y lines and the N line above them: nothing documented
        assert got.status == "unknown" and got.line is None
        return
    assert (got.status, got.line, got.source) == (status, line, source)
    assert got.nearest is None


@pytest.mark.parametrize("cann,driver,near", [
    ("8.1.RC1", "24.1.rc3", ("8.1.RC1", "25.0.rc1", "https://example.org/deployer")),  # only the paired HDK is named
    ("9.1.0", "25.3.rc1", ("9.1.0", "25.2", "https://example.org/910")),                # between documented lines
    ("9.1.0", "26.3.0", ("9.1.0", "26.1.0", "https://example.org/911")),                # newer than every line
    ("8.3.RC2", "24.1.rc2", ("8.3.RC1", "25.3.rc1", "https://example.org/831")),        # a row without lines
    ("8.3.RC3", "25.3.rc1.2", ("8.3.RC1", "25.3.rc1", "https://example.org/831")),      # no row: same family
    ("7.0.0", "23.0.0", ("8.1.RC1", "25.0.rc1", "https://example.org/deployer")),       # no row, no family
])
def test_driver_compat_undocumented_is_unknown_with_the_nearest_pairing(tmp_path, cann, driver, near):
    m = synthetic(tmp_path, CANN)
    got = driver_compat(m, cann, driver)
    assert got.status == "unknown" and got.line is None
    assert (got.nearest.cann, got.nearest.driver, got.nearest.source) == near
    assert cann_supports_driver(m, cann, driver)[0] == "unknown"


def test_driver_compat_without_any_documentation(tmp_path):
    m = synthetic(tmp_path, '[[cann]]\ncann = "8.3.RC2"\nsource = "docs/sources/cann-driver.md"\n')
    got = driver_compat(m, "8.3.RC2", "25.3.rc1")
    assert got.status == "unknown" and got.nearest is None and got.row.cann == "8.3.RC2"


HDK_920 = "https://www.hiascend.com/document/detail/en/CANNCommunityEdition/920/softwareinst/releasenote/9.2.0/release-notes.md"


@pytest.mark.parametrize("cann,driver,status", [
    # CANN 9.2.0's own table: Y for 25.3.X, 25.5.X, 26.0.RC1/25.7.RC1, 26.1.1, 26.2.RC1; N for 25.0.X, 25.2.X
    ("9.2.0", "25.3.1", "ok"), ("9.2.0", "25.5.1", "ok"), ("9.2.0", "26.0.rc1", "ok"),
    ("9.2.0", "25.7.rc1", "ok"), ("9.2.0", "26.1.1", "ok"), ("9.2.0", "26.2.rc1", "ok"),
    ("9.2.0", "25.0.rc1.1", "too_old"), ("9.2.0", "25.2.1", "too_old"),
    # the same table's 8.5.2 / 9.0.X / 9.1.X rows reach 26.1.1 and 26.2.RC1
    ("8.5.2", "26.1.1", "ok"), ("8.5.2", "26.2.rc1", "ok"), ("9.0.0", "26.1.1", "ok"),
    ("9.0.0", "26.2.rc1", "ok"), ("9.0.1", "26.2.rc1", "ok"), ("9.1.0", "26.2.rc1", "ok"),
    ("9.1.1", "26.1.1", "ok"), ("9.1.1", "25.2.0", "ok"), ("9.1.1", "25.0.rc1", "too_old"),
    ("8.2.RC1", "24.1.rc2.2", "ok"), ("8.2.rc1", "25.2.0", "ok"),     # case of RC does not matter
    ("8.2.RC1", "25.2.1", "unknown"),                               # the notes name 25.2.0, not 25.2.X
    ("9.1.1", "26.1.0", "ok"),                                      # the 9.1.0 notes' 9.1.X row
    # MindIE 26.0.0: CANN 8.5.1 uses the HDK of CANN 8.5.0
    ("8.5.1", "25.5.1", "ok"), ("8.5.1", "25.0.rc1", "ok"), ("8.5.1", "24.1.0", "unknown"),
    ("9.1.0", "24.1.rc3", "too_old"),                               # below the 25.0.X N floor
    # not documented: never too old
    ("8.1.RC1", "24.1.rc3", "unknown"), ("8.3.RC2", "24.1.rc2", "unknown"), ("8.3.RC2", "25.0.rc1.1", "unknown"),
])
def test_driver_compat_on_shipped_rows(shipped, cann, driver, status):
    assert driver_compat(shipped, cann, driver).status == status


def test_shipped_sources_and_nearest_pairings(shipped):
    assert driver_compat(shipped, "9.2.0", "25.5.1").source == HDK_920
    assert driver_compat(shipped, "9.2.0", "25.2.1").source == HDK_920
    assert driver_compat(shipped, "8.5.2", "26.2.rc1").source == HDK_920
    row = driver_compat(shipped, "9.1.1", "26.1.1").row
    assert row.paired == "26.1.1" and "9.1.1" in row.source
    near = driver_compat(shipped, "8.3.RC2", "24.1.rc2").nearest
    assert (near.cann, near.driver) == ("8.3.RC1", "25.3.rc1") and near.source.startswith("https://")
    assert driver_compat(shipped, "9.1.1", "26.1.0").source.endswith("9.1.0/release-notes.md (the 9.1.X row)")
    assert "MindIE/26.0.0" in driver_compat(shipped, "8.5.1", "25.3.1").source
    near = driver_compat(shipped, "8.1.RC1", "24.1.rc3").nearest
    assert (near.cann, near.driver) == ("8.1.RC1", "25.0.rc1")


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


# ---------------------------------------------------------------------------------------------
# knowledge the checks apply: key windows, thresholds, package sets (matrices/mooncake.toml)


def test_mooncake_knowledge_is_read_from_the_matrix(shipped):
    from doctor.matrix.query import key_row, key_windows, package_set, threshold

    config = key_windows(shipped, "config")
    assert config["preferred_segment"] == ("0.20.2rc1", None) and config["use_ascend_direct"] == (None, "0.12.0rc1")
    assert key_windows(shipped, "layerwise")["prefill"] == (None, "0.15.0rc1")
    # facts audit, third sample (seed 27): the yuanrong backend is in backend_map from v0.19.1rc1, and the
    # store connector reads prefill_tp_size / decode_tp_size from v0.24.0rc1 (config_data.py), not only on main
    assert key_windows(shipped, "store_backend")["yuanrong"] == ("0.19.1rc1", None)
    assert all(key_windows(shipped, "store")[k] == ("0.24.0rc1", None) for k in ("prefill_tp_size", "decode_tp_size"))
    # facts audit (docs/facts-audit.md): the releases/v0.13.0 branch read these before 0.14.0rc1
    store = key_windows(shipped, "store")
    assert all(store[k] == ("0.13.0rc2", None) for k in ("consumer_is_to_put", "prefill_pp_size", "prefill_pp_layer_partition"))
    assert key_windows(shipped, "layerwise")["tls_config"] == ("0.13.0rc3", None)
    assert key_row(shipped, "store", "h2d_stagger_us").source.startswith("https://github.com/vllm-project/vllm-ascend/blob/")
    assert threshold(shipped, "mooncake_first_npu_wheel") == "0.3.11.post1"
    assert threshold(shipped, "mooncake_npu_wheel_glibc") == "2.35"
    assert {"nvidia-*", "torch", "xformers"} <= set(package_set(shipped, "vllm_not_on_ascend"))
    with pytest.raises(KeyError):
        threshold(shipped, "no.such.threshold")


@pytest.mark.slow  # ~0.5 s of CPU or more: the whole matrix loaded with an overlay
def test_an_overlay_changes_what_the_checks_compare_with(tmp_path):
    from doctor.matrix.query import key_windows, threshold
    from doctor.rules.mooncake_config import key_status

    overlay = tmp_path / "o.toml"
    overlay.write_text('[[threshold]]\nname = "mooncake_first_npu_wheel"\nversion = "0.3.12"\nmeaning = "m"\n'
                       'source = "https://example.org/x"\n\n'
                       '[[mooncake_key]]\nscope = "config"\nkey = "preferred_segment"\nsince = "0.21.0rc1"\n'
                       'source = "https://example.org/y"\n', encoding="utf-8")
    m = load_matrix([overlay], user_overlays=False)
    assert threshold(m, "mooncake_first_npu_wheel") == "0.3.12"
    keys = key_windows(m, "config")
    assert key_status("preferred_segment", "0.20.2rc1", keys) == "not_yet"
    assert key_status("preferred_segment", "0.21.0rc1", keys) == "read"
    assert key_status("enable_ssd_offload", "0.21.0rc1", keys) == "read"   # the other rows stay


def test_duplicate_key_windows_are_rejected(tmp_path):
    from doctor.matrix.schema import MatrixError

    p = tmp_path / "m.toml"
    row = '[[mooncake_key]]\nscope = "store"\nkey = "backend"\nsource = "https://example.org/z"\n\n'
    p.write_text(row + row, encoding="utf-8")
    with pytest.raises(MatrixError, match="duplicate scope/key 'store/backend'"):
        parse_file(p, cache=False)
