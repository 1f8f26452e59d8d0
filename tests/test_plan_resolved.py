"""Plans proven by pip's resolver (issue 11), with real pip against the metadata-faithful
wheelhouse: ranges become the exact versions pip then installs, a pin missing from the index or
a host that does not answer is said in the plan (pip's words, the host and how it failed, what
works instead) and --apply stops before changing anything; bundles for offline nodes."""
import json
import shlex
import shutil
import os
import socket
import subprocess
import sys

import pytest
from fakehost import FakeHost
from fakehost import wheelhouse as wh
import doctor_fork


def doctor(fake, env, *args, timeout=300, target=True):
    argv = [sys.executable, "-m", "doctor", *args]
    if target:
        argv += fake.args()  # --root, --python and the fake npu-smi (nothing inside --root runs unless named)
    return doctor_fork.run(argv, env=env, cwd=fake.workdir, capture_output=True, text=True, timeout=timeout)


def env_of(fake, house, dirs=(wh.PYPI, wh.CPU, wh.ASCEND), **extra):
    env = wh.pip_env(fake.env, [house["dirs"][d] for d in dirs])
    env.update(extra)
    return env


def host(tmp_path, house, release="0.11.0rc3", **overrides):
    fake = FakeHost(tmp_path / "host")
    wh._host(fake, release, house["template"], **overrides)
    return fake


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def assert_fixed(proc) -> None:
    """--apply went through and the check after it fails nothing (exit 4: the kit's CANN 8.3.RC2 has
    no documented driver pairing, a warning no fix can clear)."""
    assert proc.returncode in (0, 4), proc.stderr[-3000:]
    after = json.loads(proc.stdout)["result"]["check_after"]
    assert not [f["id"] for f in after["findings"] if f["status"] == "fail"], after["findings"]


@pytest.mark.parametrize("override,name,pin", [
    pytest.param({"numpy": "2.1.0"}, "numpy", "1.26.4", marks=pytest.mark.slow),  # fix --apply runs the resolver in test_fix_apply too
    pytest.param({"transformers": "5.5.3"}, "transformers", "4.57.1", marks=pytest.mark.slow)])
def test_ranges_become_the_versions_pip_installs(tmp_path, house, override, name, pin):
    fake = host(tmp_path, house, **override)
    env = env_of(fake, house)
    proc = doctor(fake, env, "fix", "--json")
    doc = json.loads(proc.stdout)
    assert doc["resolution"]["status"] == "resolved", doc["resolution"]
    assert all(v[:1].isdigit() for v in doc["pins"].values()), doc["pins"]  # no range reaches pins
    assert doc["pins"][name] == pin
    files = {f["name"]: f for f in doc["resolution"]["files"]}
    assert files[name]["version"] == pin and len(files[name]["hashes"]["sha256"]) == 64
    assert doc["resolution"]["download_bytes"] == sum(f["size"] for f in doc["resolution"]["files"])
    step = next(s for s in doc["steps"] if s.get("packages") == [f"{name}=={pin}"])
    assert "--no-deps" in step["argv"] and "--constraint" not in step["argv"]  # runs as printed
    proc = doctor(fake, env, "fix", "--apply", "--yes", "--no-smoke", "--json")
    assert_fixed(proc)
    have = wh.versions(fake.site)
    for pkg, version in json.loads(proc.stdout)["pins"].items():
        assert have.get(pkg) == version, (pkg, version, have.get(pkg))


