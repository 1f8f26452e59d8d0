"""The resolver in report mode: pip's own answer, read into exact versions, files, sizes and
hashes, and pip's failures classified (a pin not on the index, a conflict, a host that does not
answer). Real pip (and real uv) against the metadata-faithful wheelhouse; the classifier also on
recorded outputs of both."""
import os
import socket
import sys

import pytest
from fakehost import wheelhouse as wh

from doctor.parse.pipreport import CONFLICT, MISSING, OTHER, REFUSED, TIMED_OUT, TLS, PROXY, DNS, UNREACHABLE, classify, \
    host_failures, parse_pylock, parse_report
from doctor.shell.install.resolver import Request, resolve_pip, resolve_uv

PIP = [sys.executable, "-m", "pip"]
UV = os.path.join(os.path.dirname(sys.executable), "uv")


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now: connections are refused
    return port


def env_for(house, *names, **extra):
    env = wh.pip_env(os.environ, [house["dirs"][n] for n in (names or (wh.PYPI, wh.CPU, wh.ASCEND))])
    env.update(extra)
    return env


@pytest.mark.slow  # ~0.5 s of CPU or more: real pip against the wheelhouse
def test_pip_report_gives_exact_versions_files_sizes_and_hashes(house):
    r = resolve_pip(PIP, Request(requirements=["vllm-ascend==0.11.0rc3", "numpy<2.0.0"], ignore_installed=True),
                    env_for(house))
    assert r.ok, r.failure
    got = {p.name: p for p in r.packages}
    assert got["numpy"].version == "1.26.4"  # the range became one version
    assert got["torch"].version == "2.7.1+cpu" and got["torch"].filename.startswith("torch-2.7.1+cpu")
    path = house["dirs"][wh.CPU] / got["torch"].filename
    import hashlib

    assert got["torch"].sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert got["torch"].size == path.stat().st_size
    assert r.total_size == sum(p.size for p in r.packages) and r.unknown_sizes == 0


@pytest.mark.slow  # ~0.5 s of CPU or more: real pip against the wheelhouse
def test_missing_pin_gives_pips_message(house):
    r = resolve_pip(PIP, Request(requirements=["torch-npu==2.7.1.post9"], no_deps=True, ignore_installed=True),
                    env_for(house))
    assert not r.ok and r.failure.kind == MISSING
    assert r.failure.requirement == "torch-npu==2.7.1.post9"
    assert "2.7.1.post1" in r.failure.versions
    assert "No matching distribution found for torch-npu==2.7.1.post9" in r.failure.message
    assert r.failure.message.count("No matching distribution") == 1  # stderr and log lines merged


@pytest.mark.slow
def test_conflict_keeps_pips_explanation(house):
    r = resolve_pip(PIP, Request(requirements=["vllm==0.11.0", "torch==2.7.1"], ignore_installed=True),
                    env_for(house))
    assert not r.ok and r.failure.kind == CONFLICT
    assert "vllm 0.11.0 depends on torch==2.8.0" in r.failure.message  # only in pip's log at -q


@pytest.mark.slow  # ~0.5 s of CPU or more: real pip against the wheelhouse
def test_refused_host_is_named(house):
    port = closed_port()
    env = env_for(house, wh.PYPI, PIP_RETRIES="1")
    del env["PIP_NO_INDEX"]
    env["PIP_INDEX_URL"] = f"http://127.0.0.1:{port}/whl/cpu"  # the CPU index, unreachable
    r = resolve_pip(PIP, Request(requirements=["torch==2.7.1+cpu"], no_deps=True, ignore_installed=True), env)
    assert not r.ok and r.failure.kind == UNREACHABLE
    assert [(h.host, h.how) for h in r.failure.hosts] == [(f"127.0.0.1:{port}", REFUSED)]


def _bundled_pip(tmp_path):
    """The pip a new venv gets from this Python's ensurepip (23.2 for Python 3.11, as in many
    users' images), not the newer one the test extras install."""
    import subprocess

    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "bundled")], check=True, capture_output=True, timeout=300)
    return [str(tmp_path / "bundled" / "bin" / "python"), "-m", "pip"]


