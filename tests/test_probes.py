import sys

import pytest

from fakehost import FakeHost, fixture

from doctor.shell.host.root import Host
from doctor.probes.cann import probe_cann
from doctor.probes.devices import can_read_write, probe_devices
from doctor.probes.driver import probe_driver, probe_firmware
from doctor.probes.host_info import probe_host


def host(fake: FakeHost, **env) -> Host:
    return Host(root=str(fake.root), env=dict(fake.env, **env))


def test_driver_and_firmware_from_recorded_files(fake):
    fake.driver("driver-25.0.rc1.1-tworanges.info").firmware("firmware-7.7.0.1.231-long.info")
    d = probe_driver(host(fake))
    assert (d.found, d.version, d.innerversion) == (True, "25.0.rc1.1", "V100R001C21SPC002B220")
    assert d.compatible_fw == [["6.4.0", "6.4.99"], ["7.0.0", "7.7.99"]]
    assert d.hal_lib_found and d.install_info["driver_install_path_param"] == "/usr/local/Ascend"
    fw = probe_firmware(host(fake), d)
    assert fw.version == "7.7.0.1.231"
    assert ["25.0", "25.0."] in fw.compatible_drv and ["23.0.rc2", "23.0.rc2."] in fw.compatible_drv


def test_driver_without_package_version_and_indented(fake):
    fake.driver("driver-24.1.rc1-nopkg.info")
    assert probe_driver(host(fake)).version == "24.1.rc1"
    fake.driver("driver-25.3.rc1-indented.info")
    d = probe_driver(host(fake))
    assert d.version == "25.3.rc1" and d.compatible_fw == [["7.0.0", "8.9.9"]]


def test_driver_path_comes_from_ascend_install_info(fake):
    fake.write("/etc/ascend_install.info", "Driver_Install_Path_Param=/opt/npu\n")
    fake.write("/opt/npu/driver/version.info", "Version=24.1.rc3\n")
    d = probe_driver(host(fake))
    assert d.base == "/opt/npu" and d.version == "24.1.rc3" and not d.hal_lib_found


def test_malformed_driver_file(fake):
    fake.write("/usr/local/Ascend/driver/version.info", "\x00\x01garbage without keys\n")
    d = probe_driver(host(fake))
    assert d.found and d.version is None and d.malformed


def test_cann_old_layout_through_latest_links(fake):
    fake.machine = "aarch64"
    fake.toolkit("8.3.RC2")
    c = probe_cann(host(fake), "aarch64")
    assert (c.found, c.version, c.layout, c.arch) == (True, "8.3.RC2", "ascend-toolkit", "aarch64")
    assert c.home == "/usr/local/Ascend/ascend-toolkit/latest"
    assert c.ops_found and c.ops_version == "8.3.RC2"
    assert c.libs == {"libascendcl.so": True, "libhccl.so": True}
    assert c.nnal.found and c.nnal.version == "8.3.RC2"
    assert c.set_env == "/usr/local/Ascend/ascend-toolkit/set_env.sh"
    assert c.other_versions == ["8.3.RC2"]


def test_cann_new_layout(fake):
    fake.machine = "x86_64"
    fake.toolkit("8.5.0", layout="cann", chip="910b")
    c = probe_cann(host(fake), "x86_64")
    assert (c.version, c.layout, c.real_home) == ("8.5.0", "cann", "/usr/local/Ascend/cann-8.5.0")
    assert c.ops_package == "Ascend-cann-910b-ops" and c.ops_version == "8.5.0"


def test_cann_from_ascend_home_path_first(fake):
    fake.machine = "aarch64"
    fake.toolkit("8.3.RC2")
    fake.write("/opt/cann/aarch64-linux/ascend_toolkit_install.info", "version=8.2.RC1\n")
    c = probe_cann(host(fake, ASCEND_HOME_PATH="/opt/cann"), "aarch64")
    assert (c.how, c.version) == ("ASCEND_HOME_PATH", "8.2.RC1")
    assert not c.ops_found


def test_cann_recorded_install_info_files(fake):
    for name, version in (("toolkit-8.2.RC1-aarch64.info", "8.2.RC1"), ("toolkit-8.0.0-aarch64.info", "8.0.0"),
                          ("toolkit-7.0.RC1.info", "7.0.RC1")):
        fake.write("/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info",
                   fixture(name))
        assert probe_cann(host(fake), "aarch64").version == version