@pytest.mark.slow  # ~0.5 s of CPU or more: real uv and pip against the wheelhouse
def test_missing_pin_is_pips_message_in_the_plan_not_a_traceback(tmp_path, house):
    """vllm-ascend 0.11.0 needs torch-npu 2.7.1.post1, published only on the Ascend mirror: with
    an index that lacks it the plan says so with pip's words and the mirror that has it."""
    fake = host(tmp_path, house, release="0.13.0rc1", transformers="4.57.4")
    env = env_of(fake, house, dirs=(wh.PYPI, wh.CPU))
    proc = doctor(fake, env, "fix", "--target", "vllm-ascend==0.11.0")
    # the resolver's own words (pip: "No matching distribution found for ...", uv: "there is no version of ...")
    assert ("No matching distribution found for torch-npu==2.7.1.post1" in proc.stdout
            or "there is no version of torch-npu==2.7.1.post1" in proc.stdout), proc.stdout + proc.stderr
    assert "--extra-index-url https://mirrors.huaweicloud.com/ascend/repos/pypi" in proc.stdout
    before = wh.tree_state(fake.site)
    proc = doctor(fake, env, "fix", "--target", "vllm-ascend==0.11.0", "--apply", "--yes", "--no-smoke")
    assert proc.returncode == 3 and "Traceback" not in proc.stderr, proc.stderr
    assert wh.tree_state(fake.site) == before  # nothing changed


@pytest.mark.slow  # ~0.5 s of CPU or more: real pip against the wheelhouse
def test_unreachable_hosts_named_with_how_and_what_works(tmp_path, house):
    """torch X+cpu comes from the PyTorch CPU index; here the index pip is configured for is a
    closed loopback port and download.pytorch.org does not resolve."""
    fake = FakeHost(tmp_path / "host")
    wh.cuda_torch(fake, house["template"])
    for p in list(fake.site.glob("pip")) + list(fake.site.glob("pip-*.dist-info")):
        shutil.rmtree(p)  # a target without pip: the remedies must not use its python -m pip
    port = closed_port()
    env = env_of(fake, house, dirs=(wh.PYPI,), PIP_RETRIES="0", PIP_TIMEOUT="3",
                 PIP_INDEX_URL=f"http://127.0.0.1:{port}/simple")
    del env["PIP_NO_INDEX"]
    proc = doctor(fake, env, "fix", "--json")
    doc = json.loads(proc.stdout)
    res = doc["resolution"]
    assert res["status"] == "failed" and res["failure"]["kind"] == "unreachable", res
    hosts = {h["host"]: h["how"] for h in res["failure"]["hosts"]}
    assert hosts[f"127.0.0.1:{port}"] == "refused"
    shells = [c["shell"] for c in res["remedies"]["commands"]]
    assert any("ascend-doctor fix --bundle" in s for s in shells)
    # the bundle's steps run as printed: the snapshot is written where the next step reads it
    # spelled as the doctor was started (its absolute path when that is not the one on PATH)
    # and on the environment judged: the snapshot and the apply name its root, interpreter and npu-smi
    target = " " + shlex.join(fake.args())
    assert any(s.endswith("ascend-doctor snapshot --output node.json" + target) for s in shells), shells
    assert any(s.endswith("ascend-doctor fix --bundle ascend-bundle --from node.json") for s in shells), shells
    assert any(s.endswith("ascend-doctor fix --apply --bundle ascend-bundle" + target) for s in shells), shells
    # the mirror commands install the way the plan's own steps do (the doctor's pip with --python
    # on a target without pip): the same words up to "install"
    step = next(st["argv"] for st in doc["steps"] if st.get("argv") and "install" in st["argv"])
    prefix = step[:step.index("install") + 1]
    mirrors = [c["argv"] for c in res["remedies"]["commands"] if "install" in c["argv"]]
    assert mirrors and all(m[:len(prefix)] == prefix for m in mirrors), (prefix, mirrors)


