"""`ascend-doctor guard`: judge a pip command before it runs, with real pip in report mode against
the metadata-faithful wheelhouse and check's rules on the environment that would result."""
import json
import sys

import pytest
from fakehost import FakeHost
from fakehost import wheelhouse as wh

from doctor.errors import UsageError
from doctor.findings import FAIL, OK, WARN, Finding, Verdict
from doctor.i18n import T
from doctor.usecases.guard import instead_requirements, parse_command, worse
import doctor_fork


@pytest.fixture
def healthy(tmp_path, house):
    """A healthy vllm-ascend 0.11.0rc3 environment (torch 2.7.1+cpu, torch-npu 2.7.1, vllm 0.11.0)."""
    fake = FakeHost(tmp_path / "host")
    wh._host(fake, "0.11.0rc3", house["template"])
    return fake


def guard(fake, house, *args, env=None):
    argv = [sys.executable, "-m", "doctor", "guard", "--root", str(fake.root), "--python", str(fake.python), *args]
    env = env or wh.pip_env(fake.env, house["dirs"].values())
    return doctor_fork.run(argv, env=env, cwd=fake.workdir, capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # ~0.5 s of CPU or more: real pip against the wheelhouse
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
    # (with the pip that judged it: the command names the judged interpreter, whatever is on PATH)
    assert doc["instead"]["argv"][-3:] == ["install", "--no-deps", "vllm==0.11.0"]
    assert str(healthy.python) in doc["instead"]["argv"] and doc["instead"]["argv"][1:3] == ["-m", "pip"]
    assert any("torch_npu==2.8.0" in w for w in doc["instead_why"])
    # nothing was installed
    assert wh.versions(healthy.site)["torch"] == "2.7.1+cpu"


@pytest.mark.slow  # ~0.5 s of CPU or more: real pip against the wheelhouse
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
    proc = doctor_fork.run(argv, env=wh.pip_env(healthy.env, house["dirs"].values()), cwd=healthy.workdir,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)
    numpy = next(f for f in doc["findings"] if f["id"] == "vllm_ascend.numpy")
    assert numpy["status"] == "fail" and "2.1.0" in numpy["observed"]
    assert doc["requirements"]["would_install"] == [{"name": "numpy", "version": "2.1.0"}]


@pytest.mark.slow
def test_run_judges_an_install_after_general_options_with_values(healthy, house, tmp_path):
    """pip's general options before `install` take their values along (--cache-dir DIR): the
    install is still judged, and a breaking one is not run."""
    proc = guard(healthy, house, "--run", "--", "pip", "--cache-dir", str(tmp_path / "pc"), "--timeout", "30",
                 "install", "numpy==2.1.0")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "vllm_ascend.numpy" in proc.stdout
    assert wh.versions(healthy.site)["numpy"] == "1.26.4"  # not run


@pytest.mark.parametrize("args,why", [
    (["pip", "install"], "nothing to install"),
    (["pip", "install", "-c", "c.txt"], "nothing to install"),
    (["pip", "uninstall", "-y"], "nothing to uninstall"),
    (["pip", "install", "-r", "/dev/zero"], "-r /dev/zero: not a regular file (a device)"),
    (["pip", "install", "-r/dev/zero"], "-r /dev/zero: not a regular file (a device)"),
    (["pip", "install", "--requirement=<DIR>", "x"], "-r <DIR>: not a regular file (a directory)"),
    (["pip", "install", "--constr", "<FIFO>", "x"], "-c <FIFO>: not a regular file (a FIFO)"),
    (["pip", "install", "-t/tmp/x", "numpy"], "-t/tmp/x installs somewhere else"),
    (["pip", "install", "--tar", "/tmp/x", "numpy"], "--tar /tmp/x installs somewhere else"),
    (["pip", "--pyth", "/usr/bin/python3", "install", "numpy"], "installs somewhere else"),
])
def test_refused_before_pip_runs(healthy, house, tmp_path, args, why):
    """Bad commands are usage errors (exit 2, one line), found before pip runs."""
    import os

    os.mkfifo(tmp_path / "fifo")
    args = [a.replace("<DIR>", str(tmp_path)).replace("<FIFO>", str(tmp_path / "fifo")) for a in args]
    why = why.replace("<DIR>", str(tmp_path)).replace("<FIFO>", str(tmp_path / "fifo"))
    proc = guard(healthy, house, "--", *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert why in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.parametrize("kind", ["dir", "fifo", "/dev/zero", "missing"])
def test_check_requirements_names_what_is_not_a_file(healthy, tmp_path, kind):
    """Named by the option the user typed, `--requirements` (not pip's `-r` the doctor builds)."""
    import os

    path = {"dir": str(tmp_path), "fifo": str(tmp_path / "fifo"), "/dev/zero": "/dev/zero",
            "missing": str(tmp_path / "nope.txt")}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    argv = [sys.executable, "-m", "doctor", "check", "--requirements", path, "--root", str(healthy.root),
            "--python", str(healthy.python)]
    proc = doctor_fork.run(argv, env=healthy.env, cwd=healthy.workdir, capture_output=True, text=True, timeout=60)
    why = "no such file" if kind == "missing" else "not a regular file"
    assert proc.returncode == 2 and proc.stderr.startswith(f"ascend-doctor: error: --requirements {path}: {why}"), \
        proc.stderr


# -- pure parts ---------------------------------------------------------------------------------

@pytest.mark.parametrize("argv,tool,sub,reqs", [
    (["pip", "install", "vllm==0.11.0", "torch_npu==2.8.0"], "pip", "install", ["vllm==0.11.0", "torch_npu==2.8.0"]),
    (["python3", "-m", "pip", "install", "-r", "r.txt", "-c", "c.txt", "x"], "pip", "install", ["x"]),
    (["pip3", "-q", "install", "--extra-index-url", "https://h/simple", "y>1"], "pip", "install", ["y>1"]),
    (["uv", "pip", "install", "--no-deps", "z"], "uv", "install", ["z"]),
    (["pip", "uninstall", "-y", "torch"], "pip", "uninstall", ["torch"]),
    (["pip", "list"], "pip", "other", []),
    # general options take their values along, in every spelling pip reads
    (["pip", "--cache-dir", "/tmp/pc", "install", "x"], "pip", "install", ["x"]),
    (["pip", "--log", "/tmp/l", "-q", "--proxy", "http://p:3128", "install", "x"], "pip", "install", ["x"]),
    (["pip", "--timeout=30", "--retries", "1", "--cert", "c.pem", "install", "x"], "pip", "install", ["x"]),
    (["pip", "--cache", "/tmp/pc", "--trusted-host", "h", "--exists-action", "i", "uninstall", "-y", "x"], "pip",
     "uninstall", ["x"]),
    (["pip", "--use-feature", "truststore", "--keyring-provider", "auto", "--client-cert", "k", "install", "x"],
     "pip", "install", ["x"]),
    (["pip", "--resume-retries", "3", "--use-deprecated", "legacy-certs", "install", "x"], "pip", "install", ["x"]),
    (["pip", "--default-timeout", "9", "--log-file", "f", "help", "install"], "pip", "other", []),
    # install options: attached short values, clusters, prefixes, --
    (["pip", "install", "-rr.txt", "-Uc", "c.txt", "-qe.", "--extra", "https://h/simple", "--ind=https://h/s", "y"],
     "pip", "install", ["y"]),
    (["pip", "install", "--pre", "--no-deps", "x", "--", "-y"], "pip", "install", ["x", "-y"]),
    (["pip", "install", "--help"], "pip", "other", []),
])
def test_parse_command(argv, tool, sub, reqs):
    c = parse_command(argv)
    assert (c.tool, c.sub, c.requirements) == (tool, sub, reqs)


def test_resolver_gets_the_general_options_not_the_output_ones():
    c = parse_command(["pip", "--proxy", "http://p:3128", "-v", "--log", "l", "install", "-qU", "--progress-bar",
                       "on", "-qr", "r.txt", "x"])
    assert c.resolve_args() == ["--proxy", "http://p:3128", "--upgrade", "--requirement=r.txt", "x"]
    assert c.values("--requirement") == ["r.txt"] and c.values("--proxy") == ["http://p:3128"]


@pytest.mark.parametrize("argv", [["conda", "install", "x"], [], ["pip", "install", "--target", "/x", "y"],
                                  ["pip", "install", "--user", "y"], ["pip", "install", "-t/x", "y"],
                                  ["pip", "install", "-Ut", "/x", "y"], ["pip", "install", "--tar", "/x", "y"],
                                  ["pip", "install", "--targ=/x", "y"], ["pip", "install", "--pref", "/x", "y"],
                                  ["pip", "install", "--roo", "/x", "y"], ["pip", "install", "--us", "y"],
                                  ["pip", "--pyth", "/x", "install", "y"], ["pip", "install", "--dry", "y"],
                                  ["pip", "install", "--rep", "r.json", "y"], ["pip", "install", "--pr", "/x", "y"],
                                  ["pip", "install"], ["pip", "install", "-c", "c.txt"], ["pip", "uninstall"],
                                  ["pip", "install", "-r"]])
def test_parse_command_refuses(argv):
    with pytest.raises(UsageError):
        parse_command(argv)


def test_option_tables_match_the_pip_that_runs():
    """Every option of this venv's pip (general, install, uninstall) is in doctor.parse.pipargs,
    with whether it takes a value."""
    from pip._internal.cli.main_parser import create_main_parser
    from pip._internal.commands import create_command

    from doctor.parse import pipargs

    def options(parser):
        return {s: o.takes_value() for g in [parser] + parser.option_groups for o in g.option_list
                for s in o._short_opts + o._long_opts}

    general = options(create_main_parser())
    for table, parser in ((pipargs.GENERAL, None), (pipargs.INSTALL, "install"), (pipargs.UNINSTALL, "uninstall")):
        pip = general if parser is None else {k: v for k, v in options(create_command(parser).parser).items()
                                              if k not in general}
        ours = {s: table[c] for s, c in pipargs.spellings(table).items()}
        assert {s: v for s, v in pip.items() if ours.get(s) != v} == {}, parser


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


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_check_requirements_failure_says_pips_reason_in_its_title(lang):
    """The report shows a finding's title, not its observed datum: `check --requirements FILE`
    on a file pip cannot resolve printed 'pip cannot resolve this command (other):' and nothing
    after the colon."""
    from doctor.cli.guard import requirements_failure
    from doctor.parse.pipreport import Failure

    f = requirements_failure(Failure("other", "\nerror: failed to decode file `r.txt`: stream did not contain "
                                              "valid UTF-8\n  detail line\n"))
    title = f.title.text(lang)
    assert title.endswith("error: failed to decode file `r.txt`: stream did not contain valid UTF-8"), title
    assert f.observed == "error: failed to decode file `r.txt`: stream did not contain valid UTF-8"
    assert f.evidence == ["detail line"]
