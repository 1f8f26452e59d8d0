"""Verdicts that used to be wrong (issue 10), from plain facts: a driver loaded but not installed,
files this user may not read, malformed vendor versions, the import location of the stack, the
torch-npu mirror, an undocumented CANN/driver pairing, the Mooncake prefill/decode sizes."""
import shlex

import pytest

from doctor.facts import DeniedPath, ImportLocation, ImportsFacts
from doctor.probes.malformed import reject_malformed_versions
from doctor.rules import access, cann as cann_rules, hardware as hw, imports, stack
from doctor.versions import version_problem

from .build import (_shipped, absent, python, cann, context, devices, driver, expect, facts, firmware, host, judge, nnal,
                    npu_smi, stack as dists, packages)

# -- driver.reboot_pending --------------------------------------------------------------------------


def _loaded(version):
    d = devices()
    d.npu_smi_info.driver_version = version
    return d


def test_driver_loaded_is_not_the_installed_one():
    ctx = context(facts(devices=_loaded("24.1.rc3")))
    f = expect(judge(hw.driver_reboot_pending, ctx), "driver.reboot_pending", "warn")
    assert f.observed.startswith("24.1.rc3") and f.expected.startswith("25.0.rc1.1")
    assert [c.shell() for c in f.commands] == ["npu-smi info", "reboot"]
    assert "24.1.rc3" in f.title.text("zh") and "25.0.rc1.1" in f.title.text("zh")


def test_container_says_the_host_reboots():
    ctx = context(facts(host=host(in_container=True), devices=_loaded("24.1.rc3")))
    f = expect(judge(hw.driver_reboot_pending, ctx), "driver.reboot_pending", "warn")
    assert "not this container" in f.commands[1].label.text("en")


@pytest.mark.parametrize("loaded", ["25.0.rc1.1", "25.0.RC1.1"])  # npu-smi and version.info may differ in case
def test_same_driver_loaded_and_installed_says_nothing(loaded):
    absent(judge(hw.driver_reboot_pending, context(facts(devices=_loaded(loaded)))), "driver.reboot_pending")


def test_reboot_pending_needs_both_versions_and_the_runtime_stage():
    absent(judge(hw.driver_reboot_pending, context(facts(devices=_loaded(None)))), "driver.reboot_pending")
    absent(judge(hw.driver_reboot_pending, context(facts(driver=driver(version=None), devices=_loaded("24.1.rc3")))),
           "driver.reboot_pending")
    absent(judge(hw.driver_reboot_pending, context(facts(devices=_loaded("24.1.rc3")), stage="build")),
           "driver.reboot_pending")
    failed = devices(**npu_smi(returncode=255))  # npu-smi failed: nothing loaded to compare
    absent(judge(hw.driver_reboot_pending, context(facts(devices=failed))), "driver.reboot_pending")


# -- permission denied -------------------------------------------------------------------------------

VERSION_INFO = "/usr/local/Ascend/driver/version.info"


def _denied(path=VERSION_INFO, refused=VERSION_INFO, mode=0o440, is_dir=False, group="HwHiAiUser"):
    return DeniedPath(path=path, refused_by=refused, is_dir=is_dir, mode=mode, uid=0, gid=1000, owner="root",
                      group=group)


def test_unreadable_driver_version_is_permission_not_a_missing_mount():
    ctx = context(facts(host=host(in_container=True, user="alice", uid=1001, gids=[1001]),
                        driver=driver(found=False, version=None, denied=_denied())))
    f = expect(judge(access.driver_permission, ctx), "driver.permission", "fail")
    assert VERSION_INFO in f.title.text("en") and "alice" in f.title.text("en")
    assert [c.argv for c in f.commands] == [("sudo", "usermod", "-aG", "HwHiAiUser", "alice")]
    assert "HwHiAiUser" in f.hint.text("zh") and "root" in f.hint.text("en")
    assert f.observed == f"{VERSION_INFO} -r--r----- root:HwHiAiUser"
    absent(judge(hw.driver_installed, ctx), "driver.installed")  # not "driver not mounted into this container"


def test_a_file_only_its_owner_reads_asks_for_root_not_a_group():
    d = _denied(mode=0o400)
    ctx = context(facts(host=host(user="alice", uid=1001), driver=driver(found=False, version=None, denied=d)))
    f = expect(judge(access.driver_permission, ctx), "driver.permission", "fail")
    assert not f.commands and "root" in f.hint.text("en")


def test_unsearchable_cann_directory_is_permission_not_missing():
    toolkit = "/usr/local/Ascend/ascend-toolkit"
    d = _denied(path=f"{toolkit}/latest", refused=toolkit, mode=0o750, is_dir=True)
    ctx = context(facts(host=host(user="bob", uid=1002), cann=cann(found=False, version=None, denied=d)))
    f = expect(judge(access.cann_permission, ctx), "cann.permission", "fail")
    assert toolkit in f.title.text("en") and f.commands[0].argv[-2:] == ("HwHiAiUser", "bob")
    absent(judge(cann_rules.cann_installed, ctx), "cann.installed")  # not "CANN toolkit not found"