@pytest.mark.slow  # ~0.5 s of CPU or more: real pip against the wheelhouse
def test_what_works_instead_of_an_unreachable_index_is_for_the_environment_judged(tmp_path, house):
    """The new-user pass: the bundle way printed when no index answers snapshots, plans and repairs
    the environment the fix judged (its --root, --python, --npu-smi, and the --target given), not
    whatever the shell it is pasted into has; every line runs as printed (the doctor's own option
    checks accept it, it names that interpreter), in both languages."""
    from test_printed_commands import COMMAND_LINE, Printed, check_one

    fake = host(tmp_path, house, torch="2.8.0", torch_npu="2.8.0", torchvision="0.23.0")
    port = closed_port()
    env = env_of(fake, house, dirs=(wh.PYPI,), PIP_RETRIES="0", PIP_TIMEOUT="3",
                 PIP_INDEX_URL=f"http://127.0.0.1:{port}/simple")
    del env["PIP_NO_INDEX"]
    wanted = ("--target", "vllm-ascend==0.11.0rc3")
    doc = json.loads(doctor(fake, env, "fix", *wanted, "--json").stdout)
    res = doc["resolution"]
    assert res["status"] == "failed" and res["failure"]["kind"] == "unreachable", res
    by_label = {c["label"]: c["argv"] for c in res["remedies"]["commands"]}
    snapshot = next(a for a in by_label.values() if a[1:2] == ["snapshot"])
    make = next(a for a in by_label.values() if a[1:3] == ["fix", "--bundle"])
    apply = next(a for a in by_label.values() if a[1:3] == ["fix", "--apply"])
    assert snapshot[1:] == ["snapshot", "--output", "node.json", *fake.args()], snapshot
    assert make[1:] == ["fix", "--bundle", "ascend-bundle", "--from", "node.json", *wanted], make
    assert apply[1:] == ["fix", "--apply", "--bundle", "ascend-bundle", *fake.args(), *wanted], apply
    # torch-npu 2.7.1.post1 is on the Ascend mirror only: a line standing in for the CPU index keeps it
    for argv in by_label.values():
        if "--find-links" in argv:
            assert argv[argv.index("--find-links") - 2:argv.index("--find-links")] == [
                "--extra-index-url", "https://mirrors.huaweicloud.com/ascend/repos/pypi"], argv
    for lang in ("en", "zh"):
        proc = doctor(fake, env, "fix", *wanted, "--lang", lang)
        assert proc.returncode == 3, proc.stdout + proc.stderr
        lines = [x.strip() for x in proc.stdout.splitlines() if COMMAND_LINE.match(x)]
        doctor_lines = [x for x in lines if shlex.split(x)[1:2] in (["snapshot"], ["fix"])]
        assert [shlex.split(x) for x in doctor_lines] == [snapshot, make, apply], proc.stdout
        for line in doctor_lines:
            why = check_one(Printed(line, None, "", "unreachable"), None, tmp_path, fake)
            assert why is None, f"{line}\n    -> {why}"


def test_a_mirror_line_keeps_every_index_its_requirements_need():
    """The mirror that stands in for a host that did not answer replaces that host only: torch-npu
    and triton-ascend builds newer than the public index's stay on the Ascend mirror, a CPU torch on
    the CPU index (or its mirror when that host is down too); one default index at most."""
    from doctor.parse.pipreport import UNREACHABLE, Failure, HostFailure
    from doctor.plan.indexes import ASCEND_MIRROR, TORCH_CPU_INDEX, remedies

    reqs = ["torch==2.10.0+cpu", "torch-npu==2.10.0rc1", "vllm-ascend==0.16.0rc1", "triton-ascend==3.2.2"]
    pip = ("python3", "-m", "pip", "install", "--no-deps")

    def mirror_lines(*down):
        failure = Failure(UNREACHABLE, "", hosts=[HostFailure(h, "DNS", "") for h in down])
        rem = remedies(failure, reqs, pip, [TORCH_CPU_INDEX, ASCEND_MIRROR])
        return [list(c.argv) for c in rem.commands if c.argv[:5] == pip]

    def options(argv):
        return [(argv[i], argv[i + 1]) for i in range(len(argv) - 1) if argv[i].startswith("--") and argv[i] != "--no-deps"]

    [cpu] = mirror_lines("download.pytorch.org")
    assert cpu[5:9] == reqs
    assert options(cpu) == [("--extra-index-url", ASCEND_MIRROR), ("--find-links", "https://mirrors.aliyun.com/pytorch-wheels/cpu/")]
    lines = mirror_lines("download.pytorch.org", "pypi.org")
    assert len(lines) == 3  # the CPU wheels' mirror, and each of the public index's
    for argv in lines:
        opts = options(argv)
        assert ("--extra-index-url", ASCEND_MIRROR) in opts, argv
        assert ("--find-links", "https://mirrors.aliyun.com/pytorch-wheels/cpu/") in opts, argv
        assert not any(TORCH_CPU_INDEX in v for _, v in opts), argv
        assert len([o for o, _ in opts if o == "--index-url"]) == 1, argv
    assert sorted(v for argv in lines[1:] for o, v in options(argv) if o == "--index-url") == [
        "https://mirrors.aliyun.com/pypi/simple/", "https://pypi.tuna.tsinghua.edu.cn/simple"]
    # the Ascend mirror itself has no documented mirror: kept (its builds are there only), and the bundle way offered
    assert mirror_lines("mirrors.huaweicloud.com") == []


