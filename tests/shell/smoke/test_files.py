"""doctor/shell/smoke/files.py: the smoke command's files, on temporary directories."""
import json
import os

import pytest

from doctor.shell.smoke import files


def test_reads_are_capped_and_errors_are_oserror(tmp_path):
    f = tmp_path / "smoke.toml"
    f.write_bytes(b"x" * 100)
    assert files.read_capped(str(f), 10) == b"x" * 10
    assert files.is_file(f) and not files.is_file(tmp_path) and not files.is_file(tmp_path / "none")
    with pytest.raises(OSError):
        files.read_capped(str(tmp_path / "none"), 10)


def test_a_model_directory_identity(tmp_path):
    (tmp_path / "config.json").write_text('{"a": 1}')
    (tmp_path / "model-1.safetensors").write_bytes(b"1" * 7)
    (tmp_path / "model.bin").write_bytes(b"2" * 5)
    (tmp_path / "README.md").write_text("not weights")
    (tmp_path / "sub.safetensors").mkdir()  # a directory is not a weight file
    assert files.weights_bytes(str(tmp_path)) == 12
    assert files.weights_bytes(str(tmp_path / "missing")) == 0
    import hashlib

    assert files.config_sha256(str(tmp_path), 4) == hashlib.sha256(b'{"a"').hexdigest()
    assert files.config_sha256(str(tmp_path / "missing"), 4) is None


def test_the_work_directory_holds_the_prompts_and_goes_away():
    with files.workdir(["The capital of France is"]) as (tmp, prompts):
        assert os.path.dirname(prompts) == tmp
        with open(prompts, encoding="utf-8") as fh:
            assert json.load(fh) == ["The capital of France is"]
    assert not os.path.exists(tmp)
