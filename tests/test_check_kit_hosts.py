"""check end to end on the kit's fake hosts, for verdicts that used to be wrong: host strings never reach
a command unquoted, a driver loaded but not installed, files this user may not read, the hand fix
of a mirror-only torch-npu build run by real pip, what the serving process imports, Mooncake
prefill/decode sizes, and no network at the build stage."""
import contextlib
import io
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from fakehost import FakeHost, finding
from fakehost import wheelhouse as wh
from fakehost.index_server import WheelIndex
from fakehost.kit import SCENARIOS
from fakehost.scenarios import ascend_host, release_packages
from shipped import matrix as shipped_matrix

DATA = Path(__file__).parent / "data"
TOOLKIT_INFO = "/usr/local/Ascend/ascend-toolkit/8.3.RC2/{arch}-linux/ascend_toolkit_install.info"
VERSION_INFO = "/usr/local/Ascend/driver/version.info"


def cli(fake, *argv):
    """The command in this process with the fake host's environment (as tests/test_golden.py)."""
    from doctor.cli.main import main

    saved, cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(fake.env)
    os.chdir(fake.workdir)
    out, err, code = io.StringIO(), io.StringIO(), None
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                main([*argv[:1], *fake.args(), *argv[1:]])
            except SystemExit as e:
                code = e.code
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(saved)
    return code, out.getvalue(), err.getvalue()