def test_readable_files_have_no_permission_finding():
    absent(judge(access.driver_permission, context()), "driver.permission")
    absent(judge(access.cann_permission, context()), "cann.permission")


def test_unreadable_firmware_is_a_warning_with_the_group():
    ctx = context(facts(firmware=firmware(found=False, version=None,
                                          denied=_denied("/usr/local/Ascend/firmware/version.info",
                                                         "/usr/local/Ascend/firmware/version.info"))))
    f = expect(judge(hw.firmware_installed, ctx), "firmware.installed", "warn")
    assert f.commands and "permission" in f.title.text("en")


# -- malformed vendor versions -----------------------------------------------------------------------


@pytest.mark.parametrize("text", ["8.3.RC2;touch${IFS}/tmp/x;#", "8.3.RC2\ufffd\ufffd", "25.0.rc1.1 $(id)", "8.3.RC2`id`",
                                  "1" * 80, "８.３.RC2"])
def test_what_is_not_a_version(text):
    assert version_problem(text)


@pytest.mark.parametrize("text", ["8.3.RC2", "9.1.0-beta.1", "23.0.rc1.b070", "7.7.0.1.231", "8.2.RC1.alpha002",
                                  "24.1.rc2.2", "25.0.rc1.1", "8.0.RC3", "9.2.beta2"])
def test_what_is_a_version(text):
    assert version_problem(text) is None


def test_malformed_versions_leave_the_facts_before_any_rule():
    f = facts(driver=driver(version="25.0.rc1.1;id"), firmware=firmware(version="7.7.0\ufffd"),
              cann=cann(version="8.3.RC2;touch${IFS}/tmp/x;#", ops_version="8.3.RC2$(id)",
                        nnal=nnal(version="8.3.RC2 && id")),
              devices=_loaded("25.0.rc1.1;reboot"))
    reject_malformed_versions(f)
    assert (f.driver.version, f.firmware.version, f.cann.version, f.cann.ops_version, f.cann.nnal.version) == (None,) * 5
    assert "is not a version" in f.driver.malformed and VERSION_INFO in f.driver.malformed
    assert "bytes that are not UTF-8" in f.firmware.malformed
    assert f.devices.npu_smi_info.driver_version is None
    assert any(e.probe == "devices" and "npu-smi" in e.error for e in f.probe_errors)
    ctx = context(f)
    installed = expect(judge(cann_rules.cann_installed, ctx), "cann.installed", "fail")
    assert f.cann.install_info_path in installed.title.text("en") and "is not a version" in installed.observed
    expect(judge(hw.driver_installed, ctx), "driver.installed", "fail")
    absent(judge(cann_rules.cann_driver, ctx), "cann.driver_compat")  # never judged as a version
    absent(judge(cann_rules.cann_release, ctx), "cann.release_match")


def test_malformed_ops_and_nnal_versions_are_their_files():
    f = facts(cann=cann(ops_version=None, ops_malformed="opp_kernel/version.info: version= 'x;y' is not a version",
                        nnal=nnal(version=None, malformed="latest/version.info: 'x;y' is not a version")))
    ctx = context(f)
    expect(judge(cann_rules.cann_kernels, ctx), "cann.kernels", "fail")
    expect(judge(cann_rules.cann_nnal, ctx), "cann.nnal", "fail")


def test_host_paths_in_hints_are_shell_quoted():
    lib_dir = "/opt/my npu;touch x/driver/lib64"
    ctx = context(facts(host=host(in_container=True, user="a b"), driver=driver(lib_dir=lib_dir, hal_lib_found=False)))
    hint = expect(judge(hw.driver_libs, ctx), "driver.libs", "fail").hint.text("en")
    words = shlex.split(hint.split("docker run option:", 1)[1].replace("...", ""))
    assert words == ["-v", f"{lib_dir}/:{lib_dir}/"]
    path = "/opt/x;y/Ascend/nnal/atb"
    ctx = context(facts(cann=cann(nnal=nnal(found=False, path=path))))
    f = expect(judge(cann_rules.cann_nnal, ctx), "cann.nnal", "fail")
    printed = f.hint.text("en") + "\n" + "\n".join(c.shell() for c in f.commands)
    assert shlex.quote(path) in printed and f"{path};" not in printed.replace(shlex.quote(path), "")


# -- env.import_shadow -------------------------------------------------------------------------------

SITE = "/env/lib/python3.11/site-packages"
TREE = "/vllm-workspace/vllm"


