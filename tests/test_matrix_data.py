"""The shipped matrix: it loads, covers the index, agrees with index metadata, is consistent."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from doctor.matrix.query import cann_row, release_row, torch_npu_row, torch_row
from doctor.matrix.verify import load_metadata_file, verify
from doctor.versions import AscendVersion, pep440
from shipped import matrix as shipped_matrix

DATA = Path(__file__).parent / "data"
METADATA = [DATA / "index-metadata.json", DATA / "index-metadata-newer.json"]


@pytest.fixture(scope="module")
def matrix():
    return shipped_matrix()


def index_versions():
    lines = (DATA / "index-versions-vllm-ascend.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_shipped_matrix_loads(matrix):
    assert len(matrix.releases) >= 49
    assert len(matrix.cann_driver) >= 15 and len(matrix.torch_npu) >= 40 and len(matrix.torch) >= 20
    assert all(r.curated for r in matrix.releases)
    assert [pep440(r.vllm_ascend) for r in matrix.releases] == sorted(pep440(r.vllm_ascend) for r in matrix.releases)


def test_index_snapshot_is_well_formed():
    header = (DATA / "index-versions-vllm-ascend.txt").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("#") and "pip index versions --pre vllm-ascend" in header
    assert re.search(r"\d{4}-\d{2}-\d{2}", header)
    versions = index_versions()
    assert len(versions) == len(set(versions)) and all(pep440(v) for v in versions)
    assert {"0.7.1rc1", "0.23.0.post1", "0.27.1rc1", "0.30.0rc2"} <= set(versions)


@pytest.mark.parametrize("version", index_versions())
def test_every_index_release_has_a_row(matrix, version):
    assert release_row(matrix, version) is not None, f"vllm-ascend {version} is on the index but has no row"


def test_verify_against_index_metadata_has_no_unexplained_disagreements(matrix):
    packages = [p for path in METADATA for p in load_metadata_file(path)]
    found = verify(matrix, packages, index_versions=index_versions())
    assert found == [], "\n".join(d.line() for d in found)
    # every release had metadata to compare with
    versions = {p["version"] for p in packages if p["name"] == "vllm-ascend"}
    assert versions == set(index_versions())


def test_every_release_names_its_stack_rows(matrix):
    """Each release's CANN, torch and torch-npu builds have rows of their own (pins, glibc...)."""
    problems = []
    for r in matrix.releases:
        for c in list(r.cann) + list(r.cann_by_hardware.values()):
            if cann_row(matrix, c) is None:
                problems.append(f"{r.vllm_ascend}: no [[cann]] row for {c}")
        if torch_row(matrix, r.torch) is None:
            problems.append(f"{r.vllm_ascend}: no [[torch]] row for {r.torch}")
        for npu in r.torch_npu_accepted:
            row = torch_npu_row(matrix, npu)
            if row is None:
                problems.append(f"{r.vllm_ascend}: no [[torch_npu]] row for {npu}")
            elif pep440(row.torch) != pep440(r.torch):
                problems.append(f"{r.vllm_ascend}: torch-npu {npu} pins torch {row.torch}, row says {r.torch}")
    assert problems == []


def test_release_facts(matrix):
    for r in matrix.releases:
        assert r.source.strip()
        assert set(r.hardware) <= {"A2", "A3", "310P", "A5"} and "A2" in r.hardware
        for img in r.images:
            assert re.fullmatch(rf"quay\.io/ascend/vllm-ascend:v{re.escape(r.vllm_ascend)}"
                                r"(-openeuler|-a3|-a3-openeuler|-310p|-310p-openeuler|-a5|-a5-openeuler)?", img), img
        if r.mooncake:
            assert r.mooncake_install == ("pip" if pep440(r.mooncake) >= pep440("0.3.11.post1") else "source")
        if r.distribution == "sdist":
            assert r.notes and "sdist" in r.notes
        if "A5" in r.hardware:
            assert any(i.endswith("-a5") for i in r.images)
        for kp in r.known_problems:
            assert kp.summary and kp.source
        # the wheel's glibc per arch never exceeds glibc_min, which is their maximum
        for g in r.glibc_by_arch.values():
            assert pep440(g) <= pep440(r.glibc_min)
        if r.glibc_by_arch:
            assert max(r.glibc_by_arch.values(), key=pep440) == r.glibc_min


