import time

from doctor.shell.host import Host


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
    host = Host(root=str(fake.root), env={"PATH": "/usr/bin:/bin"})
    start = time.monotonic()
    result = host.run(["/usr/local/bin/npu-smi", "info"], timeout=0.5)
    assert result.timed_out and not result.ok
    # the script's `sleep 60` child holds the pipes; killing only the shell would hang here
    assert time.monotonic() - start < 3


def test_missing_command_is_a_fact_not_an_exception():
    result = Host().run(["/definitely/not/here"], timeout=1)
    assert result.found is False and not result.ok
