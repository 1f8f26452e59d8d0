"""Permission denied on the driver's and CANN's files: its own finding, never "not installed".

A user outside HwHiAiUser cannot open /usr/local/Ascend/driver/version.info or search the CANN
directories (the driver installer gives them to that group, docs/sources/ascend-host-formats.md):
the files are there, so "not mounted" or "not installed" would send the user the wrong way.
"""
from __future__ import annotations

import stat as stat_mod
from typing import Iterable, List

from doctor.facts import DeniedPath
from doctor.findings import Fixable, FAIL, Finding, Status, cmd
from doctor.i18n import T
from doctor.rules.base import Context, rule
from doctor.rules.sources import HOST_FORMATS


def group_may_read(d: DeniedPath) -> bool:
    """The owning group may read the refusing path (list and search it, for a directory)."""
    need = (stat_mod.S_IRGRP | stat_mod.S_IXGRP) if d.is_dir else stat_mod.S_IRGRP
    return bool(d.group) and d.mode & need == need


def denied_finding(fid: str, d: DeniedPath, ctx: Context, status: Status = FAIL) -> Finding:
    user = ctx.facts.host.user or str(ctx.facts.host.uid)
    kind = stat_mod.S_IFDIR if d.is_dir else stat_mod.S_IFREG
    observed = f"{d.refused_by} {stat_mod.filemode(kind | d.mode)} {d.owner or d.uid}:{d.group or d.gid}"
    commands: List = []
    if group_may_read(d):
        hint = T("access.denied.hint_group", refused=d.refused_by, group=d.group, user=user)
        commands.append(cmd("sudo", "usermod", "-aG", d.group, user, label=T("access.denied.join", user=user, group=d.group)))
    else:
        hint = T("access.denied.hint_root", refused=d.refused_by)
    title = T("access.denied", user=user, path=d.path) if d.refused_by == d.path \
        else T("access.denied.above", user=user, path=d.path, refused=d.refused_by)
    return Finding(fid, status, title,
                   observed=observed, expected=f"readable by {user}", hint=hint, fixable=Fixable.MANUAL,
                   evidence=[d.path], commands=commands)


def driver_permission(ctx: Context) -> Iterable[Finding]:
    d = ctx.facts.driver
    if ctx.build or d is None or d.denied is None:
        return []
    return [denied_finding("driver.permission", d.denied, ctx)]


def cann_permission(ctx: Context) -> Iterable[Finding]:
    c = ctx.facts.cann
    if c is None or c.denied is None:
        return []
    return [denied_finding("cann.permission", c.denied, ctx)]


RULES = (
    rule("driver.permission", driver_permission, f"{HOST_FORMATS}#permissions"),
    rule("cann.permission", cann_permission, f"{HOST_FORMATS}#permissions"),
)
