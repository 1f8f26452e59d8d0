"""check --image REF through the docker SDK, against a real HTTP server on a unix socket that
answers the Engine API calls the doctor makes (tests/enginekit.py)."""
import contextlib
import importlib.util
import io
import json
import os
import socket
import sys

import pytest

import imagekit
from enginekit import Engine

# the [image] extra, installed with [test]; imported where a test uses it (not in every
# collecting worker)
pytestmark = pytest.mark.skipif(importlib.util.find_spec("docker") is None, reason="the docker SDK (ascend-doctor[image])")

SEED_TAG = imagekit.SEED_TAG
REPO_DIGEST = "sha256:" + "5e" * 32


def cli(*argv, env=None):
    from doctor.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(list(argv))
            except SystemExit as e:
                code = e.code
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    built = imagekit.seed_archives(tmp_path_factory)
    return {"seed": built["docker25"], "multi": built["oci"]}


@pytest.fixture
def engine(archives):
    e = Engine().start()
    e.add(SEED_TAG, archives["seed"], REPO_DIGEST)
    yield e
    e.stop()


def test_check_an_image_of_the_local_engine(engine):
    code, out, err = cli("check", "--json", "--image", SEED_TAG, env={"DOCKER_HOST": engine.host})
    assert code == 3, err
    doc = json.loads(out)
    img = doc["image"]
    assert img["source"] == "daemon" and img["names"][0] == SEED_TAG and img["digest"] == REPO_DIGEST
    assert img["platform"] == "linux/arm64/v8"
    assert img["origins"][0]["layer"] == 7 and doc["summary"]["root_cause"] == "vllm.version"
    calls = [(r["method"], r["path"].split("/", 2)[-1] if r["path"].startswith("/v1") else r["path"]) for r in engine.requests]
    assert ("GET", "/version") in calls
    assert ("GET", f"images/{SEED_TAG}/json") in calls and ("GET", f"images/{SEED_TAG}/get") in calls
    assert not any(m == "POST" for m, _ in calls)  # no pull unless asked


def test_pull_first(engine):
    engine.pullable["registry.local/serving:2"] = SEED_TAG
    code, out, err = cli("check", "--json", "--image", "registry.local/serving:2", "--pull", "--platform", "linux/arm64",
                         env={"DOCKER_HOST": engine.host})
    assert code == 3, err
    pulls = [r for r in engine.requests if r["method"] == "POST"]
    assert pulls and pulls[0]["query"]["fromImage"] == "registry.local/serving" and pulls[0]["query"]["tag"] == "2"
    assert pulls[0]["query"]["platform"] == "linux/arm64"
    code, out, err = cli("check", "--image", "registry.local/nothing:1", "--pull", env={"DOCKER_HOST": engine.host})
    assert code == 2 and err.strip().startswith("ascend-doctor: error: cannot pull registry.local/nothing:1: ")
    assert "pull access denied" in err and len(err.strip().splitlines()) == 1


def test_image_not_in_the_store(engine):
    code, out, err = cli("check", "--image", "quay.io/ascend/vllm-ascend:v9.9.9", env={"DOCKER_HOST": engine.host})
    assert code == 2 and out == ""
    assert err.strip() == ("ascend-doctor: error: image quay.io/ascend/vllm-ascend:v9.9.9 is not in the local Docker image "
                           "store: docker pull quay.io/ascend/vllm-ascend:v9.9.9, or add --pull")