@pytest.mark.parametrize("which", ["tests", pytest.param("bundled", marks=pytest.mark.slow)])
def test_report_read_after_pips_progress_bar(tmp_path, which):
    """pip 23.2 (venv's own for Python 3.11, and many users') draws its download progress bar on
    stdout ahead of the report when it logs to a file, --quiet or not: a wheel big enough for a
    bar (over 40 kB) downloaded from an index on loopback."""
    import random
    import subprocess

    PIP = _bundled_pip(tmp_path) if which == "bundled" else [sys.executable, "-m", "pip"]

    from fakehost.dists import Stub
    from fakehost.index_server import WheelIndex

    from doctor.shell.install.resolver import pip_argv

    blob = random.Random(0).randbytes(300_000)  # incompressible
    wh.write_wheel(tmp_path / "pypi", Stub("numpy", "2.1.0", requires=[]), extra_files={"numpy/blob.bin": blob})
    index = WheelIndex({wh.PYPI: tmp_path / "pypi"})
    try:
        env = index.pip_env(os.environ)
        env["PIP_NO_CACHE_DIR"] = "1"  # a cached file gets no bar
        r = resolve_pip(PIP, Request(requirements=["numpy==2.1.0"], ignore_installed=True), env)
        assert r.ok, r.failure
        assert [(p.name, p.version) for p in r.packages] == [("numpy", "2.1.0")]
        # the resolver's own argv keeps stdout to the report alone
        argv = pip_argv(PIP, Request(requirements=["numpy==2.1.0"], ignore_installed=True), None,
                        str(tmp_path / "pip.log"))
        out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120).stdout
        assert out.startswith("{"), out[:200]
    finally:
        index.close()


@pytest.mark.slow  # ~0.5 s of CPU or more: real pip against the wheelhouse
def test_refused_host_wins_over_the_conflict_it_causes(house):
    """pip concludes a conflict from the indexes that answered; the index that did not (nothing
    listens on its port) is the cause: unreachable, with the mirror remedies."""
    port = closed_port()
    env = env_for(house, wh.PYPI, PIP_RETRIES="0")  # no torch+cpu here: it is on the unreachable index
    del env["PIP_NO_INDEX"]
    env["PIP_INDEX_URL"] = f"http://127.0.0.1:{port}/simple"
    r = resolve_pip(PIP, Request(requirements=["torch==2.7.1+cpu"], constraints=["torch<=2.9"], no_deps=True,
                                 ignore_installed=True), env)
    assert not r.ok and r.failure.kind == UNREACHABLE, r.failure
    assert [(h.host, h.how) for h in r.failure.hosts] == [(f"127.0.0.1:{port}", REFUSED)]


@pytest.mark.slow
def test_uv_resolves_the_same_and_names_a_refused_host(house):
    if not os.path.exists(UV):
        pytest.skip("uv is not installed in the test venv")
    links = []
    for d in (wh.PYPI, wh.CPU):
        links += ["--find-links", str(house["dirs"][d])]
    r = resolve_uv(UV, sys.executable, Request(requirements=["vllm-ascend==0.11.0rc3", "numpy<2.0.0"]), env_for(house),
                   ["--no-index"] + links)
    assert r.ok, r.failure
    assert {p.name: p.version for p in r.packages}["torch"] == "2.7.1+cpu"
    assert all(p.sha256 and p.size for p in r.packages)
    port = closed_port()
    r = resolve_uv(UV, sys.executable, Request(requirements=["torch==2.7.1"]), env_for(house),
                   ["--index-url", f"http://127.0.0.1:{port}/simple"])
    assert not r.ok and r.failure.kind == UNREACHABLE
    assert r.failure.hosts[0].host == f"127.0.0.1:{port}" and r.failure.hosts[0].how == REFUSED