@pytest.mark.slow
def test_bundle_for_another_platform_is_refused_here(tmp_path, house):
    fake = host(tmp_path, house, numpy="2.1.0")
    env = env_of(fake, house)
    snap = doctor(fake, env, "snapshot")
    (tmp_path / "node.json").write_text(snap.stdout)
    other = "aarch64" if fake.machine != "aarch64" else "x86_64"
    out = tmp_path / "bundle-arm"
    proc = doctor(fake, env, "fix", "--bundle", str(out), "--from", str(tmp_path / "node.json"),
                  "--bundle-platform", f"manylinux_2_28_{other}", target=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["arch"] == other and manifest["platform"]["platforms"] == [f"manylinux_2_28_{other}"]
    proc = doctor(fake, {**fake.env, "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1"}, "fix", "--apply", "--yes",
                  "--no-smoke", "--bundle", str(out))
    assert proc.returncode == 2 and f"made for {other}" in proc.stderr, proc.stderr


@pytest.mark.slow
def test_bundle_applied_with_no_index_and_refused_when_a_file_is_altered(tmp_path, house):
    fake = FakeHost(tmp_path / "host")
    wh.seed_001(fake, house["template"])
    proc = doctor(fake, env_of(fake, house), "snapshot")
    (tmp_path / "node.json").write_text(proc.stdout)
    out = tmp_path / "bundle"
    proc = doctor(fake, env_of(fake, house), "fix", "--bundle", str(out), "--from", str(tmp_path / "node.json"),
                  target=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # no index at all: no links, no configuration file, pip told not to look
    offline = {**fake.env, "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1"}
    wheel = next((out / "wheels").glob("vllm-*.whl"))
    good = wheel.read_bytes()
    wheel.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    before = wh.tree_state(fake.site)
    proc = doctor(fake, offline, "fix", "--apply", "--yes", "--no-smoke", "--bundle", str(out))
    assert proc.returncode == 2 and wheel.name in proc.stderr and "sha256" in proc.stderr, proc.stderr
    assert wh.tree_state(fake.site) == before
    wheel.write_bytes(good)
    proc = doctor(fake, offline, "fix", "--apply", "--yes", "--no-smoke", "--json", "--bundle", str(out))
    assert_fixed(proc)
    assert wh.versions(fake.site)["vllm"] == "0.11.0"


@pytest.fixture(scope="module")
def nodeps_house(house, tmp_path_factory):
    from fakehost import nodeps

    return nodeps.build(tmp_path_factory.mktemp("nodeps-leaves"))


@pytest.mark.slow
def test_no_deps_environment_plan_restores_every_requirement(tmp_path, house, nodeps_house):
    """torch, torch-npu, vllm and vllm-ascend installed with --no-deps: pip check reports dozens of
    missing requirements (torch's filelock, sympy, networkx, jinja2, fsspec; vllm's and
    vllm-ascend's). The plan restores all of them, says before it runs what pip check will still
    report (only vllm's CUDA side), and after --apply real pip check says exactly that."""
    from fakehost import nodeps

    fake = FakeHost(tmp_path / "host")
    nodeps.environment(fake, house["template"])
    env = wh.pip_env(fake.env, [house["dirs"][d] for d in (wh.PYPI, wh.CPU, wh.ASCEND)] + [nodeps_house])
    broken = subprocess.run([str(fake.python), "-m", "pip", "check"], env=env, capture_output=True, text=True, timeout=120)
    missing = [x for x in broken.stdout.splitlines() if "which is not installed" in x]
    assert len(missing) > 50 and any(x.startswith("torch 2.7.1+cpu requires sympy") for x in missing), broken.stdout
    proc = doctor(fake, env, "fix", "--json")
    doc = json.loads(proc.stdout)
    assert doc["resolution"]["status"] == "resolved", doc["resolution"]
    assert doc["resolution"]["unexpected_after"] == []
    installed = {p.split("==")[0] for s in doc["steps"] for p in s.get("packages", [])}
    assert {"filelock", "sympy", "networkx", "jinja2", "fsspec", "fastapi", "quart"} <= installed
    promised = doc["resolution"]["pip_check_after"]
    assert promised and all(x.startswith("vllm 0.11.0 requires") for x in promised)
    proc = doctor(fake, env, "fix", "--apply", "--yes", "--no-smoke", "--json")
    assert proc.returncode in (0, 4), proc.stderr[-3000:]
    after = subprocess.run([str(fake.python), "-m", "pip", "check"], env=env, capture_output=True, text=True, timeout=120)
    reported = sorted(x for x in after.stdout.splitlines() if x.strip())
    # pip check words it like the plan did (pip's "which is not installed." / "but you have X Y.")
    import re

    def norm(line):  # pip names only the package of a missing requirement, without its specifier
        line = line.rstrip(".").replace(" has requirement ", " requires ")
        return re.sub(r"requires ([A-Za-z0-9._-]+)[^,]*, which is not installed", r"requires \1, which is not installed", line)

    assert sorted(map(norm, reported)) == sorted(map(norm, promised)), (reported, promised)


@pytest.mark.slow  # ~0.5 s of CPU or more: real pip against the wheelhouse
def test_a_bundle_after_a_wheel_was_rebuilt_carries_the_new_file(tmp_path, house):
    """A bundle for another machine (--from a snapshot: no index configuration of this host is
    read, only pip's variables) made, then its numpy wheel rebuilt under the same name in the
    wheelhouse, then made again: the second resolution is not the kept one, so pip's download
    checks the new hash and the bundle is made (a kept resolution named the old hash: "Expected
    sha256 ... Got")."""
    import zipfile

    fake = host(tmp_path, house, numpy="2.1.0")
    links = tmp_path / "links"
    dirs = {}
    for d in (wh.PYPI, wh.CPU, wh.ASCEND):
        dirs[d] = links / d
        shutil.copytree(house["dirs"][d], dirs[d])
    env = dict(wh.pip_env(fake.env, list(dirs.values())), XDG_CACHE_HOME=str(tmp_path / "cache"))
    (tmp_path / "node.json").write_text(doctor(fake, env, "snapshot").stdout)

    def bundle(name):
        return doctor(fake, env, "fix", "--bundle", str(tmp_path / name), "--from", str(tmp_path / "node.json"),
                      target=False)

    first = bundle("b1")
    assert first.returncode == 0, first.stdout + first.stderr
    with zipfile.ZipFile(dirs[wh.PYPI] / "numpy-1.26.4-py3-none-any.whl", "a") as z:
        z.comment = b"rebuilt"
    again = bundle("b2")
    assert again.returncode == 0, again.stdout + again.stderr
    assert (tmp_path / "b2" / "wheels" / "numpy-1.26.4-py3-none-any.whl").read_bytes() == \
        (dirs[wh.PYPI] / "numpy-1.26.4-py3-none-any.whl").read_bytes()