def test_cann_version_from_links_when_info_missing(fake):
    fake.machine = "aarch64"
    fake.toolkit("8.2.RC2")
    fake.remove("/usr/local/Ascend/ascend-toolkit/8.2.RC2/aarch64-linux/ascend_toolkit_install.info")
    c = probe_cann(host(fake), "aarch64")
    assert c.version == "8.2.RC2" and c.malformed


def test_no_cann(fake):
    c = probe_cann(host(fake), "aarch64")
    assert not c.found and "/usr/local/Ascend/cann" in c.searched


def test_permission_judgement_from_stat_data():
    assert can_read_write(0o660, 0, 1000, 0, [0])  # root
    assert can_read_write(0o660, 0, 1000, 1001, [1001, 1000])  # in HwHiAiUser
    assert not can_read_write(0o660, 0, 1000, 1001, [1001])
    assert can_read_write(0o666, 0, 1000, 1001, [1001])
    assert not can_read_write(0o640, 0, 1000, 1001, [1000])


def test_devices_and_npu_smi(fake):
    fake.devices(count=8).npu_smi("npu-smi-910b4-32g.txt")
    h = host(fake)
    not_run = []
    d = probe_devices(h, probe_host(h), npu_smi_timeout=5, not_run=not_run)
    assert d.npu_smi is None and not_run == ["/usr/local/bin/npu-smi"]  # inside --root: never run
    binary = fake.npu_smi_binary()
    h = Host(root=str(fake.root), env=fake.env, named=[binary])
    d = probe_devices(h, probe_host(h), npu_smi_timeout=5, named=binary)
    assert [n.path for n in d.davinci] == [f"/dev/davinci{i}" for i in range(8)]
    assert all(n.exists and n.group == "HwHiAiUser" for n in d.management)
    assert d.npu_smi.ok and len(d.npu_smi_info.chips) == 8


def test_devices_sorted_numerically(fake):
    fake.devices(count=16)
    h = host(fake)
    d = probe_devices(h, probe_host(h), 5)
    assert [n.path for n in d.davinci][:3] == ["/dev/davinci0", "/dev/davinci1", "/dev/davinci2"]
    assert d.davinci[-1].path == "/dev/davinci15"


@pytest.mark.parametrize("env", ["own", pytest.param("torch", marks=pytest.mark.slow)])
def test_metadata_scan_agrees_with_importlib_metadata(env):
    """The fast header scan reads what importlib.metadata reads, for a real environment: the test
    run's own (about a hundred distributions) in the fast loop, one with the real torch CPU build
    (883 MB, built once per machine) in the full suite."""
    import json
    import subprocess

    from fakehost.torchenv import torch_python

    from doctor.probes.packages import scan
    from doctor.probes.python_env import probe_python

    python = str(torch_python()) if env == "torch" else sys.executable
    py = probe_python(Host(), python)
    # importlib.metadata over the very path the scan reads (this run's path holds the checkout, whose
    # egg-info stands in front of the editable install's dist-info); the first of a name wins, as in
    # importlib.metadata.distribution(name)
    code = ("import importlib.metadata as m, json, re, sys; sys.path[:] = json.loads(sys.argv[1]); out = {}\n"
            "for d in m.distributions(): out.setdefault(re.sub(r'[-_.]+', '-', d.metadata['Name']).lower(),"
            " [d.version, sorted(d.requires or []), d.metadata.get('Requires-Python')])\n"
            "print(json.dumps(out))")
    ref = json.loads(subprocess.run([python, "-I", "-c", code, json.dumps(list(py.sys_path))], capture_output=True,
                                    text=True, check=True, timeout=120).stdout)
    mine = {k: [d.version, sorted(d.requires), d.requires_python] for k, d in scan(Host(), py.sys_path).dists.items()}
    assert mine == ref and ("torch" in mine if env == "torch" else "pytest" in mine and len(mine) > 30)


