"""fleet check --ssh against a real OpenSSH server on loopback: two "hosts" (127.0.0.1 and
127.0.0.2, one sshd; each address puts its own node's doctor first on PATH) and a third host that
accepts the TCP connection and never says a word (127.0.0.3)."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time

import pytest
from fakehost import REPO, FakeHost
from fakehost.fleet import node, wrapper

from doctor.shell.fleet.transport import check_host, ssh_argv
import doctor_fork

SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd") else None)
# Long enough for an answering node's ssh handshake and check on a loaded 2-core machine (6 s was
# not, under CI's 8 workers); the silent host costs exactly this, in parallel with the others.
TIMEOUT = 20.0


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if SSHD is None or shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        pytest.skip("OpenSSH server/client not installed (apt-get install openssh-server openssh-client)")
    if os.geteuid() != 0:
        pytest.skip("sshd needs root here (privilege separation directory, host keys)")
    base = tmp_path_factory.mktemp("ssh")
    nodes = {}
    for n, addr in ((1, "127.0.0.1"), (2, "127.0.0.2")):
        fake = node(FakeHost(base / f"node{n}"), n, drifted=(n == 2))
        script = wrapper(fake)
        # the node's own launch script: the fake nodes share one filesystem, so its path is real
        script.write_text(script.read_text().rstrip("\n") + f" --serve-args-file '{fake.p('/vllm-workspace/launch.sh')}'\n")
        nodes[addr] = fake
    for name in ("key", "hostkey"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(base / name)], check=True, timeout=30)
    (base / "authorized_keys").write_text((base / "key.pub").read_text())
    (base / "authorized_keys").chmod(0o600)
    os.makedirs("/run/sshd", exist_ok=True)
    port = free_port()
    sys_path = "/usr/local/bin:/usr/bin:/bin"
    config = [f"ListenAddress 127.0.0.1:{port}", f"ListenAddress 127.0.0.2:{port}", f"HostKey {base / 'hostkey'}",
              f"AuthorizedKeysFile {base / 'authorized_keys'}", "PasswordAuthentication no",
              "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no", f"PidFile {base / 'sshd.pid'}",
              "PermitRootLogin prohibit-password"]
    for addr, fake in nodes.items():
        config += [f"Match LocalAddress {addr}", f"  SetEnv PATH={fake.base / 'bin'}:{sys_path}"]
    (base / "sshd_config").write_text("\n".join(config) + "\n")
    sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", str(base / "sshd_config")], stdout=subprocess.DEVNULL,
                            stderr=open(base / "sshd.log", "w"))
    silent = socket.socket()  # the host that never answers: TCP accepted by the kernel, no banner
    silent.bind(("127.0.0.3", port))
    silent.listen(8)
    (base / "ssh_config").write_text(
        f"Host *\n  IdentityFile {base / 'key'}\n  UserKnownHostsFile /dev/null\n  StrictHostKeyChecking no\n"
        f"  LogLevel ERROR\n  Port {port}\n  User root\n")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.2", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    yield {"base": base, "nodes": nodes, "config": base / "ssh_config", "port": port}
    silent.close()
    sshd.terminate()
    sshd.wait(10)


def fleet(*args, cwd, timeout=90):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return doctor_fork.run([sys.executable, "-m", "doctor", "fleet", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.slow  # ~0.5 s of CPU or more: fake ssh nodes, one doctor run each
def test_two_nodes_answer_one_never_does(cluster, tmp_path):
    save = tmp_path / "snapshots"
    started = time.monotonic()
    proc = fleet("check", "--ssh", "127.0.0.1,127.0.0.2,127.0.0.3", "--ssh-config", str(cluster["config"]),
                 "--timeout", f"{TIMEOUT:g}", "--save", str(save), "--json", cwd=tmp_path)
    elapsed = time.monotonic() - started
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)  # nothing but the JSON on stdout
    nodes = {n["name"]: n for n in doc["nodes"]}
    assert nodes["127.0.0.1"]["answered"] and nodes["127.0.0.2"]["answered"]
    silent = nodes["127.0.0.3"]
    assert not silent["answered"] and ("no answer within" in silent["error"] or "timed out" in silent["error"])
    assert elapsed < TIMEOUT + 40  # the silent host costs one timeout, in parallel with the others
    ids = {(f["id"], f["status"]) for f in doc["findings"]}
    assert ("fleet.node", "fail") in ids and ("fleet.versions", "fail") in ids and ("fleet.tls", "fail") in ids
    unreachable = [f for f in doc["findings"] if f["id"] == "fleet.node" and "127.0.0.3" in f["title"]]
    assert unreachable and unreachable[0]["status"] == "fail"
    # each answering host ran its own node's doctor: node 2's own check fails on its interface name
    rows = {r["item"]: r for r in doc["rows"]}
    assert rows["HCCL_SOCKET_IFNAME"]["values"] == {"127.0.0.1": "eth0", "127.0.0.2": "enp189s0f0"}
    assert rows["torch-npu"]["values"] == {"127.0.0.1": "2.10.0", "127.0.0.2": "2.8.0"}
    assert sorted(p.name for p in save.iterdir()) == ["127.0.0.1.json", "127.0.0.2.json"]
    again = fleet("compare", str(save / "127.0.0.1.json"), str(save / "127.0.0.2.json"), "--json", cwd=tmp_path)
    assert again.returncode == 3
    assert {r["item"]: r["values"] for r in json.loads(again.stdout)["rows"]}["torch-npu"] == \
        {"127.0.0.1": "2.10.0", "127.0.0.2": "2.8.0"}


def test_doctor_missing_on_the_host_is_said_plainly(cluster, tmp_path):
    proc = fleet("check", "--ssh", "127.0.0.1", "--ssh-config", str(cluster["config"]), "--timeout", f"{TIMEOUT:g}",
                 "--remote-doctor", "/nonexistent/ascend-doctor", "--json", cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    node_doc = json.loads(proc.stdout)["nodes"][0]
    assert not node_doc["answered"] and "not installed there" in node_doc["error"] and "--remote-doctor" in node_doc["error"]


def test_bad_host_names_are_usage_errors(tmp_path):
    proc = fleet("check", "--ssh", "-oProxyCommand=touch x", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "not a host name" in proc.stderr
    assert not (tmp_path / "x").exists()


def test_ssh_argv_quotes_the_remote_command():
    argv = ssh_argv("ssh://root@10.0.0.1:2222", ["ascend-doctor", "snapshot", "--serve-args-file", "/w/my launch.sh"], 30)
    assert argv[:2] == ["ssh", "-T"] and "BatchMode=yes" in argv and "ConnectTimeout=30" in argv
    assert argv[-2] == "ssh://root@10.0.0.1:2222"
    assert argv[-1] == "ascend-doctor snapshot --serve-args-file '/w/my launch.sh'"
    assert check_host("node-1") is None and check_host("root@10.0.0.1") is None
    assert check_host("-F/etc/x") and check_host("a;b")


@pytest.mark.slow  # ~0.5 s of CPU or more: fake ssh nodes, one doctor run each
def test_more_hosts_than_one_run_reaches_is_a_usage_error_at_once(tmp_path):
    """--ssh with thousands of hosts ran for minutes (16 at a time, each up to --timeout; --ping
    then pings every pair): one line naming the limit, exit 2, before any host is reached; the
    limit itself is accepted."""
    from doctor.usecases.fleet import MAX_SSH_HOSTS, FleetCheckOptions, validate

    hosts = [f"10.{i // 250}.{i % 250}.1" for i in range(5000)]
    for lang, words in (("en", f"more than the {MAX_SSH_HOSTS}"), ("zh", f"{MAX_SSH_HOSTS} 台")):
        started = time.monotonic()
        proc = fleet("check", "--ssh", ",".join(hosts), "--timeout", "1", "--lang", lang, cwd=tmp_path)
        assert time.monotonic() - started < 20
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr[-500:]
        assert "5000" in proc.stderr and "Traceback" not in proc.stderr
    validate(FleetCheckOptions(ssh=",".join(hosts[:MAX_SSH_HOSTS])))