def _imports(python_path, source="environment", **loc):
    base = dict(name="vllm", dist="vllm", found=f"{TREE}/vllm", entry=TREE, kind="package", installed=f"{SITE}/vllm",
                same_as_installed=False)
    base.update(loc)
    return ImportsFacts(python_path=python_path, python_path_source=source, sys_path=python_path + [SITE],
                        located=[ImportLocation(**base)])


def test_pythonpath_source_tree_shadows_the_installed_vllm():
    ctx = context(facts(imports=_imports(["/opt/extra", TREE], source="launch.sh")))
    f = expect(judge(imports.import_shadow, ctx), "env.import_shadow", "fail")
    assert f.observed == f"{TREE}/vllm" and f.expected == f"{SITE}/vllm"
    assert "0.11.0" in f.title.text("en") and TREE in f.hint.text("zh")
    assert [c.shell() for c in f.commands] == ["export PYTHONPATH=/opt/extra"]
    assert "launch.sh" in f.commands[0].label.text("en")


def test_only_entry_on_pythonpath_unsets_it():
    f = expect(judge(imports.import_shadow, context(facts(imports=_imports([TREE])))), "env.import_shadow", "fail")
    assert [c.argv for c in f.commands] == [("unset", "PYTHONPATH")]


def test_a_shadow_outside_pythonpath_names_the_entry_without_a_command():
    ctx = context(facts(imports=_imports([], entry="/root/.local/lib/python3.11/site-packages",
                                         found="/root/.local/lib/python3.11/site-packages/vllm")))
    f = expect(judge(imports.import_shadow, ctx), "env.import_shadow", "fail")
    assert not f.commands and ".pth" in f.hint.text("en")


def test_installed_package_imported_says_nothing():
    absent(judge(imports.import_shadow, context(facts(imports=_imports([TREE], same_as_installed=True)))),
           "env.import_shadow")
    absent(judge(imports.import_shadow, context()), "env.import_shadow")


# -- torch-npu builds only the Ascend mirror has -----------------------------------------------------


def _row():
    return next(r for r in _shipped().releases if r.vllm_ascend == "0.11.0rc3")


@pytest.mark.parametrize("fid,check,versions", [
    ("torch_npu.version", stack.torch_npu_version, dict(torch="2.8.0+cpu", torch_npu="2.8.0")),
    ("torch.version", stack.torch_version, dict(torch="2.8.0+cpu", torch_npu="2.8.0")),
])
def test_hand_fix_for_a_post_build_carries_the_mirror_of_the_matrix(fid, check, versions):
    m = _shipped()
    r = _row()
    assert r.torch_npu_recommended == "2.7.1.post1" and r.extra_index_urls
    ctx = context(facts(packages=packages(dists(**versions))), m=m, row=r)
    f = expect(judge(check, ctx), fid, "fail")
    argv = next(list(c.argv) for c in f.commands if "torch-npu==2.7.1.post1" in c.argv)
    assert "--extra-index-url" in argv and argv[argv.index("--extra-index-url") + 1] in r.extra_index_urls


def test_a_mirror_only_build_gets_the_mirror_even_without_a_row():
    from doctor.rules.commands import install_specs

    m = _shipped()
    r = _row()
    assert r.extra_index_urls
    ctx = context(facts(python=python(machine="aarch64")), m=m, row=None)
    assert install_specs(ctx, ["torch-npu==2.7.1"])[1] == []  # on PyPI
    assert len(install_specs(ctx, ["torch-npu==2.7.1.post1"])[1]) == 1  # the Ascend mirror, from the matrix


def test_torch_needs_the_cpu_index_only_where_it_is_the_cpu_build():
    from doctor.rules.commands import CPU_INDEX, install_specs

    arm = context(facts(python=python(machine="aarch64")), row=None)
    assert install_specs(arm, ["torch==2.7.1", "torchvision==0.22.1"]) == (["torch==2.7.1", "torchvision==0.22.1"], [])
    x86 = context(facts(python=python(machine="x86_64")), row=None)
    assert install_specs(x86, ["torch==2.7.1"]) == (["torch==2.7.1+cpu"], [CPU_INDEX])


# -- an undocumented CANN/driver pairing -------------------------------------------------------------


def test_driver_not_documented_for_cann_is_a_warning_naming_the_documented_pairing():
    """CANN 8.3.RC2 has no published HDK list; driver 24.1.rc2 with it is unknown, never only
    information and never "too old": a warning that names the nearest documented pairing."""
    m = _shipped()
    ctx = context(facts(driver=driver(version="24.1.rc2")), m=m, row=_row())
    f = expect(judge(cann_rules.cann_driver, ctx), "cann.driver_compat", "warn")
    assert f.expected == "CANN 8.3.RC1 + HDK 25.3.rc1"
    assert "8.3.RC1" in f.title.text("en") and "25.3.rc1" in f.hint.text("en") and "too old" not in f.title.text("en")