def test_the_interpreter_that_owns_site_packages_directories():
    """--site-packages (and --root without --python) run no interpreter; the plan's commands name
    the one whose environment holds the directories, never python3 on PATH."""
    from doctor.probes.python_env import owning_interpreter

    have = {"/srv/venv/bin/python3.11", "/srv/venv/bin/python3", "/usr/bin/python3", "/opt/env/bin/python"}
    exe = have.__contains__
    assert owning_interpreter(["/srv/venv/lib/python3.11/site-packages"], exe) == "/srv/venv/bin/python3.11"
    assert owning_interpreter(["/srv/venv/lib64/python3.11/site-packages/", "/srv/venv/lib/python3.11/site-packages"],
                              exe) == "/srv/venv/bin/python3.11"
    assert owning_interpreter(["/usr/lib/python3/dist-packages"], exe) == "/usr/bin/python3"
    assert owning_interpreter(["/opt/env/lib/python3.10/site-packages"], exe) == "/opt/env/bin/python"
    # a copied directory, two environments, or an owner that is not there: none
    assert owning_interpreter(["/tmp/copy/site-packages"], exe) is None
    assert owning_interpreter(["/srv/venv/lib/python3.11/site-packages", "/usr/lib/python3/dist-packages"], exe) is None
    assert owning_interpreter(["/gone/lib/python3.11/site-packages"], exe) is None
    assert owning_interpreter([], exe) is None


def test_a_plan_for_site_packages_directories_names_their_own_interpreter(tmp_path):
    """fix --site-packages DIR: every pip step names the interpreter of DIR's environment (it ran
    pip of `python3` on PATH, which installs into another environment)."""
    import json
    import os
    import subprocess
    import sys

    import doctor_fork
    from fakehost import REPO

    venv = tmp_path / "serving"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    ver = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    site = venv / "lib" / ver / "site-packages"
    for name, version in (("vllm_ascend", "0.11.0rc0"), ("vllm", "0.11.2"), ("torch", "2.8.0"), ("torch_npu", "2.7.1")):
        d = site / f"{name}-{version}.dist-info"
        d.mkdir(parents=True)
        (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n")
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "fix", "--site-packages", str(site), "--offline", "--json"],
                           env=dict(os.environ, PYTHONPATH=str(REPO)), cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
    steps = [s for s in json.loads(proc.stdout)["steps"] if s.get("argv") and "pip" in s["argv"]]
    assert steps, proc.stdout[-2000:]
    for s in steps:
        argv = s["argv"]
        assert argv[argv.index("--python") + 1] == str(venv / "bin" / ver), argv


def test_egg_info_requirements_read_as_importlib_metadata_spells_them():
    """requires.txt sections become the strings importlib.metadata gives (its egg-info reader):
    the marker first, in parentheses only beside an extra."""
    import importlib.metadata as im

    from doctor.parse.metadata import egg_requires

    text = 'a>=1\n[test]\nb\n[:sys_platform == "linux" and (x or y)]\nc<2\n[gpu:python_version < "3.12"]\nd\n'
    ours = egg_requires(text)
    assert ours == ['a>=1', 'b; extra == "test"', 'c<2; sys_platform == "linux" and (x or y)',
                    'd; (python_version < "3.12") and extra == "test"'.replace('"test"', '"gpu"')]

    class Egg(im.Distribution):
        def read_text(self, filename):
            return text if filename == "requires.txt" else None

        def locate_file(self, path):
            return path

    assert Egg().requires == ours


def test_an_egg_info_with_requires_dist_in_pkg_info_is_read_as_importlib_metadata_reads_it(tmp_path):
    """importlib.metadata takes PKG-INFO's Requires-Dist when it has any and requires.txt only
    otherwise (setuptools writes both, spelling markers differently): so does the scan."""
    import importlib.metadata as im

    from doctor.probes.packages import scan

    both = tmp_path / "both.egg-info"
    both.mkdir()
    (both / "PKG-INFO").write_text('Metadata-Version: 2.1\nName: both\nVersion: 1.0\n'
                                   'Requires-Dist: z>=1; python_version < "3.14" and extra == "image"\n')
    (both / "requires.txt").write_text('[image:python_version < "3.14"]\nz>=1\n')
    old = tmp_path / "old.egg-info"
    old.mkdir()
    (old / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: old\nVersion: 2.0\n")
    (old / "requires.txt").write_text('a\n[gpu:sys_platform == "linux"]\nb\n')
    dists = scan(Host(), [str(tmp_path)]).dists
    theirs = {d.metadata["Name"]: list(d.requires or []) for d in im.distributions(path=[str(tmp_path)])}
    assert {name: dists[name].requires for name in ("both", "old")} == theirs
    assert dists["both"].requires == ['z>=1; python_version < "3.14" and extra == "image"']
    assert dists["old"].requires == ["a", 'b; (sys_platform == "linux") and extra == "gpu"']
