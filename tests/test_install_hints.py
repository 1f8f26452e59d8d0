"""The hints that install an optional part of the doctor (the docker SDK for --image, zstandard for
zstd layers, Ray for fleet check --ray) run as printed: the doctor is not on PyPI, so
``pip install 'ascend-doctor[image]'`` cannot work, and a bare ``pip`` in a shell where the venv
is not active installs into another environment. Each hint is the doctor's own interpreter,
quoted, ``-m pip install`` and the extra's requirements of pyproject.toml, in both languages."""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from doctor.i18n import LANGS, toml_loads, tr
from doctor.program import FLEET_EXTRA, IMAGE_EXTRA, own_pip_install, requirements

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def own_pip(line: str, lang: str) -> list:
    """The argv of the doctor's own pip command printed in ``line``: it starts at the quoted
    interpreter and ends at the end of the line or at a space or a ``;`` (never glued to prose)."""
    start = line.index(shlex.quote(sys.executable) + " -m pip install ")
    rest = line[start:]
    ends = [i for i in (rest.find(" ;"), rest.find(" ；"), rest.find("; "), rest.find(" （"), rest.find(" ("), rest.find(" ，"))
            if i >= 0]
    command = rest[:min(ends)] if ends else rest
    assert not any(ord(c) > 127 for c in command), f"{lang}: prose glued to the command: {command!r}"
    argv = shlex.split(command)
    assert argv[:4] == [sys.executable, "-m", "pip", "install"]
    return argv[4:]


def test_the_extras_are_pyprojects():
    extras = toml_loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    assert tuple(extras["image"]) == IMAGE_EXTRA and tuple(extras["fleet"]) == FLEET_EXTRA


def test_requirements_drop_markers_that_do_not_hold():
    wanted = ["docker>=6"] + (["zstandard>=0.19"] if sys.version_info < (3, 14) else [])
    assert list(requirements(IMAGE_EXTRA)) == wanted
    assert requirements(("a>=1; python_version < '3.0'", "b")) == ("b",)


@pytest.mark.parametrize("lang", LANGS)
def test_no_docker_sdk_installs_into_the_doctors_environment(lang):
    from doctor.shell.images.daemon import no_sdk

    e = no_sdk("registry.example/vllm-ascend:v0.11.0")
    line = tr(e.key, lang, **e.params)
    assert "ascend-doctor[" not in line and "\n" not in line
    assert own_pip(line, lang) == list(requirements(IMAGE_EXTRA))
    assert "docker save registry.example/vllm-ascend:v0.11.0 -o image.tar " in line


@pytest.mark.parametrize("lang", LANGS)
def test_zstd_layer_without_a_reader_installs_zstandard_into_the_doctors_environment(lang):
    from doctor.shell.images.archive import zstd_missing

    e = zstd_missing("sha256:ab")
    line = tr(e.key, lang, **e.params)
    assert "ascend-doctor[" not in line
    assert own_pip(line, lang) == ["zstandard>=0.19"]


@pytest.mark.parametrize("lang", LANGS)
def test_ray_missing_installs_ray_into_the_doctors_environment(lang, monkeypatch):
    from doctor.shell.fleet import ray_cluster

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ray_cluster.RayUnavailable) as err:
        ray_cluster.connect("127.0.0.1:1", timeout=1)
    line = tr(err.value.key, lang, **err.value.params)
    assert "ascend-doctor[" not in line and "<" not in line.replace("'ray>=2.9'", "")
    assert own_pip(line, lang) == ["ray>=2.9"]


@pytest.mark.parametrize("lang", LANGS)
def test_ray_of_another_version_pins_the_clusters_version(lang, monkeypatch):
    from doctor.shell.fleet import ray_cluster

    python = ".".join(map(str, sys.version_info[:3]))

    class FakeRay:
        @staticmethod
        def init(**kw):
            raise RuntimeError("Version mismatch: The cluster was started with:\n    Ray: 2.9.3\n    Python: "
                               f"{python}\nThis process on node 10.0.0.1 was started with:\n    Ray: 2.40.0\n"
                               f"    Python: {python}\n")

    monkeypatch.setitem(sys.modules, "ray", FakeRay)
    with pytest.raises(ray_cluster.RayUnavailable) as err:
        ray_cluster.connect("auto", timeout=5)
    line = tr(err.value.key, lang, **err.value.params)
    assert own_pip(line, lang) == ["ray==2.9.3"]
    assert own_pip_install("ray==2.9.3") == shlex.join([sys.executable, "-m", "pip", "install", "ray==2.9.3"])


def test_the_docs_print_no_extra_by_name():
    docs = Path(__file__).resolve().parents[1] / "docs"
    for name in ("docker.md", "check.md", "fleet.md"):
        text = (docs / name).read_text()
        assert "pip install 'ascend-doctor[" not in text and "pip install docker" not in text, name