def test_known_facts_spot_checks(matrix):
    r = release_row(matrix, "0.11.0rc3")
    assert (r.vllm, r.torch, r.torch_npu, r.torch_npu_recommended, r.cann) == ("0.11.0", "2.7.1", "2.7.1", "2.7.1.post1", ("8.3.RC2",))
    assert r.transformers == "<=4.57.1" and r.numpy == "<2.0.0" and r.glibc_min == "2.24"
    r = release_row(matrix, "0.10.1rc1")
    assert r.vllm_accepted == ("0.10.1.1", "0.10.1")
    r = release_row(matrix, "0.20.2rc1")
    assert r.cann_for("310P")[0] == "9.1.0-beta.1" and r.glibc_for("aarch64") == "2.34" and r.glibc_for("x86_64") == "2.24"
    r = release_row(matrix, "0.7.3")
    assert "mindie-turbo==2.0rc1" in r.extra_requirements and r.distribution == "sdist"
    r = release_row(matrix, "0.23.0")
    assert (r.torch_npu, r.triton_ascend, r.mooncake, r.mooncake_install, r.glibc_min) == ("2.10.0.post4", "3.2.2", "0.3.11.post1", "pip", "2.34")
    for v in ("0.25.1rc1", "0.28.0rc1", "0.29.0rc1", "0.30.0rc2"):
        assert release_row(matrix, v).official_row is False
    assert release_row(matrix, "0.30.0rc1").cann == ("9.2.0",)
    # v0.9.1's installation guide requires CANN >= 8.2.RC1: the v0.9.1-dev copy of the matrix (8.1.RC1) is wrong
    for v in ("0.9.1rc2", "0.9.1rc3", "0.9.1"):
        r = release_row(matrix, v)
        assert r.cann == ("8.2.RC1",) and "installation.md" in r.source_of("cann"), v


@pytest.mark.parametrize("version,torch,cann,python", [
    ("2.14.0", "2.14.0", None, ">=3.10,<3.15"),         # no document names its CANN: unknown
    ("2.13.0", "2.13.0", None, ">=3.10,<3.15"),
    ("2.12.0.post3", "2.12.0", None, ">=3.10,<3.15"),
    ("2.12.0.post2", "2.12.0", "9.1.0", ">=3.10,<3.14"),  # branch v2.12.0-26.1.0
    ("2.11.0.post2", "2.11.0", "9.1.0", ">=3.10,<3.14"),
    ("2.10.0.post6", "2.10.0", "9.1.0", ">=3.10,<3.13"),
    ("2.10.0.post7", "2.10.0", None, ">=3.10,<3.15"),
    ("2.10.0rc2", "2.10.0", "8.5.0", ">=3.10,<3.13"),     # the README's table
    ("2.9.1", "2.9.1", "9.0.0", ">=3.10,<3.14"),
    ("2.9.0.post4", "2.9.0", "9.0.0", ">=3.10,<3.14"),
    ("2.9.0.post8", "2.9.0", "9.1.0", ">=3.10,<3.14"),
    ("2.8.0.post5", "2.8.0", "9.0.0", ">=3.9,<3.14"),
    ("2.7.1.post6", "2.7.1", "9.0.0", ">=3.9,<3.14"),
    ("2.7.1.post10", "2.7.1", "9.1.0", ">=3.9,<3.14"),
])
def test_torch_npu_builds_published_since(matrix, version, torch, cann, python):
    r = torch_npu_row(matrix, version)
    assert r is not None and r.version == version
    assert (r.torch, r.cann, r.python, r.glibc_min) == (torch, cann, python, "2.28")
    assert r.confirmed is (cann is None or "branch" not in (r.notes or ""))
    if cann is None:
        assert "unknown" in r.notes


def test_every_torch_npu_on_the_index_has_a_row(matrix):
    lines = (DATA / "index-versions-torch-npu.txt").read_text(encoding="utf-8").splitlines()
    listed = [v.strip() for v in lines if v.strip() and not v.startswith("#")]
    assert len(listed) > 50
    missing = [v for v in listed if torch_npu_row(matrix, v) is None]
    assert missing == []


def test_cann_rows_are_ordered_and_sourced(matrix):
    canns = [AscendVersion(r.cann) for r in matrix.cann_driver]
    assert canns == sorted(canns)
    undocumented = {r.cann for r in matrix.cann_driver if not r.documented}
    assert {"8.0.0", "8.3.RC2"} <= undocumented and "8.5.1" not in undocumented
    for r in matrix.cann_driver:
        assert r.source
        # a line is documented compatible or incompatible, never both; per-line sources name a line
        assert not set(r.documented) & set(r.incompatible), r.cann
        assert set(r.sources) <= set(r.documented) | set(r.incompatible), r.cann
        if not r.documented:
            assert r.notes and "Undocumented" in r.notes and r.source.startswith("docs/sources/"), r.cann


def test_torch_rows_are_consistent(matrix):
    for t in matrix.torch:
        v = pep440(t.torch)
        assert pep440(t.torchvision).release[:2] == (0, v.release[1] + 15), t
        if t.torchaudio:
            assert pep440(t.torchaudio).release[:2] == v.release[:2]
    for n in matrix.torch_npu:
        assert torch_row(matrix, n.torch) is not None, n.version
        if n.index == "obs" and n.arch:
            assert n.url and n.url.startswith("https://") and n.arch in n.url
