"""`matrix verify`: the matrix against the wheels' Requires-Dist, offline."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from doctor.errors import UsageError
from doctor.matrix.load import parse_file
from doctor.matrix.model import Matrix
from doctor.matrix.verify import load_metadata_file, requirement_specs, verify
from shipped import matrix as shipped_matrix

DATA = Path(__file__).parent / "data"

ROWS = """
[[release]]
vllm_ascend = "0.11.0rc3"
vllm = "0.11.0"
python = ">=3.9,<3.12"
requires_python = ">=3.9"
cann = ["8.3.RC2"]
torch = "2.7.1"
torch_npu = "2.7.1"
torch_npu_recommended = "2.7.1.post1"
transformers = "<=4.57.1"
numpy = "<2.0.0"
glibc_min = "2.24"
hardware = ["A2"]
source = "t"

[[release]]
vllm_ascend = "0.13.0"
vllm = "0.13.0"
python = ">=3.10,<3.12"
requires_python = ">=3.10"
cann = ["8.5.0"]
torch = "2.8.0"
torch_npu = "2.8.0.post2"
triton_ascend = "3.2.0"
transformers = ">=4.57.4,<5"
numpy = "<2.0.0"
glibc_min = "2.24"
hardware = ["A2"]
source = "t"
"""

META_0113 = {
    "name": "vllm-ascend", "version": "0.11.0rc3", "requires_python": ">=3.9",
    "requires_dist": ["numpy<2.0.0", "torch==2.7.1", "torchvision", "torch-npu==2.7.1",
                      "transformers<=4.57.1", "mindie-turbo==2.0rc1; extra == \"turbo\""],
    "file": "vllm_ascend-0.11.0rc3-cp311-cp311-manylinux_2_24_x86_64.whl",
}
META_0130 = {
    "name": "vllm_ascend", "version": "0.13.0", "requires_python": ">=3.10",
    "requires_dist": ["numpy<2.0.0", "torch==2.8.0", "torch_npu==2.8.0.post2", "transformers<5,>=4.57.4",
                      "triton-ascend==3.2.0"],
    "file": "vllm_ascend-0.13.0-cp311-cp311-manylinux_2_24_x86_64.whl",
}


def matrix_of(tmp_path: Path, text: str) -> Matrix:
    p = tmp_path / "m.toml"
    p.write_text(text, encoding="utf-8")
    d = parse_file(p)
    return Matrix(releases=d.get("release", []), cann_driver=[], torch_npu=[], torch=[], signatures=[], files=[str(p)])


def with_line(text: str, release: str, key: str, value: str) -> str:
    """Replace (or add) ``key = value`` in the row of ``release``."""
    blocks = text.split("[[release]]")
    out = []
    for b in blocks:
        if f'vllm_ascend = "{release}"' in b:
            lines = [line for line in b.splitlines() if not line.startswith(f"{key} =")]
            if value is not None:
                lines.insert(2, f"{key} = {value}")
            b = "\n".join(lines) + "\n"
        out.append(b)
    return "[[release]]".join(out)


def test_agreeing_rows_have_no_disagreements(tmp_path):
    m = matrix_of(tmp_path, ROWS)
    assert verify(m, [META_0113, META_0130]) == []


@pytest.mark.parametrize("key,value,field,needle", [
    ("torch", '"2.8.0"', "torch", "does not satisfy the wheel's torch==2.7.1"),
    ("torch_npu", '"2.7.1.post1"', "torch_npu", "torch-npu==2.7.1"),
    ("numpy", None, "numpy", "!= wheel <2.0.0"),
    ("numpy", '"<2.1.0"', "numpy", "!= wheel <2.0.0"),
    ("transformers", '"<4.57.1"', "transformers", "!= wheel <=4.57.1"),
    ("torchvision", '"<0.21.0"', "torchvision", "(any version)"),
    ("requires_python", '">=3.10"', "requires_python", "Requires-Python >=3.9"),
    ("requires_python", None, "requires_python", "(none)"),
    ("triton_ascend", '"3.2.0"', "triton_ascend", "does not require it"),
    ("glibc_min", '"2.17"', "glibc_min", "for x86_64 != 2.24"),
    ("distribution", '"sdist"', "distribution", "is a wheel"),
])
def test_each_field_disagreement_is_reported(tmp_path, key, value, field, needle):
    m = matrix_of(tmp_path, with_line(ROWS, "0.11.0rc3", key, value))
    found = verify(m, [META_0113, META_0130])
    assert [d.field for d in found] == [field], [d.line() for d in found]
    assert found[0].release == "0.11.0rc3" and needle in found[0].line()


def test_triton_pin_mismatch_and_missing(tmp_path):
    m = matrix_of(tmp_path, with_line(ROWS, "0.13.0", "triton_ascend", '"3.2.1"'))
    (d,) = verify(m, [META_0130])
    assert d.field == "triton_ascend" and "triton-ascend==3.2.0" in d.message
    m = matrix_of(tmp_path, with_line(ROWS, "0.13.0", "triton_ascend", None))
    (d,) = verify(m, [META_0130])
    assert d.field == "triton_ascend" and "the row has none" in d.message


def test_specifier_order_does_not_matter(tmp_path):
    # the row writes ">=4.57.4,<5", the wheel "<5,>=4.57.4"
    assert verify(matrix_of(tmp_path, ROWS), [META_0130]) == []


def test_documented_deviation_explains_a_field(tmp_path):
    text = with_line(ROWS, "0.11.0rc3", "torch_npu", '"2.7.1.post1"')
    text = text.replace('source = "t"\n\n[[release]]\nvllm_ascend = "0.13.0"',
                        'source = "t"\n\n[release.deviations]\ntorch_npu = "docs say post1"\n\n[[release]]\nvllm_ascend = "0.13.0"', 1)
    m = matrix_of(tmp_path, text)
    assert verify(m, [META_0113]) == []
    (d,) = verify(m, [META_0113], include_explained=True)
    assert d.explained == "docs say post1" and "[documented: docs say post1]" in d.line()


def test_releases_without_a_row(tmp_path):
    m = matrix_of(tmp_path, ROWS)
    extra = dict(META_0113, version="0.11.0")
    found = verify(m, [META_0113, extra], index_versions=["0.11.0rc3", "0.12.0rc1", "bogus"])
    assert [(d.release, d.field) for d in found] == [("0.11.0", "row"), ("0.12.0rc1", "row")]


def test_extras_and_foreign_markers_are_ignored():
    specs = requirement_specs([
        "torch==2.7.1", "mindie-turbo==2.0rc1; extra == 'turbo'",
        "numpy<2; sys_platform == 'win32'", "Torch_NPU==2.7.1; platform_machine == 'aarch64'",
    ])
    assert set(specs) == {"torch", "torch-npu"}
    assert str(specs["torch-npu"]) == "==2.7.1"


def test_metadata_file_errors(tmp_path):
    with pytest.raises(UsageError, match="cannot read metadata file"):
        load_metadata_file(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(UsageError, match="not valid JSON"):
        load_metadata_file(bad)
    bad.write_text('{"packages": [{"name": 1}]}', encoding="utf-8")
    with pytest.raises(UsageError, match=r"packages\[0\]"):
        load_metadata_file(bad)


# ---------------------------------------------------------------------------------------------
# the command


def run(args, capsys):
    from doctor.cli.main import main

    with pytest.raises(SystemExit) as info:
        main(["matrix"] + args)
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


def test_cli_verify_shipped_matrix_offline(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    code, out, err = run(["verify", "--metadata", str(DATA / "index-metadata.json"),
                          "--metadata", str(DATA / "index-metadata-newer.json"),
                          "--versions", str(DATA / "index-versions-vllm-ascend.txt")], capsys)
    assert code == 0, out + err
    assert "0 unexplained" in out and "49 releases checked" in out


def test_cli_verify_reports_disagreements_with_exit_3(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    overlay = tmp_path / "wrong.toml"
    # a curated overlay row that contradicts the 0.11.0rc3 wheel
    overlay.write_text(with_line(ROWS.split("[[release]]\nvllm_ascend = \"0.13.0\"")[0], "0.11.0rc3", "torch", '"2.9.0"'),
                       encoding="utf-8")
    code, out, err = run(["verify", "--metadata", str(DATA / "index-metadata.json"), "--matrix", str(overlay)], capsys)
    assert code == 3
    lines = [line for line in out.splitlines() if line.startswith("0.11.0rc3: ")]
    assert lines == ["0.11.0rc3: torch: matrix 2.9.0 does not satisfy the wheel's torch==2.7.1"]
    code, out, err = run(["verify", "--json", "--metadata", str(DATA / "index-metadata.json"), "--matrix", str(overlay)], capsys)
    assert code == 3
    doc = json.loads(out)
    assert [(d["release"], d["field"]) for d in doc["disagreements"]] == [("0.11.0rc3", "torch")]


def test_cli_verify_bad_metadata_file_is_exit_2(capsys, tmp_path):
    bad = tmp_path / "m.json"
    bad.write_text("[]", encoding="utf-8")
    code, out, err = run(["verify", "--metadata", str(bad)], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "packages" in err


# ---------------------------------------------------------------------------------------------
# the torch-npu table against the index's file list (issue 25: six builds with cp38-cp310 wheels
# only were missing, because a listing from Python 3.11 hides them)

NPU_FILES = [line.strip() for line in (DATA / "index-files-torch-npu.txt").read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
SIX = ["2.1.0", "2.1.0rc1", "2.1.0.post3", "2.2.0rc1", "2.3.1rc1", "2.4.0rc1"]


def shipped():
    return shipped_matrix()


def test_every_torch_npu_build_on_the_index_has_a_row_for_every_python():
    from doctor.matrix.verify import verify_torch_npu, wheel_pythons

    assert verify_torch_npu(shipped(), NPU_FILES) == []
    built = wheel_pythons(NPU_FILES)
    assert all(built[v] == {"3.8", "3.9", "3.10"} for v in SIX)  # no 3.11 wheel: pip index versions from 3.11 hides them


def test_a_missing_build_and_a_wrong_python_range_are_disagreements():
    import dataclasses

    from doctor.matrix.verify import verify_torch_npu

    m = shipped()
    gone = dataclasses.replace(m, torch_npu=[r for r in m.torch_npu if r.version not in ("2.2.0rc1", "2.4.0rc1")])
    got = verify_torch_npu(gone, NPU_FILES)
    assert [(d.release, d.field, d.metadata) for d in got] == [("2.2.0rc1", "torch_npu", "3.8, 3.9, 3.10"),
                                                               ("2.4.0rc1", "torch_npu", "3.8, 3.9, 3.10")]
    assert "has no row" in got[0].message
    wrong = dataclasses.replace(m, torch_npu=[dataclasses.replace(r, python=">=3.8,<3.12") if r.version == "2.1.0" else r
                                              for r in m.torch_npu])
    got = verify_torch_npu(wrong, NPU_FILES)
    assert [(d.release, d.field, d.matrix, d.metadata) for d in got] == [("2.1.0", "torch_npu.python", ">=3.8,<3.12",
                                                                           "3.8, 3.9, 3.10")]
    # a build for a Python no row covers, and files of other projects, say nothing
    assert verify_torch_npu(m, ["torch_npu-9.9.9-cp27-cp27mu-manylinux1_x86_64.whl",
                                "torch-2.1.0-cp310-cp310-manylinux1_x86_64.whl", "torch_npu-2.1.0.tar.gz"]) == []


def test_cli_verify_checks_the_torch_npu_files_offline(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    files = tmp_path / "files.txt"
    files.write_text("# listing\n" + "\n".join(NPU_FILES + ["torch_npu-2.0.1-cp39-cp39-manylinux2014_x86_64.whl"]) + "\n",
                     encoding="utf-8")
    code, out, err = run(["verify", "--metadata", str(DATA / "index-metadata.json"),
                          "--torch-npu-files", str(files)], capsys)
    assert code == 3
    assert "2.0.1: torch_npu: torch-npu 2.0.1 is on the index (wheels for Python 3.9) but the torch-npu table has no row" in out
