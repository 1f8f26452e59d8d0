"""Seed 003's deployment as fake nodes: two Atlas 800T A2 hosts, each running one vllm-ascend
v0.22.1rc1 container with 4 NPUs (/dev/davinci0-3), hccn_tool and /etc/hccn.conf mounted, a
Mooncake KV pool (MooncakeConnectorStoreV1, kv_both, P2PHANDSHAKE/ascend, one master), the
control-plane variables of the multi-node guides in the launch script.

``node()`` builds one; ``drifted`` makes the node that went wrong: another torch-npu, TLS on,
another HCCL_SOCKET_IFNAME. ``wrapper()`` installs "the doctor as installed on that node": an
``ascend-doctor`` script on the node's PATH that runs this repository's doctor against the node's
root, so ssh, kubectl and Ray reach a different node each. Run this module to remake the
recorded snapshots of tests/data/fleet (see the README there).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict, Optional

from . import DATA as HOST_DATA
from . import REPO, FakeHost
from .hccn import install as install_hccn
from .hccn import node_ports
from .scenarios import ascend_host

MOONCAKE = REPO / "tests" / "data" / "mooncake"
RELEASE = "0.22.1rc1"
NET = HOST_DATA / "hccn"


def node_ip(node: int) -> str:
    return f"192.0.2.{node + 1}"  # the recorded fib_trie's /24 (TEST-NET-1, never routed)


def network(fake: FakeHost, node: int, iface: str = "eth0") -> None:
    """The host's interface tables, recorded on a real Linux machine, with this node's address."""
    fake.write("/proc/net/fib_trie", (NET / "proc-net-fib_trie.txt").read_text().replace("192.0.2.2", node_ip(node)))
    fake.write("/proc/net/route", (NET / "proc-net-route.txt").read_text().replace("eth0", iface))
    fake.write("/proc/net/if_inet6", (NET / "proc-net-if_inet6.txt").read_text().replace("eth0", iface))
    fake.write(f"/sys/class/net/{iface}/operstate", "up\n")
    fake.write("/sys/class/net/lo/operstate", "unknown\n")


def launch_script(node: int, ifname: str = "eth0", hash_seed: Optional[str] = "0") -> str:
    """Seed 003's launch script for instance ``node``, with the guides' control-plane exports."""
    text = (MOONCAKE / "seed003_launch.sh").read_text()
    text = text.replace("<your_server_ip>", node_ip(node)).replace("<path_to_your_model>", "/models")
    exports = [f"export HCCL_IF_IP={node_ip(node)}", f"export HCCL_SOCKET_IFNAME={ifname}",
               f"export GLOO_SOCKET_IFNAME={ifname}", f"export TP_SOCKET_IFNAME={ifname}"]
    if hash_seed is not None:
        exports.append(f"export PYTHONHASHSEED={hash_seed}")
    return "\n".join(exports) + "\n" + text


def node(fake: FakeHost, node: int, *, master: str = "127.0.0.1:50088", drifted: bool = False,
         kit=None) -> FakeHost:
    overrides: Dict[str, str] = {"torch_npu": "2.8.0"} if drifted else {}
    ascend_host(fake, RELEASE, **overrides)
    for i in range(4, 8):  # the container maps /dev/davinci0-3 only
        fake.remove(f"/dev/davinci{i}")
    fake.write("/etc/hostname", f"atlas-a2-{node}\n")
    install_hccn(fake, node_ports(node, count=4, tls=1 if drifted else 0))
    network(fake, node)
    config = json.loads((MOONCAKE / "seed003_mooncake.json").read_text())
    config["master_server_address"] = master
    fake.write("/vllm-workspace/mooncake.json", json.dumps(config, indent=4) + "\n")
    fake.write("/vllm-workspace/launch.sh", launch_script(node, "enp189s0f0" if drifted else "eth0"))
    if kit is not None:
        from .mooncake import cann_libs, meminfo, npu_wheel

        cann_libs(fake, kit)
        npu_wheel(fake, kit, "0.3.11.post1")
        meminfo(fake, 1024)
    return fake


def wrapper(fake: FakeHost) -> Path:
    """``<base>/bin/ascend-doctor``: the doctor installed on this node, reading its root."""
    bin_dir = fake.base / "bin"
    bin_dir.mkdir(exist_ok=True)
    exports = "".join(f"export {k}='{v}'\n" for k, v in sorted(fake.env.items()) if k not in ("PATH",))
    script = bin_dir / "ascend-doctor"
    script.write_text(
        "#!/bin/sh\n" + exports
        + f"export PYTHONPATH='{REPO}'\ncd '{fake.workdir}'\n"
        + f"exec '{sys.executable}' -m doctor \"$@\" --root '{fake.root}' --python '{fake.python}'"
        + f" --hccn-tool '{fake.p('/usr/local/Ascend/driver/tools/hccn_tool')}'\n")
    script.chmod(0o755)
    return script


def snapshot_args(fake: FakeHost, master: Optional[str] = None) -> list:
    args = ["--serve-args-file", str(fake.p("/vllm-workspace/launch.sh")),
            "--hccn-tool", str(fake.p("/usr/local/Ascend/driver/tools/hccn_tool"))]
    return args + (["--mooncake-master", master] if master else [])


def snapshot(fake: FakeHost, master: Optional[str] = None) -> str:
    """`ascend-doctor snapshot` of the node, in this process (what the node's doctor prints)."""
    from doctor.usecases.check import CheckOptions, gather, snapshot_json

    facts = gather(CheckOptions(root=str(fake.root), python=str(fake.python), cwd=str(fake.workdir),
                                serve_args_file=str(fake.p("/vllm-workspace/launch.sh")), mooncake_master=master,
                                hccn_tool=str(fake.p("/usr/local/Ascend/driver/tools/hccn_tool"))), env=dict(fake.env))
    return snapshot_json(facts)


def record(out: Path) -> None:
    """Remake tests/data/fleet: node1, node2 and a drifted node2, with a master answering on
    loopback (the recorded mooncake_master v0.3.11.post1 endpoints)."""
    import tempfile

    sys.path.insert(0, str(REPO / "tests"))
    from shell.mooncake.test_master import Master, recorded  # the loopback master of the master tests

    from .mooncake import ElfKit

    master = Master(recorded("v0.3.11.post1"))
    rpc = master.address.split(":")[1]
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        kit = ElfKit(Path(tmp) / "kit")
        for name, n, drift in (("node1", 1, False), ("node2", 2, False), ("node2-drifted", 2, True)):
            fake = node(FakeHost(Path(tmp) / name), n, master=f"127.0.0.1:{rpc}", drifted=drift, kit=kit)
            (out / f"{name}.json").write_text(snapshot(fake, master.address) + "\n")
    master.close()


if __name__ == "__main__":
    record(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "tests" / "data" / "fleet")