def test_the_platform_is_asked_for_and_picked_from_what_comes(archives):
    """The export is asked for one platform (the platform query parameter); an engine that
    ignores it exports the whole multi-platform image and the doctor picks the variant."""
    for version in ("1.52", "1.43"):
        e = Engine(api_version=version).start()
        try:
            e.images["multi:1"] = {"tar": archives["multi"], "inspect": {
                "Id": "sha256:" + "0" * 64, "RepoTags": ["multi:1"], "Architecture": "amd64", "Os": "linux",
                "Config": {"Env": []}}}
            code, out, err = cli("check", "--json", "--image", "multi:1", "--platform", "linux/arm64",
                                 env={"DOCKER_HOST": e.host})
            assert code == 3, err
            assert json.loads(out)["image"]["platform"] == "linux/arm64/v8"
            get = next(r for r in e.requests if r["path"].endswith("/get"))
            assert json.loads(get["query"]["platform"]) == {"os": "linux", "architecture": "arm64"}
            # without --platform: the platform the engine reports for the reference
            code, out, err = cli("check", "--json", "--image", "multi:1", env={"DOCKER_HOST": e.host})
            assert json.loads(out)["image"]["platform"] == "linux/amd64"
        finally:
            e.stop()


def test_engine_that_dies_mid_export(engine):
    engine.drop_after = 20000
    code, out, err = cli("check", "--image", SEED_TAG, env={"DOCKER_HOST": engine.host})
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"ascend-doctor: error: the Docker daemon failed the save of {SEED_TAG}: ")


def test_no_socket(tmp_path):
    sock = tmp_path / "missing.sock"
    code, out, err = cli("check", "--image", SEED_TAG, env={"DOCKER_HOST": f"unix://{sock}"})
    assert code == 2 and out == ""
    assert err.strip() == (f"ascend-doctor: error: cannot reach the Docker daemon: there is no socket at {sock} (is "
                           "Docker running? sudo systemctl start docker; or set DOCKER_HOST to the daemon's socket)")


def test_socket_nobody_listens_on():
    e = Engine()
    s = socket.socket(socket.AF_UNIX)
    s.bind(e.socket)  # the file exists, nothing accepts: a daemon that died
    s.close()
    try:
        code, out, err = cli("check", "--image", SEED_TAG, env={"DOCKER_HOST": e.host})
    finally:
        e.stop()
    assert code == 2 and "connection refused" in err and "check DOCKER_HOST" in err
    assert len(err.strip().splitlines()) == 1


def test_permission_denied_reads_as_the_docker_group_hint():
    """Tests run as root, which no socket refuses: the message comes from the exception the SDK
    raises for EACCES (its text, as docker-py 7 words it)."""
    import docker

    from doctor.shell.images.daemon import explain

    try:
        try:
            raise PermissionError(13, "Permission denied")
        except PermissionError as inner:
            raise docker.errors.DockerException(
                "Error while fetching server API version: ('Connection aborted.', "
                "PermissionError(13, 'Permission denied'))") from inner
    except docker.errors.DockerException as e:
        err = explain(e, "unix:///var/run/docker.sock")
    assert err.key == "image.error.daemon_permission" and err.params == {"socket": "/var/run/docker.sock"}
    from doctor.i18n import tr

    assert "sudo usermod -aG docker $USER" in tr(err.key, "en", **err.params)


def test_tcp_host_refused():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    code, out, err = cli("check", "--image", SEED_TAG, env={"DOCKER_HOST": f"tcp://127.0.0.1:{port}"})
    assert code == 2 and len(err.strip().splitlines()) == 1 and f"127.0.0.1:{port}" in err


def test_without_the_docker_sdk(engine, monkeypatch):
    monkeypatch.setitem(sys.modules, "docker", None)
    code, out, err = cli("check", "--image", SEED_TAG, env={"DOCKER_HOST": engine.host})
    from doctor.program import IMAGE_EXTRA, own_pip_install, requirements

    assert code == 2 and own_pip_install(*requirements(IMAGE_EXTRA)) in err and "--image-tar image.tar" in err
    assert "ascend-doctor[" not in err and f"docker save {SEED_TAG} -o image.tar" in err


def test_check_without_image_never_imports_the_sdk():
    import subprocess

    from fakehost import REPO

    code = ("import sys, io, contextlib\n"
            "from doctor.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try: main(['check', '--json', '--site-packages', '.'])\n"
            "    except SystemExit: pass\n"
            "print(sorted(m for m in sys.modules if m == 'docker' or m.startswith(('docker.', 'doctor.shell.images'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(REPO)), cwd=str(REPO))
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr
