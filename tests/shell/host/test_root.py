import os
import time

import pytest

from doctor.shell.host.root import Host, NotRun


def test_absolute_symlinks_resolve_inside_the_root(fake):
    fake.write("/usr/local/Ascend/cann-8.5.0/aarch64-linux/ascend_toolkit_install.info", "version=8.5.0\n")
    fake.symlink("/usr/local/Ascend/cann", "/usr/local/Ascend/cann-8.5.0")
    host = Host(root=str(fake.root), env={})
    assert host.read_text("/usr/local/Ascend/cann/aarch64-linux/ascend_toolkit_install.info") == "version=8.5.0\n"
    assert host.realpath("/usr/local/Ascend/cann") == "/usr/local/Ascend/cann-8.5.0"
    assert host.read_text("/etc/passwd-not-there") is None


def test_a_link_escaping_with_dotdot_stays_in_the_root(fake):
    fake.symlink("/opt/link", "../../../../../../etc")
    host = Host(root=str(fake.root), env={})
    assert host.path("/opt/link/group") == fake.root / "etc" / "group"


def test_which_searches_path_inside_the_root(fake):
    fake.npu_smi()
    host = Host(root=str(fake.root), env={"PATH": "/usr/local/bin"})
    assert host.which("npu-smi") == "/usr/local/bin/npu-smi"
    assert Host(root=str(fake.root), env={"PATH": "/nope"}).which("npu-smi", ["/usr/local/bin"]) == "/usr/local/bin/npu-smi"
    assert host.which("hccn_tool") is None


def test_hanging_command_is_killed_with_its_children(fake):
    fake.npu_smi(hang=True)
    binary = str(fake.p("/usr/local/bin/npu-smi"))
    host = Host(root=str(fake.root), env={"PATH": "/usr/bin:/bin"}, named=[binary])
    start = time.monotonic()
    result = host.run([binary, "info"], timeout=0.5)
    assert result.timed_out and not result.ok
    # the script's `sleep 60` child holds the pipes; killing only the shell would hang here
    assert time.monotonic() - start < 3


def test_missing_command_is_a_fact_not_an_exception():
    result = Host().run(["/definitely/not/here"], timeout=1)
    assert result.found is False and not result.ok


def test_nothing_inside_the_root_runs_unless_named(fake):
    marker = fake.base / "ran"
    fake.write("/usr/local/bin/npu-smi", f"#!/bin/sh\ntouch {marker}\n", 0o755)
    host = Host(root=str(fake.root), env={"PATH": "/usr/local/bin"})
    found = host.which("npu-smi")
    assert found == "/usr/local/bin/npu-smi" and not host.may_run(found)
    with pytest.raises(NotRun):
        host.run([found], timeout=5)
    with pytest.raises(NotRun):
        host.run([str(host.path(found))], timeout=5)  # its real path is inside the root too
    assert not marker.exists()
    assert Host().may_run("/usr/bin/true")  # the live host runs its own binaries


def chain(fake, n, last):
    """/l0 -> /l1 -> ... -> /l<n-1> -> last: n absolute links."""
    for i in range(n):
        fake.symlink(f"/l{i}", f"/l{i + 1}" if i + 1 < n else last)


def test_a_chain_of_45_links_is_an_error_not_a_read_outside(fake):
    chain(fake, 45, "/etc/os-release")
    fake.write("/etc/os-release", "ID=inside\n")
    host = Host(root=str(fake.root), env={})
    assert host.read_text("/l0") is None  # 45 > 40: not read, neither inside nor outside
    assert not host.exists("/l0") and host.listdir("/l0") == []
    assert any("more than 40 symbolic links" in p for p in host.problems)
    chain(fake, 40, "/etc/os-release")
    assert Host(root=str(fake.root), env={}).read_text("/l0") == "ID=inside\n"  # 40 is fine


def test_a_relative_chain_climbing_out_and_a_loop(fake):
    fake.symlink("/a/up", "../../../../../../../../etc")
    fake.write("/etc/group", "inside:x:1:\n")
    host = Host(root=str(fake.root), env={})
    assert host.read_text("/a/up/group") == "inside:x:1:\n"
    fake.symlink("/loop1", "/loop2")
    fake.symlink("/loop2", "/loop1")
    assert host.read_text("/loop1/x") is None and host.problems


def test_the_check_reports_an_escaping_chain(fake):
    """The host's /etc/ascend_install.info must not appear as the root's."""
    fake.ascend_host()
    chain(fake, 45, "/etc/ascend_install.info")
    fake.remove("/etc/ascend_install.info")
    fake.symlink("/etc/ascend_install.info", "/l0")
    from doctor.usecases.check import CheckOptions, gather

    facts = gather(CheckOptions(root=str(fake.root), site_packages=[str(fake.base)]), env=dict(fake.env))
    assert facts.driver.install_info_found is False
    assert [e.probe for e in facts.probe_errors] == ["root"]


def test_reads_never_block_on_a_fifo_or_fill_memory_from_a_device(fake):
    os.mkfifo(fake.p("/etc/fifo"))
    host = Host(root=str(fake.root), env={})
    start = time.monotonic()
    assert host.read_text("/etc/fifo") is None
    assert Host().read_bytes("/dev/zero") is None  # a device, not a regular file
    assert time.monotonic() - start < 1
    fake.write("/etc/big", "x" * 5000)
    assert len(host.read_text("/etc/big", limit=100)) == 100
