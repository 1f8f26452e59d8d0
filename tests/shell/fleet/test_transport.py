"""doctor/shell/fleet/transport.py: one Reply per node from real commands (sh standing in for
ssh/kubectl: what the transport judges is the finished process), in the order asked."""
import json
import sys

from doctor.shell.fleet import transport
from doctor.shell.runtime import proc

SNAPSHOT = json.dumps({"host": {"hostname": "node1"}})


def _judge(script: str, timeout: float = 20.0):
    argv = ["sh", "-c", script]
    return transport.judge_output("node1", proc.run(argv, timeout), timeout, argv)


def test_a_snapshot_on_stdout_is_an_answer():
    reply = _judge(f"echo 'login banner'; echo '{SNAPSHOT}'")
    assert reply.error is None and reply.node == "node1" and reply.argv[0] == "sh"


def test_every_way_a_node_does_not_answer_is_a_reply_with_its_reason(tmp_path):
    assert "the doctor is not installed there" in _judge("echo 'ascend-doctor: not found' >&2; exit 127").error
    assert _judge("echo oops >&2; exit 3").error == "exit 3: oops"
    assert _judge("echo '{\"not\": 1}'").error == "exit 0: no snapshot on stdout"
    assert _judge("sleep 5", timeout=0.5).error == "no answer within 0.5 s"
    missing = str(tmp_path / "no-ssh")
    reply = transport.judge_output("n", proc.run([missing], 5.0), 5.0, [missing])
    assert reply.error == f"{missing}: not found on this machine"


def test_nodes_answer_in_parallel_in_the_order_asked():
    done = []
    replies = transport.parallel(["a", "b", "c"], lambda n: transport.Reply(node=n), done.append)
    assert [r.node for r in replies] == ["a", "b", "c"] and sorted(r.node for r in done) == ["a", "b", "c"]
    assert transport.parallel([], lambda n: transport.Reply(node=n)) == []


def test_an_ssh_host_is_never_read_as_an_option():
    assert transport.check_host("user@node1") is None and transport.check_host("ssh://u@[::1]:2222") is None
    assert transport.check_host("-oProxyCommand=sh") and transport.check_host("a b")
    argv = transport.ssh_argv("node1", [sys.executable, "-m", "doctor", "snapshot"], 30.0)
    assert argv[0] == "ssh" and argv[-2] == "node1" and argv[-1].endswith("-m doctor snapshot")
