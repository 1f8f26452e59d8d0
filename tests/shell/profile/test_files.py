"""doctor/shell/profile/files.py: what a directory holds, on temporary directories."""
import json
import os

import pytest

from doctor.shell.profile import files


def _rank(root, name, *found):
    out = root / name / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    for f in found:
        (out / f).write_text("{}" if f.endswith(".json") else "Name,Duration(us)\n")
    return root / name


def test_a_cluster_of_torch_npu_ranks_and_one_not_analysed(tmp_path):
    _rank(tmp_path, "node1_1_ascend_pt", "trace_view.json", "kernel_details.csv", "communication.json")
    _rank(tmp_path, "node1_2_ascend_pt", "kernel_details.csv")
    (tmp_path / "node1_3_ascend_pt" / "FRAMEWORK").mkdir(parents=True)  # not analysed yet
    layout = files.find(str(tmp_path))
    assert layout.kind == "torch_npu_cluster"
    assert sorted(r.label for r in layout.ranks) == ["node1_1_ascend_pt", "node1_2_ascend_pt"]
    assert [r.label for r in layout.raw] == ["node1_3_ascend_pt"]
    first = next(r for r in layout.ranks if r.label == "node1_1_ascend_pt")
    assert first.trace and first.trace.endswith("trace_view.json") and first.communication
    assert sorted(first.present) == ["communication.json", "kernel_details.csv", "trace_view.json"]


def test_a_bare_table_and_nothing_at_all(tmp_path):
    table = tmp_path / "kernel_details.csv"
    table.write_text("Name,Duration(us)\nMatMul,12.5\n")
    assert files.find(str(table)).kind == "bare_table"
    assert list(files.csv_rows(str(table))) == [["Name", "Duration(us)"], ["MatMul", "12.5"]]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(files.ProfileInputError, match="no profile here"):
        files.find(str(empty))
    with pytest.raises(files.ProfileInputError):
        files.find(str(tmp_path / "missing"))


def test_info_files_are_read_capped_and_never_through_a_link(tmp_path):
    info = tmp_path / "profiler_info_0.json"
    info.write_text(json.dumps({"config": {"level": "Level1"}}))
    assert files.read_json(str(info))["config"]["level"] == "Level1"
    with pytest.raises(files.ProfileInputError, match="larger than"):
        files.read_json(str(info), cap=4)
    link = tmp_path / "link.json"
    os.symlink(info, link)
    with pytest.raises(files.ProfileInputError):
        files.read_json(str(link))
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(files.ProfileInputError, match="not valid JSON"):
        files.read_json(str(tmp_path / "bad.json"))
