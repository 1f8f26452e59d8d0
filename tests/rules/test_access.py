"""doctor/rules/access.py: files this user may not read are permission findings (the group to
join, or root), never a missing mount."""


from doctor.facts import DeniedPath
from doctor.rules import access, cann as cann_rules, hardware as hw

from .build import (absent, cann, context, driver, expect, facts, firmware, host, judge)


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
