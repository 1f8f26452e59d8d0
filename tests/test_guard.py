"""`ascend-doctor guard`: judge a pip command before it runs, with real pip in report mode against
the metadata-faithful wheelhouse and check's rules on the environment that would result."""
import json
import subprocess
import sys

import pytest
from fakehost import FakeHost
from fakehost import wheelhouse as wh

from doctor.errors import UsageError
from doctor.findings import FAIL, OK, WARN, Finding, Verdict
from doctor.i18n import T
from doctor.usecases.guard import instead_requirements, parse_command, worse


@pytest.fixture
def healthy(tmp_path, house):
    """A healthy vllm-ascend 0.11.0rc3 environment (torch 2.7.1+cpu, torch-npu 2.7.1, vllm 0.11.0)."""
    fake = FakeHost(tmp_path / "host")
    wh._host(fake, "0.11.0rc3", house["template"])
    return fake


def guard(fake, house, *args, env=None):
    argv = [sys.executable, "-m", "doctor", "guard", "--root", str(fake.root), "--python", str(fake.python), *args]
    env = env or wh.pip_env(fake.env, house["dirs"].values())
    return subprocess.run(argv, env=env, cwd=fake.workdir, capture_output=True, text=True, timeout=300)


def test_seed_command_is_refused_with_what_it_breaks(healthy, house):
    proc = guard(healthy, house, "--json", "--", "pip", "install", "vllm==0.11.0", "torch_npu==2.8.0")
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)
    changed = {c["name"]: (c["before"], c["after"]) for c in doc["changes"]}
    assert changed["torch"] == ("2.7.1+cpu", "2.8.0+cpu")  # torch replaced
    assert changed["torch-npu"] == ("2.7.1", "2.8.0")
    assert any(v.startswith("vllm-ascend 0.11.0rc3 requires torch==2.7.1") for v in doc["violated"])
    assert {f["id"] for f in doc["findings"] if f["status"] == "fail"} >= {"torch.version", "torch_npu.version"}
    # what to run instead: vllm at the row's version without dependencies, proven safe
    assert doc["instead"]["argv"] == ["pip", "install", "--no-deps", "vllm==0.11.0"]
    assert any("torch_npu==2.8.0" in w for w in doc["instead_why"])
    # nothing was installed
    assert wh.versions(healthy.site)["torch"] == "2.7.1+cpu"


def test_run_installs_a_safe_command(healthy, house):
    healthy.uninstall("numpy")
    proc = guard(healthy, house, "--run", "--", "pip", "install", "numpy<2.0.0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "safe" in proc.stdout
    assert wh.versions(healthy.site)["numpy"] == "1.26.4"


@pytest.mark.slow
def test_run_refuses_a_breaking_command(healthy, house):
    proc = guard(healthy, house, "--run", "--", "pip", "install", "numpy==2.1.0")
    assert proc.returncode == 3
    assert "vllm_ascend.numpy" in proc.stdout
    assert wh.versions(healthy.site)["numpy"] == "1.26.4"  # not run


@pytest.mark.slow
def test_requirements_file_read_by_pip(healthy, house, tmp_path):
    """-r, -c and markers are pip's to read: the constraint holds numpy below 2, the marker
    leaves vllm 0.13.0 out, the nested file brings transformers."""
    healthy.uninstall("numpy")
    (tmp_path / "c.txt").write_text("numpy<2.0.0\n")
    (tmp_path / "base.txt").write_text("transformers==4.57.1\n")
    req = tmp_path / "req.txt"
    req.write_text("-c c.txt\n-r base.txt\nnumpy ; python_version >= '3'\nvllm==0.13.0 ; python_version < '3'\n")
    proc = guard(healthy, house, "--json", "-r", str(req))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert {(r["name"], r["version"]) for r in doc["would_install"]} == {("numpy", "1.26.4")}


@pytest.mark.slow
def test_check_requirements_judges_the_environment_after_the_file(healthy, house, tmp_path):
    req = tmp_path / "req.txt"
    req.write_text("numpy==2.1.0\n")
    argv = [sys.executable, "-m", "doctor", "check", "--json", "--requirements", str(req), "--root", str(healthy.root),
            "--python", str(healthy.python)]
    proc = subprocess.run(argv, env=wh.pip_env(healthy.env, house["dirs"].values()), cwd=healthy.workdir,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)
    numpy = next(f for f in doc["findings"] if f["id"] == "vllm_ascend.numpy")
    assert numpy["status"] == "fail" and "2.1.0" in numpy["observed"]
    assert doc["requirements"]["would_install"] == [{"name": "numpy", "version": "2.1.0"}]


# -- pure parts ---------------------------------------------------------------------------------

@pytest.mark.parametrize("argv,tool,sub,reqs", [
    (["pip", "install", "vllm==0.11.0", "torch_npu==2.8.0"], "pip", "install", ["vllm==0.11.0", "torch_npu==2.8.0"]),
    (["python3", "-m", "pip", "install", "-r", "r.txt", "-c", "c.txt", "x"], "pip", "install", ["x"]),
    (["pip3", "-q", "install", "--extra-index-url", "https://h/simple", "y>1"], "pip", "install", ["y>1"]),
    (["uv", "pip", "install", "--no-deps", "z"], "uv", "install", ["z"]),
    (["pip", "uninstall", "-y", "torch"], "pip", "uninstall", ["torch"]),
    (["pip", "list"], "pip", "other", []),
])
def test_parse_command(argv, tool, sub, reqs):
    c = parse_command(argv)
    assert (c.tool, c.sub, c.requirements) == (tool, sub, reqs)


@pytest.mark.parametrize("argv", [["conda", "install", "x"], [], ["pip", "install", "--target", "/x", "y"],
                                  ["pip", "install", "--user", "y"]])
def test_parse_command_refuses(argv):
    with pytest.raises(UsageError):
        parse_command(argv)


def test_instead_keeps_row_versions_only():
    c = parse_command(["pip", "install", "vllm", "torch_npu==2.8.0", "requests"])
    reqs, why = instead_requirements(c, {"vllm": "0.11.0", "torch-npu": "2.7.1"})
    assert reqs == ["vllm==0.11.0", "requests"]
    assert len(why) == 1 and "torch_npu==2.8.0" in why[0].text("en")


def test_worse_counts_only_what_gets_worse():
    f = lambda i, s: Finding(i, s, T("guard.safe"))  # noqa: E731
    before = Verdict([f("a", OK), f("b", WARN), f("c", FAIL)], None)
    after = Verdict([f("a", FAIL), f("b", WARN), f("c", FAIL), f("d", WARN)], None)
    assert [(x.id, x.status) for x in worse(before, after)] == [("a", FAIL), ("d", WARN)]


def test_pip_api_reads_requirement_files_wrongly(tmp_path):
    """pip-api is used only for hash-pinned requirement lines (bundles). On whole requirement
    files it is wrong: `-c c.txt` becomes a requirement named c.txt and --extra-index-url is
    dropped. If an upgrade fixes this, this test fails: then it may read requirement files."""
    import pip_api

    (tmp_path / "c.txt").write_text("numpy<2\n")
    req = tmp_path / "r.txt"
    req.write_text("-c c.txt\n--extra-index-url https://mirrors.huaweicloud.com/ascend/repos/pypi\nnumpy\n"
                   "torch==2.7.1 --hash=sha256:abcd\n")
    got = pip_api.parse_requirements(str(req))
    assert "c.txt" in got  # the constraints file read as a requirement
    assert str(got["torch"].specifier) == "==2.7.1" and got["torch"].hashes == {"sha256": ["abcd"]}  # right
