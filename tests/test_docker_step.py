"""The Dockerfile's build step (docker/build-step.sh) on fake image roots.

There is no Docker engine here, so the step script runs directly against an unpacked-image-like
root (DOCTOR_ROOT) and the image's interpreter (DOCTOR_PYTHON), exactly as the RUN line does.
"""
import subprocess
import sys
from pathlib import Path

import pytest

from fakehost import official_image
from fakehost.scenarios import release_packages

ROOT = Path(__file__).resolve().parents[1]
STEP = ROOT / "docker" / "build-step.sh"


def run_step(fake, tmp_path, **env):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "ascend-doctor"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m doctor "$@"\n')
    shim.chmod(0o755)
    full = dict(fake.env)
    full.update(env)
    full.update(PATH=f"{bin_dir}:/usr/bin:/bin", PYTHONPATH=str(ROOT), DOCTOR_ROOT=str(fake.root),
                DOCTOR_PYTHON=str(fake.python))
    return subprocess.run(["sh", str(STEP)], env=full, capture_output=True, text=True, timeout=300, cwd=fake.workdir)


def image(fake, sourced=True):
    fake.toolkit("8.3.RC2")
    if sourced:
        fake.sourced(driver=False)
    return fake


def test_a_consistent_image_passes(fake, tmp_path):
    image(fake).venv(release_packages("0.11.0rc3"))
    proc = run_step(fake, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "build stage" in proc.stdout


def test_the_official_0110rc3_image_fails_its_build(fake, tmp_path):
    image(fake).venv(release_packages("0.11.0rc3"))
    fake.install(official_image(workspace=tmp_path / "vllm-workspace"))
    proc = run_step(fake, tmp_path)
    assert proc.returncode == 3
    assert "vllm.version" in proc.stdout


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs on a fake image build
def test_warnings_pass_unless_asked_to_fail(fake, tmp_path):
    image(fake, sourced=False).venv(release_packages("0.11.0rc3"))  # set_env.sh not in ENV: a warning
    assert run_step(fake, tmp_path).returncode == 0
    assert run_step(fake, tmp_path, DOCTOR_FAIL_ON="warn").returncode == 3


def test_dockerfile_runs_the_step_with_its_build_args():
    text = (ROOT / "Dockerfile").read_text()
    assert "ARG BASE=quay.io/ascend/vllm-ascend:" in text
    assert "COPY docker/build-step.sh /opt/ascend-doctor/build-step.sh" in text
    assert 'DOCTOR_FIX="${DOCTOR_FIX}"' in text and "sh /opt/ascend-doctor/build-step.sh" in text
    for copied in ("pyproject.toml", "doctor", "matrices"):
        assert (ROOT / copied).exists()
