"""The user's pip configuration, read as pip reads it and carried over to uv (issue 20): every
place pip reads a pip.conf, PIP_* variables, what decides a resolution (indexes, find-links,
trusted hosts, no-index, constraints, pre-releases, binary choices, certificates, proxies,
timeouts); what uv cannot be told falls back to pip; bad input is exit 2 with one line."""
import os
import sys
from pathlib import Path

import pytest

from doctor.shell.install.index import IndexFetchError, pip_config_files, pip_index_config
from doctor.shell.install.installer import UvCannot, choose, uv_env, uv_flags, with_uv_env
import doctor_fork


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_every_place_pip_reads_in_pips_order(tmp_path):
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_DIRS": f"{tmp_path}/xdg1:{tmp_path}/xdg2",
           "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    files = pip_config_files(env, prefix=str(tmp_path / "venv"))
    assert files == [tmp_path / "xdg1/pip/pip.conf", tmp_path / "xdg2/pip/pip.conf", Path("/etc/pip.conf"),
                     tmp_path / "home/.pip/pip.conf", tmp_path / "cfg/pip/pip.conf", tmp_path / "venv/pip.conf"]
    own = write(tmp_path / "own.conf", "[global]\n")
    with_file = pip_config_files(dict(env, PIP_CONFIG_FILE=str(own)), prefix=str(tmp_path / "venv"))
    assert with_file[-1] == own and tmp_path / "home/.pip/pip.conf" not in with_file  # no user files then
    assert pip_config_files(dict(env, PIP_CONFIG_FILE=os.devnull)) == []


def test_later_files_install_sections_and_variables_win(tmp_path):
    glob = write(tmp_path / "xdg/pip/pip.conf", "[global]\nindex-url = https://a.example/simple\n"
                 "extra-index-url = file:///opt/one file:///opt/two\nconstraint = /etc/c.txt\n")
    user = write(tmp_path / "cfg/pip/pip.conf", "[global]\nfind-links = /opt/wheels\ntrusted-host = a.example\n"
                 "[install]\nindex-url = https://b.example/simple\npre = true\n")
    site = write(tmp_path / "venv/pip.conf", "[global]\nproxy = http://proxy.example:3128\ncert = /etc/ca.pem\n"
                 "only-binary = :all:\n")
    env = {"PIP_DEFAULT_TIMEOUT": "180", "PIP_NO_BINARY": "pyyaml", "PIP_CLIENT_CERT": "/etc/me.pem"}
    cfg = pip_index_config(env, files=[glob, user, site])
    assert cfg.index_url == "https://b.example/simple"  # [install] over [global]
    assert cfg.extra_index_urls == ["file:///opt/one", "file:///opt/two"] and cfg.find_links == ["/opt/wheels"]
    assert cfg.constraints == ["/etc/c.txt"] and cfg.pre and cfg.only_binary == [":all:"] and cfg.no_binary == ["pyyaml"]
    assert cfg.files == [str(glob), str(user), str(site)]
    assert uv_flags(cfg) == [
        "--no-config", "--index-url", "https://b.example/simple", "--extra-index-url", "file:///opt/one",
        "--extra-index-url", "file:///opt/two", "--find-links", "/opt/wheels", "--allow-insecure-host", "a.example",
        "--index-strategy", "unsafe-best-match", "--constraints", "/etc/c.txt", "--prerelease", "allow",
        "--only-binary", ":all:", "--no-binary", "pyyaml"]
    assert uv_env(cfg) == {"SSL_CERT_FILE": "/etc/ca.pem", "SSL_CLIENT_CERT": "/etc/me.pem",
                           "HTTPS_PROXY": "http://proxy.example:3128", "HTTP_PROXY": "http://proxy.example:3128",
                           "https_proxy": "http://proxy.example:3128", "http_proxy": "http://proxy.example:3128",
                           "UV_HTTP_TIMEOUT": "180"}
    # uv's own configuration does not leak in: the user's pip settings decide
    assert with_uv_env({"UV_INDEX_URL": "https://elsewhere/simple", "UV_CACHE_DIR": "/c", "PATH": "/bin"},
                       uv_env(cfg))["UV_CACHE_DIR"] == "/c"
    assert "UV_INDEX_URL" not in with_uv_env({"UV_INDEX_URL": "https://elsewhere/simple"}, {})
    # a single index needs no strategy; no-index drops every index
    assert "--index-strategy" not in uv_flags(pip_index_config({}, files=[]))
    assert uv_flags(pip_index_config({"PIP_NO_INDEX": "yes", "PIP_FIND_LINKS": "/w"}, files=[glob])) == [
        "--no-config", "--no-index", "--find-links", "/w", "--constraints", "/etc/c.txt"]


def test_what_uv_cannot_be_told_leaves_the_resolution_to_pip(tmp_path):
    conf = write(tmp_path / "pip.conf", "[global]\nuse-feature = truststore\n")
    cfg = pip_index_config({}, files=[conf])
    auto = choose("auto", "/env/bin/python", "/doctor/python", True, "/usr/bin/uv", cfg)
    assert auto.resolver.kind == "pip" and "use-feature" in auto.notes[-1] and str(conf) in auto.notes[-1]
    with pytest.raises(LookupError, match="use-feature"):
        choose("uv", "/env/bin/python", "/doctor/python", True, "/usr/bin/uv", cfg)
    bad = pip_index_config({"PIP_INDEX_URL": "ftp://mirror.example/simple"}, files=[])
    with pytest.raises(UvCannot, match="ftp://mirror.example/simple"):
        uv_flags(bad)


def test_a_broken_pip_conf_is_one_line(tmp_path):
    broken = write(tmp_path / "pip.conf", "[global\nindex-url = x\n")
    with pytest.raises(IndexFetchError, match=f"cannot read pip configuration {broken}"):
        pip_index_config({}, files=[broken])
    folder = tmp_path / "dir.conf"
    folder.mkdir()
    with pytest.raises(IndexFetchError, match="not a regular file"):
        pip_index_config({}, files=[folder])


@pytest.fixture
def seed_host(tmp_path):
    from fakehost import FakeHost
    from fakehost.kit import SCENARIOS

    fake = FakeHost(tmp_path / "host")
    SCENARIOS["seed_001_official_image"](fake)
    return fake


@pytest.mark.parametrize("conf,needle", [
    ("[global\nindex-url = https://x.example/simple\n", "cannot read pip configuration"),
    ("[global]\nindex-url = ftp://mirror.example/simple\n", "is not one uv can use"),
    # urllib raised ValueError inside fix: 'internal error: ValueError: Invalid IPv6 URL', exit 1
    ("[global]\nindex-url = http://x\x1b[31m/simple\n", "is not a URL (Invalid IPv6 URL)"),
    ("[global]\nextra-index-url = https://mirror.example:port/simple\n", "is not a URL (Port could not be cast"),
])
def test_fix_refuses_bad_pip_configuration_with_one_line(seed_host, tmp_path, conf, needle):
    path = write(tmp_path / "user.conf", conf)
    env = dict(seed_host.env, PIP_CONFIG_FILE=str(path), PYTHONPATH=str(Path(__file__).resolve().parents[3]))
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "fix", *seed_host.args()], env=env, capture_output=True,
                          text=True, timeout=120, cwd=seed_host.workdir)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ascend-doctor: error: ") and needle in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and not proc.stdout
