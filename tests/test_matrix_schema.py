"""Matrix files: every problem is reported with its file and the right line."""
from __future__ import annotations

from pathlib import Path

import pytest

from doctor.matrix.load import load_matrix, parse_file
from doctor.matrix.schema import MatrixError
from shipped import matrix as shipped_matrix

ROW = """[[release]]
vllm_ascend = "{version}"
vllm = "0.11.0"
python = ">=3.9,<3.12"
cann = ["8.3.RC2"]
torch = "2.7.1"
torch_npu = "2.7.1"
glibc_min = "2.24"
hardware = ["A2"]
source = "test row"
"""


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    # the loader caches validated files by content; keep these throw-away files out of ~/.cache
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def write(tmp_path: Path, text: str, name: str = "m.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def error_of(path: Path) -> MatrixError:
    with pytest.raises(MatrixError) as info:
        parse_file(path)
    return info.value


def line_of(text: str, needle: str) -> int:
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return n
    raise AssertionError(f"{needle!r} not in text")


def test_valid_row_loads(tmp_path):
    rows = parse_file(write(tmp_path, "schema_version = 1\n\n" + ROW.format(version="0.11.0rc3")))
    (r,) = rows["release"]
    assert r.vllm_ascend == "0.11.0rc3" and r.cann == ("8.3.RC2",) and r.curated and r.official_row
    assert r.origin.endswith("m.toml:3")


def test_broken_toml_reports_its_line(tmp_path):
    text = ROW.format(version="0.11.0rc3") + 'notes = "unterminated\n'
    p = write(tmp_path, text)
    e = error_of(p)
    assert e.line == line_of(text, 'notes = "unterminated')
    assert str(e).startswith(f"{p}:{e.line}: invalid TOML")


def test_missing_source_points_at_the_table(tmp_path):
    text = "schema_version = 1\n\n" + ROW.format(version="0.11.0rc3").replace('source = "test row"\n', "")
    p = write(tmp_path, text)
    e = error_of(p)
    assert e.line == line_of(text, "[[release]]")
    assert "missing required key 'source'" in e.message
    assert str(e).startswith(f"{p}:{e.line}:")


def test_unknown_key_points_at_its_line(tmp_path):
    text = ROW.format(version="0.11.0rc3") + 'torch_npux = "2.7.1"\n'
    e = error_of(write(tmp_path, text))
    assert e.line == line_of(text, "torch_npux")
    assert "unknown key" in e.message and "torch_npux" in e.message


def test_unknown_key_in_sources_table(tmp_path):
    text = ROW.format(version="0.11.0rc3") + '\n[release.sources]\ntorch_nup = "typo"\n'
    e = error_of(write(tmp_path, text))
    assert e.line == line_of(text, "[release.sources]")
    assert "torch_nup" in e.message


def test_unknown_top_level_key(tmp_path):
    text = "schema_version = 1\nreleases = []\n"
    e = error_of(write(tmp_path, text))
    assert e.line == 2 and "releases" in e.message


@pytest.mark.parametrize("key,bad,needle", [
    ("torch", '"2.7.x"', "PEP 440 version"),
    ("python", '">=3.9,<3.x"', "PEP 440 specifier"),
    ("cann", '["8.2.RC1", "eight-two"]', "Ascend version"),
    ("glibc_min", '"glibc2.24"', "PEP 440 version"),
    ("hardware", '["A2", "A9"]', "not one of"),
])
def test_bad_values_point_at_their_line(tmp_path, key, bad, needle):
    lines = ROW.format(version="0.11.0rc3").splitlines()
    lines = [f"{key} = {bad}" if line.startswith(f"{key} = ") else line for line in lines]
    text = "\n".join(lines) + "\n"
    e = error_of(write(tmp_path, text))
    assert e.line == line_of(text, f"{key} = {bad}")
    assert needle in e.message


def test_bad_value_in_second_row(tmp_path):
    text = ROW.format(version="0.11.0rc2") + "\n" + ROW.format(version="0.11.0rc3").replace('torch = "2.7.1"', 'torch = "two"')
    e = error_of(write(tmp_path, text))
    assert e.line == line_of(text, 'torch = "two"')
    assert "#2" in e.message


def test_bad_known_problem_points_at_its_table(tmp_path):
    text = ROW.format(version="0.11.0rc3") + '\n[[release.known_problems]]\nsummary = "x"\n'
    e = error_of(write(tmp_path, text))
    assert e.line == line_of(text, "[[release.known_problems]]")
    assert "source" in e.message


def test_duplicate_rows_are_rejected(tmp_path):
    text = ROW.format(version="0.11.0rc3") + "\n" + ROW.format(version="0.11.0RC3")
    e = error_of(write(tmp_path, text))
    second = [n for n, line in enumerate(text.splitlines(), 1) if line.startswith("vllm_ascend")][1]
    assert e.line == second
    assert "duplicate vllm_ascend" in e.message


def test_duplicate_cann_rows(tmp_path):
    text = ('[[cann]]\ncann = "8.2.RC1"\ncompatible = ["25.2"]\nsource = "a"\n\n'
            '[[cann]]\ncann = "8.2.RC1"\ncompatible = ["25.0"]\nsource = "b"\n')
    e = error_of(write(tmp_path, text))
    assert e.line == 7 and "duplicate cann" in e.message  # the key line of the second row


def test_unsupported_schema_version(tmp_path):
    e = error_of(write(tmp_path, "schema_version = 2\n"))
    assert e.line == 1 and "schema_version" in e.message


@pytest.mark.slow  # ~0.5 s of CPU or more: the whole matrix loaded with an overlay
def test_bad_user_overlay_is_skipped_with_a_warning(tmp_path):
    odir = tmp_path / "config" / "ascend-doctor"
    odir.mkdir(parents=True)
    bad = odir / "matrix-overlay.toml"
    bad.write_text(ROW.format(version="0.99.0") + "torch_npux = 1\n", encoding="utf-8")
    good = odir / "extra.toml"
    good.write_text(ROW.format(version="0.98.0").replace('source = "test row"', 'source = "t"\ncurated = false'),
                    encoding="utf-8")
    warnings = []
    m = load_matrix(env={"XDG_CONFIG_HOME": str(tmp_path / "config")}, warn=warnings.append)
    versions = [r.vllm_ascend for r in m.releases]
    assert "0.99.0" not in versions and "0.98.0" in versions
    assert len(warnings) == 1 and str(bad) in warnings[0] and "torch_npux" in warnings[0]
    assert str(bad) not in m.files and str(good) in m.files
    # the shipped rows are all still there
    assert "0.11.0rc3" in versions and len(versions) > 40


@pytest.mark.slow  # ~0.5 s of CPU or more: the whole matrix loaded with an overlay
def test_explicit_bad_matrix_file_raises(tmp_path):
    bad = write(tmp_path, ROW.format(version="0.99.0") + "torch_npux = 1\n")
    with pytest.raises(MatrixError) as info:
        load_matrix([bad], env={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert str(info.value).startswith(f"{bad}:11:")


@pytest.mark.slow  # ~0.5 s of CPU or more: the whole matrix loaded with an overlay
def test_uncurated_overlay_row_never_replaces_a_curated_one(tmp_path):
    shipped = shipped_matrix()
    curated = next(r for r in shipped.releases if r.vllm_ascend == "0.11.0rc3")
    overlay = write(tmp_path, ROW.format(version="0.11.0rc3").replace('torch = "2.7.1"', 'torch = "9.9.9"')
                    + "curated = false\n")
    m = load_matrix([overlay], user_overlays=False)
    row = next(r for r in m.releases if r.vllm_ascend == "0.11.0rc3")
    assert row.torch == curated.torch == "2.7.1"
    # a curated overlay row does replace it (that is how a local correction works)
    fix = write(tmp_path, ROW.format(version="0.11.0rc3").replace('torch = "2.7.1"', 'torch = "2.7.2"'), "fix.toml")
    m = load_matrix([fix], user_overlays=False)
    assert next(r for r in m.releases if r.vllm_ascend == "0.11.0rc3").torch == "2.7.2"


def test_cli_reports_bad_matrix_file_in_one_line(tmp_path, capsys):
    from doctor.cli.main import main

    bad = write(tmp_path, ROW.format(version="0.99.0") + "torch_npux = 1\n")
    with pytest.raises(SystemExit) as info:
        main(["matrix", "show", "--matrix", str(bad)])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{bad}:11:" in err[0] and "Traceback" not in err[0]


def test_every_field_is_documented():
    """The schema is declared once (doctor/matrix/model.py); docs/matrix.md names every field."""
    from doctor.matrix.model import (CannDriver, MooncakeKey, PackageSet, Release, Threshold, TorchNpu,
                                     TorchRow, schema_of)

    doc = (Path(__file__).resolve().parents[1] / "docs" / "matrix.md").read_text(encoding="utf-8")
    missing = [f"{cls.__name__}.{name}" for cls in (Release, CannDriver, TorchNpu, TorchRow, MooncakeKey,
                                                    Threshold, PackageSet)
               for name in schema_of(cls) if f"`{name}" not in doc and f".{name}]" not in doc]
    assert missing == []


def test_schema_is_derived_from_the_row_types():
    from doctor.matrix.model import RELEASE_FACTS, RELEASE_SCHEMA, Release, row_from

    assert list(RELEASE_SCHEMA)[:3] == ["vllm_ascend", "vllm", "python"] and "origin" not in RELEASE_SCHEMA
    assert RELEASE_SCHEMA["sources"].keys == RELEASE_FACTS and "cann" in RELEASE_FACTS and "notes" not in RELEASE_FACTS
    row = row_from(Release, {"vllm_ascend": "1.0", "vllm": "1.0", "python": ">=3.9", "cann": ["8.2.RC1"],
                             "torch": "2.5.1", "torch_npu": "2.5.1", "glibc_min": "2.17", "hardware": ["A2"],
                             "source": "x", "known_problems": [{"summary": "s", "source": "u"}]}, origin="f:1")
    assert row.cann == ("8.2.RC1",) and row.known_problems[0].summary == "s" and row.origin == "f:1"


def test_vllm_ascend_073_prereleases_record_why_their_python_range_is_not_their_own_guides():
    """0.7.3rc1/rc2's own guide says Python 3.9 or higher and setup.py lists 3.12; the range kept
    (>=3.9,<3.12) is the later policy's, and the pinned torch-npu build is given for 3.9-3.11 only."""
    import tomllib

    path = Path(__file__).resolve().parent.parent / "matrices" / "vllm-ascend.toml"
    rows = {r["vllm_ascend"]: r for r in tomllib.loads(path.read_text(encoding="utf-8"))["release"]}
    for v in ("0.7.3rc1", "0.7.3rc2"):
        r = rows[v]
        assert r["python"] == ">=3.9,<3.12"
        assert "Python: 3.9 or higher" in r["notes"] and "3.9, 3.10 and 3.11 only" in r["notes"]
        assert "v0.8.5rc1: >= 3.9, < 3.12" in r["sources"]["python"] and f"setup.py (v{v}" in r["sources"]["python"]