def test_uv_dry_run_leaves_the_target_as_it_found_it(house, tmp_path):
    """uv's dry run takes `<venv>/.lock` and leaves it behind: resolving against a target (a
    plain `fix`, no --apply) must not change it, and a lock file that was there stays."""
    import venv

    if not os.path.exists(UV):
        pytest.skip("uv is not installed in the test venv")
    target = tmp_path / "target"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(target)
    python = str(target / "bin" / "python")

    def tree():
        return sorted((str(p.relative_to(target)), p.is_symlink() or p.stat().st_size) for p in target.rglob("*"))

    before = tree()
    links = ["--no-index", "--find-links", str(house["dirs"][wh.PYPI])]
    r = resolve_uv(UV, python, Request(requirements=["numpy<2.0.0"]), env_for(house, wh.PYPI), links)
    assert r.ok, r.failure
    assert [p.name for p in r.packages] == ["numpy"]
    assert tree() == before
    (target / ".lock").write_text("")
    resolve_uv(UV, python, Request(requirements=["numpy<2.0.0"]), env_for(house, wh.PYPI), links)
    assert (target / ".lock").exists()


# -- the classifier on recorded outputs ---------------------------------------------------------

PIP_TIMEOUT = ("Could not fetch URL https://download.pytorch.org/whl/cpu/torch/: connection error: "
               "HTTPSConnectionPool(host='download.pytorch.org', port=443): Max retries exceeded with url: /whl/cpu/torch/ "
               "(Caused by ConnectTimeoutError(<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f>, "
               "'Connection to download.pytorch.org timed out. (connect timeout=15)')) - skipping\n"
               "ERROR: Could not find a version that satisfies the requirement torch==2.7.1+cpu (from versions: 2.7.1)\n"
               "ERROR: No matching distribution found for torch==2.7.1+cpu\n")
PIP_TLS = ("Could not fetch URL https://mirrors.example.cn/simple/torch/: There was a problem confirming the ssl "
           "certificate: HTTPSConnectionPool(host='mirrors.example.cn', port=443): Max retries exceeded with url: "
           "/simple/torch/ (Caused by SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED]'))) - skipping\n"
           "ERROR: No matching distribution found for torch\n")
PIP_PROXY = ("Could not fetch URL https://pypi.org/simple/vllm/: connection error: HTTPSConnectionPool(host='pypi.org', "
             "port=443): Max retries exceeded with url: /simple/vllm/ (Caused by ProxyError('Cannot connect to proxy.', "
             "NewConnectionError('Failed to establish a new connection: [Errno 111] Connection refused'))) - skipping\n"
             "ERROR: No matching distribution found for vllm\n")
PIP_DNS = ("Could not fetch URL https://pypi.internal:8443/simple/vllm/: connection error: HTTPSConnectionPool("
           "host='pypi.internal', port=8443): Max retries exceeded with url: /simple/vllm/ (Caused by NameResolutionError("
           "\"Failed to resolve 'pypi.internal' ([Errno -2] Name or service not known)\")) - skipping\n"
           "ERROR: No matching distribution found for vllm\n")
UV_MISSING = ("error: No solution found when resolving dependencies\n  cause: Because there is no version of "
              "torch-npu==2.7.1.post9 and you require torch-npu==2.7.1.post9, we can conclude that your requirements "
              "are unsatisfiable.\n")
UV_CONFLICT = ("error: No solution found when resolving dependencies\n  cause: Because vllm<=0.11.0 depends on "
               "torch==2.8.0 and you require torch==2.7.1, we can conclude that your requirements and vllm<=0.11.0 "
               "are incompatible.\n         And because you require vllm==0.11.0, we can conclude that your "
               "requirements are unsatisfiable.\n")


@pytest.mark.parametrize("text,host,how", [
    (PIP_TIMEOUT, "download.pytorch.org", TIMED_OUT),
    (PIP_TLS, "mirrors.example.cn", TLS),
    (PIP_PROXY, "pypi.org", PROXY),
    (PIP_DNS, "pypi.internal:8443", DNS),
])
def test_host_failures_say_how(text, host, how):
    f = classify(text)
    assert f.kind == UNREACHABLE
    assert [(h.host, h.how) for h in f.hosts] == [(host, how)]


