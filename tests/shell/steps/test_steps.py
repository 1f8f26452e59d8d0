"""doctor/shell/steps/: the appliers of the step kinds that run, and what they read and check on
temporary directories (a cloned tree's requirements files, downloaded files against their hashes)."""
import hashlib
from dataclasses import dataclass, field
from typing import Dict

import pytest

from doctor.errors import DoctorError
from doctor.shell import steps
from doctor.shell.steps.pip import hashed_requirements, verify
from doctor.shell.steps.requirements import requirements_file


def test_one_applier_per_kind_under_its_key():
    found = steps.appliers()
    assert found and all(key == a.key and a.round in steps.ROUNDS for key, a in found.items())


def test_requirements_are_read_inside_the_tree_only(tmp_path):
    tree = tmp_path / "vllm"
    (tree / "requirements").mkdir(parents=True)
    (tmp_path / "outside.txt").write_text("evil==1\n")
    (tree / "requirements" / "common.txt").write_text(
        "# comment\n"
        "numpy>=1.26  # inline\n"
        "--extra-index-url https://example.invalid/simple\n"
        "-r cuda.txt\n"
        "-r ../../outside.txt\n"
        "transformers >= 4.56\n")
    (tree / "requirements" / "cuda.txt").write_text("ray[cgraph]>=2.48\n-r common.txt\n")  # a loop ends
    got = requirements_file(tree / "requirements" / "common.txt")
    assert got[0] == "numpy>=1.26" and "transformers >= 4.56" in got and "ray[cgraph]>=2.48" in got
    assert not any("evil" in line for line in got)
    assert requirements_file(tree / "missing.txt") == []


@dataclass
class Resolved:
    name: str
    version: str
    filename: str
    hashes: Dict[str, str] = field(default_factory=dict)


def test_downloaded_files_are_checked_against_the_resolved_hashes(tmp_path):
    wheel = tmp_path / "a-1.0-py3-none-any.whl"
    wheel.write_bytes(b"wheel bytes")
    good = Resolved("a", "1.0", wheel.name, {"sha256": hashlib.sha256(b"wheel bytes").hexdigest()})
    assert verify([good], tmp_path) == {"a": wheel}
    assert hashed_requirements([good]) == f"a==1.0 --hash=sha256:{good.hashes['sha256']}\n"
    with pytest.raises(DoctorError, match="does not match"):
        verify([Resolved("a", "1.0", wheel.name, {"sha256": "0" * 64})], tmp_path)
    with pytest.raises(DoctorError, match="no sha256"):
        verify([Resolved("a", "1.0", wheel.name)], tmp_path)
    with pytest.raises(DoctorError, match="missing"):
        verify([Resolved("b", "1.0", "b-1.0-py3-none-any.whl", {"sha256": "0" * 64})], tmp_path)