def strings(doc, skip=("observed", "evidence")):
    """Every string of a JSON document, except under the keys that report what was read."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k not in skip:
                yield from strings(v, skip)
    elif isinstance(doc, list):
        for v in doc:
            yield from strings(v, skip)
    elif isinstance(doc, str):
        yield doc


# -- host-controlled strings -------------------------------------------------------------------------


def _toolkit_version(fake, raw: bytes):
    path = fake.p(TOOLKIT_INFO.format(arch=fake.machine))
    path.write_bytes(path.read_bytes().replace(b"version=8.3.RC2\n", b"version=" + raw + b"\n"))
    return "cann.installed", TOOLKIT_INFO.format(arch=fake.machine).replace("8.3.RC2/", "").replace(
        "ascend-toolkit/", "ascend-toolkit/latest/")


def _driver_version(fake, raw: bytes):
    path = fake.p(VERSION_INFO)
    path.write_bytes(path.read_bytes().replace(b"Version=25.0.rc1.1\n", b"Version=" + raw + b"\n"))
    return "driver.installed", VERSION_INFO


def _npu_smi_version(fake, raw: bytes):
    out = fake.p("/usr/local/bin/.npu-smi-output")
    out.write_bytes(out.read_bytes().replace(b"Version: 25.0.rc1.1", b"Version: " + raw, 1))
    return "devices.probe_error", None


@pytest.mark.parametrize("plant,raw,marker", [
    (_toolkit_version, b"8.3.RC2;touch${IFS}/tmp/x;#", "touch"),
    (_toolkit_version, b"8.3.RC2\xff\xfe", "\ufffd"),
    (_driver_version, b"25.0.rc1.1$(touch${IFS}/tmp/x)", "touch"),
    (_npu_smi_version, b"25.0.rc1.1;reboot", ";reboot"),
], ids=["cann-injection", "cann-not-utf8", "driver-injection", "npu-smi-injection"])
def test_a_version_that_is_not_a_version_is_a_malformed_file_never_a_command(fake, plant, raw, marker):
    ascend_host(fake, "0.11.0rc3")
    fid, path = plant(fake, raw)
    code, out, err = cli(fake, "check", "--json")
    check = json.loads(out)
    code_fix, out_fix, err_fix = cli(fake, "fix", "--offline", "--json")
    fix = json.loads(out_fix)
    for doc in (check, fix):
        leaked = [s for s in strings(doc) if marker in s]
        assert not leaked, leaked  # not in a title, a hint, a command or a plan step
    f = finding(check, fid)
    assert "is not a version" in (f["observed"] if fid != "devices.probe_error" else f["observed"])
    if path:
        assert f["status"] == "fail" and path in f["title"]
    assert "Traceback" not in err + err_fix


def test_a_snapshot_is_input_of_the_same_kind(fake):
    """`check --from`: a snapshot's vendor versions are checked as the probes' are."""
    from doctor.usecases.check import snapshot_from_text

    ascend_host(fake, "0.11.0rc3")
    code, out, _ = cli(fake, "snapshot")
    doc = json.loads(out)
    doc["cann"]["version"] = "8.3.RC2;touch${IFS}/tmp/x;#"
    facts = snapshot_from_text(json.dumps(doc), "node.json")
    assert facts.cann.version is None and "is not a version" in facts.cann.malformed


def test_host_paths_in_a_hint_are_quoted_and_the_plan_step_runs_as_printed(fake):
    """Driver_Install_Path_Param of /etc/ascend_install.info names where the driver is; in a
    container without libascend_hal.so the hint mounts that directory."""
    base = "/opt/npu $(touch x);y"
    ascend_host(fake, "0.11.0rc3")
    info = fake.p("/etc/ascend_install.info")
    info.write_text(info.read_text().replace("Driver_Install_Path_Param=/usr/local/Ascend", f"Driver_Install_Path_Param={base}"))
    shutil.move(str(fake.p("/usr/local/Ascend/driver")), str(fake.p(f"{base}/driver")))
    fake.remove(f"{base}/driver/lib64/driver/libascend_hal.so")
    code, out, _ = cli(fake, "check", "--json")
    hint = finding(json.loads(out), "driver.libs")["hint"]
    lib = f"{base}/driver/lib64"
    assert shlex.split(hint.split("docker run option:", 1)[1].replace("...", "")) == ["-v", f"{lib}/:{lib}/"]
    code, out, _ = cli(fake, "fix", "--offline", "--json")
    step = next(s for s in json.loads(out)["steps"] if s.get("finding") == "driver.libs")
    shown = step.get("command") or step.get("hint") or ""  # prose advice: its path quoted all the same
    assert shlex.quote(lib) in shown, step


# -- driver.reboot_pending ---------------------------------------------------------------------------


def test_kit_hosts_report_the_driver_they_have_installed(fake):
    """The healthy hosts of the kit are consistent: npu-smi names the driver of version.info."""
    SCENARIOS["healthy_a2"](fake)
    doc = fake.judge()
    assert "driver.reboot_pending" not in {f["id"] for f in doc["findings"]}
    assert "driver 25.0.rc1.1" in finding(doc, "devices.npu_smi")["title"]


def test_driver_upgraded_without_a_reboot(fake):
    SCENARIOS["reboot_pending"](fake)
    doc = fake.judge()
    f = finding(doc, "driver.reboot_pending")
    assert f["status"] == "warn" and "24.1.rc3" in f["title"] and "25.0.rc1.1" in f["title"]
    assert [c["shell"] for c in f["commands"]] == ["npu-smi info", "reboot"]
    assert doc["exit_code"] == 4


# -- permission denied, through the real probes ------------------------------------------------------


@contextlib.contextmanager
def as_user(uid=65534, gid=65534):
    """Run as a user outside HwHiAiUser: root may open anything, so a test running as root
    switches its effective ids (and back); any other user is already one."""
    if os.geteuid() != 0:
        yield
        return
    groups = os.getgroups()
    os.setgroups([])
    os.setegid(gid)
    os.seteuid(uid)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)
        os.setgroups(groups)


@pytest.fixture
def open_base():
    """A fake host another user can reach (pytest's tmp_path is private to root)."""
    base = Path(tempfile.mkdtemp(prefix="ascend-doctor-perm-"))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def test_unreadable_driver_and_cann_are_permission_findings(open_base):
    from doctor.probes.all_probes import PROBES
    from doctor.probes.base import ProbeOptions
    from doctor.probes.collect import collect
    from doctor.rules.engine import make_context, run_rules
    from doctor.shell.host.root import Host

    fake = FakeHost(open_base)
    fake.container()
    fake.driver().toolkit("8.3.RC2").devices().sourced()
    for path, mode in ((VERSION_INFO, 0o440), ("/usr/local/Ascend/ascend-toolkit", 0o750)):
        os.chown(fake.p(path), 0, 1000)  # root:HwHiAiUser, as the driver installer leaves them
        fake.p(path).chmod(mode)
    probes = [p for p in PROBES if p.name in ("driver", "firmware", "cann", "devices")]
    matrix = shipped_matrix()
    with as_user():
        facts = collect(Host(root=str(fake.root), env=fake.env), ProbeOptions(), probes=probes)
    assert facts.host.uid != 0 and not facts.probe_errors
    verdict = run_rules(make_context(facts, matrix, "runtime"))
    by_id = {f.id: f for f in verdict.findings}
    assert "driver.installed" not in by_id and "cann.installed" not in by_id  # not "not mounted", not "missing"
    drv, cann = by_id["driver.permission"], by_id["cann.permission"]
    assert drv.status == cann.status == "fail"
    assert VERSION_INFO in drv.title.text("en") and "/usr/local/Ascend/ascend-toolkit" in cann.title.text("en")
    user = facts.host.user
    assert [c.argv for c in drv.commands] == [("sudo", "usermod", "-aG", "HwHiAiUser", user)]
    assert "HwHiAiUser" in cann.hint.text("zh")


# -- torch-npu .postN: the hand fix runs with real pip ----------------------------------------------


@pytest.fixture(scope="module")
def wheel_index(tmp_path_factory):
    index = WheelIndex(wh.build(tmp_path_factory.mktemp("wheels")))
    yield index
    index.close()


def _pip(index, argv, env):
    assert argv[:2] == ["pip", "install"], argv
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", *index.localise(argv[2:])]
    return subprocess.run(cmd, env=index.pip_env(env), capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # ~1 s of CPU or more: real pip
def test_hand_fix_of_a_mirror_only_torch_npu_resolves_as_printed(fake, wheel_index):
    SCENARIOS["seed_001_naive_fix"](fake)
    commands = finding(fake.judge(), "torch_npu.version")["commands"]
    printed = shlex.split(next(c["shell"] for c in commands if "torch-npu==2.7.1.post1" in c["shell"]))
    argv = ["pip"] + printed[printed.index("install"):]  # the wheel index's pip runs it
    assert "torch-npu==2.7.1.post1" in argv
    proc = _pip(wheel_index, argv, fake.env)
    assert proc.returncode == 0 and "torch-npu-2.7.1.post1" in proc.stdout, proc.stdout + proc.stderr
    # the test can fail: the same command without the index it carries does not resolve
    at = argv.index("--extra-index-url")
    bare = argv[:at] + argv[at + 2:]
    proc = _pip(wheel_index, bare, fake.env)
    assert proc.returncode != 0 and "No matching distribution found for torch-npu==2.7.1.post1" in proc.stderr


# -- what the serving process imports ----------------------------------------------------------------


def test_pythonpath_in_the_environment_shadows_the_reinstalled_vllm(fake):
    SCENARIOS["pythonpath_shadows_vllm"](fake)
    doc = fake.judge()
    f = finding(doc, "env.import_shadow")
    tree = fake.base / "vllm-workspace" / "vllm"
    assert f["status"] == "fail" and f["observed"] == str(tree / "vllm")
    assert f["expected"] == str(fake.site / "vllm")
    assert [c["shell"] for c in f["commands"]] == ["unset PYTHONPATH"]
    assert doc["exit_code"] == 3


def test_field_report_launch_script_pythonpath_shadows_vllm(fake):
    """Seed 001's launch script keeps `export PYTHONPATH=$PYTHONPATH:/vllm-workspace/vllm` after
    vllm 0.11.0 was installed from the index: `import vllm` loads the 0.11.2 source tree."""
    ascend_host(fake, "0.11.0rc3")
    fake.write("/vllm-workspace/vllm/vllm/__init__.py", '__version__ = "0.11.2"\n')
    script = str(DATA / "mooncake" / "seed001_launch.sh")
    f = finding(fake.judge(serve_args_file=script), "env.import_shadow")
    assert f["observed"] == "/vllm-workspace/vllm/vllm" and f["status"] == "fail"
    assert script in f["hint"] and script in f["commands"][0]["label"]
    # without the script the environment has no such entry: nothing to say
    assert "env.import_shadow" not in {x["id"] for x in fake.judge()["findings"]}


def test_editable_install_on_pythonpath_is_the_installed_one(fake, tmp_path):
    """The official image: vllm installed editable from /vllm-workspace/vllm, which is also on
    PYTHONPATH: that is the installed package, not a shadow."""
    from fakehost import official_image

    ascend_host(fake, "0.11.0rc3")
    ws = tmp_path / "vllm-workspace"
    fake.install(official_image(workspace=ws))
    fake.env["PYTHONPATH"] = str(ws / "vllm")
    assert "env.import_shadow" not in {x["id"] for x in fake.judge()["findings"]}


# -- Mooncake ---------------------------------------------------------------------------------------

P2P_COMMAND = """export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
vllm serve /models/Qwen2.5-7B-Instruct --tensor-parallel-size 1 --kv-transfer-config \
'{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer", "kv_port": "20001"}'"""


def test_prefill_decode_sizes_come_from_the_command_or_are_named_placeholders(fake):
    ascend_host(fake, "0.11.0rc3")
    doc = fake.judge(serve_args=P2P_COMMAND)
    hints = [f["hint"] for f in doc["findings"] if f["id"] == "mooncake.serve_args" and f["hint"]
             and '"tp_size"' in f["hint"]]
    assert '"prefill": {"tp_size": 1, "dp_size": 1}' in hints
    assert '"decode": {"tp_size": <decode tp_size>, "dp_size": <decode dp_size>}' in hints
    assert not any('"tp_size": 8' in h for h in hints)  # never guessed from the visible devices


def _build_host(fake, master_json: str):
    fake.toolkit("8.3.RC2").sourced(driver=False)
    fake.venv(release_packages("0.11.0rc3"))
    fake.write("/opt/files/src/kv-cache/conf/mooncake_vllm.json", master_json)


def test_build_stage_does_not_contact_the_field_reports_master(fake):
    """The two-node deployment's mooncake.json (master 2.2.2.2:50058) and launch script, checked
    in a `docker build`: the master is not contacted, so the build is not failed on it."""
    _build_host(fake, (DATA / "mooncake" / "seed001_mooncake_vllm.json").read_text())
    start = time.monotonic()
    doc = fake.judge(serve_args_file=str(DATA / "mooncake" / "seed001_launch.sh"))
    assert doc["stage"] == "build" and time.monotonic() - start < 10
    f = finding(doc, "mooncake.master")
    assert f["status"] == "skip" and "2.2.2.2:50058" in f["title"] and "docker build" in f["title"]
    assert doc["summary"]["root_cause"] != "mooncake.master"


def test_build_stage_opens_no_connection_to_the_master(fake):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    config = json.loads((DATA / "mooncake" / "seed001_mooncake_vllm.json").read_text())
    config["master_server_address"] = f"127.0.0.1:{port}"
    _build_host(fake, json.dumps(config))
    script = str(DATA / "mooncake" / "seed001_launch.sh")
    try:
        for stage in ("auto", "build"):
            doc = fake.judge(serve_args_file=script, stage=stage)
            assert finding(doc, "mooncake.master")["status"] == "skip"
            with pytest.raises(socket.timeout):
                listener.accept()  # nobody knocked
        doc = fake.judge(serve_args_file=script, stage="runtime")  # the runtime stage does contact it
        conn, _ = listener.accept()
        conn.close()
        assert finding(doc, "mooncake.master")["status"] != "skip"
    finally:
        listener.close()