PIP_DNS_CONFLICT = ("Could not fetch URL https://download.pytorch.org/whl/cpu/torch/: connection error: "
                    "HTTPSConnectionPool(host='download.pytorch.org', port=443): Max retries exceeded with url: "
                    "/whl/cpu/torch/ (Caused by NameResolutionError(\"<pip._vendor.urllib3.connection.HTTPSConnection "
                    "object at 0x7f>: Failed to resolve 'download.pytorch.org' ([Errno -3] Temporary failure in name "
                    "resolution)\")) - skipping\n"
                    "ERROR: Cannot install torch==2.7.1+cpu because these package versions have conflicting "
                    "dependencies.\nThe conflict is caused by:\n    The user requested torch==2.7.1+cpu\n"
                    "    The user requested (constraint) torch<=2.14.1\n\n"
                    "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/\n")


def test_unreachable_index_beats_the_conflict_it_causes():
    from doctor.plan.indexes import remedies

    f = classify(PIP_DNS_CONFLICT)
    assert f.kind == UNREACHABLE and [(h.host, h.how) for h in f.hosts] == [("download.pytorch.org", DNS)]
    urls = [c.argv[-1] for c in remedies(f, ["torch==2.7.1+cpu"]).commands]
    assert "https://mirrors.aliyun.com/pytorch-wheels/cpu/" in urls
    # an HTTP status is an answer: a 404 next to a real conflict stays a conflict
    f = classify("Could not fetch URL https://h.example/simple/torch/: 404 Client Error: Not Found for url: "
                 "https://h.example/simple/torch/ - skipping\n" + PIP_DNS_CONFLICT.split(" - skipping\n", 1)[1])
    assert f.kind == CONFLICT


def test_uv_outputs_classified():
    f = classify(UV_MISSING)
    assert f.kind == MISSING and f.requirement == "torch-npu==2.7.1.post9"
    f = classify(UV_CONFLICT)
    assert f.kind == CONFLICT and "vllm<=0.11.0 depends on torch==2.8.0" in f.message


def test_no_host_failure_in_a_plain_missing_pin():
    assert host_failures("ERROR: No matching distribution found for x==1\n") == []


def test_report_parsers_reject_garbage():
    from doctor.parse.pipreport import ReportError

    for bad in ("", "[]", '{"install": 3}', '{"install": [{"metadata": {}}]}', "progress\n{ not json"):
        with pytest.raises(ReportError):
            parse_report(bad)
    # what pip 23.2 prints ahead of the report (its progress bar) is passed over
    report = '{\n "version": "1",\n "install": [{"metadata": {"name": "NumPy", "version": "2.0.1"}}]\n}\n'
    for junk in ("   \u2501\u2501\u2501 19.5/19.5 MB 265.9 MB/s eta 0:00:00\n", "\r  \u2501 1/2 MB {eta}\r"):
        assert [(x.name, x.version) for x in parse_report(junk + report)] == [("numpy", "2.0.1")]
    with pytest.raises(ReportError):
        parse_pylock("[[packages]]\nname = 1\n")
    got = parse_pylock('[[packages]]\nname = "Torch"\nversion = "2.7.1"\n'
                       'wheels = [{ url = "https://h/torch-2.7.1-cp311-cp311-linux_x86_64.whl", size = 7, '
                       'hashes = { sha256 = "ab" } }]\n')
    assert (got[0].name, got[0].size, got[0].sha256, got[0].filename) == ("torch", 7, "ab",
                                                                          "torch-2.7.1-cp311-cp311-linux_x86_64.whl")


def test_a_long_run_in_the_installers_output_is_classified_in_linear_time():
    """uv echoes a requirements line it cannot parse: a 100 KB token in `check --requirements
    FILE` took the classifier minutes of CPU (`(\\S+) was not found` tried from every character)."""
    import time

    started = time.process_time()
    f = classify("error: Couldn't parse requirement in `big.txt` at position 0\n  torch==2.1 " + "a" * 60_000 + "\n")
    assert time.process_time() - started < 1.0  # the unanchored pattern: about 25 s
    assert f.kind == OTHER
    assert classify("  × No solution found when resolving dependencies:\n  ╰─▶ Because torch-npu==9.9 was not found "
                    "in the package registry and you require torch-npu==9.9, we can conclude that your "
                    "requirements are unsatisfiable.\n").requirement == "torch-npu==9.9"
