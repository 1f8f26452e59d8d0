"""What the serving process imports against what is installed (env.import_shadow).

The probe (doctor/probes/imports.py) walks the serving process's sys.path, PYTHONPATH first; here
a stack package that loads from anywhere but its installed distribution is a failure: the
metadata every other rule reads then describes code that does not run.
"""
from __future__ import annotations

from typing import Iterable, List, Optional

from doctor.findings import Fixable, FAIL, Finding, cmd
from doctor.i18n import T
from doctor.rules.base import Context, rule

SYS_PATH_DOC = "https://docs.python.org/3/library/sys_path_init.html"
PATH_FINDER_DOC = "https://docs.python.org/3/reference/import.html#the-path-based-finder"


def _without(entries: List[str], entry: Optional[str]) -> List[str]:
    return [e for e in entries if e != entry]


def import_shadow(ctx: Context) -> Iterable[Finding]:
    im = ctx.facts.imports
    if im is None:
        return []
    out: List[Finding] = []
    for loc in im.located:
        if loc.same_as_installed or not loc.found:
            continue
        d = ctx.facts.dist(loc.dist)
        version = d.version if d else "?"
        on_python_path = loc.entry in im.python_path
        source = T("env.import_shadow.from_env") if im.python_path_source == "environment" else im.python_path_source
        commands = []
        if on_python_path:
            rest = _without(im.python_path, loc.entry)
            label = T("env.import_shadow.drop_env", entry=loc.entry) if im.python_path_source == "environment" \
                else T("env.import_shadow.drop_script", entry=loc.entry, source=im.python_path_source)
            commands.append(cmd("export", "PYTHONPATH=" + ":".join(rest), label=label) if rest
                            else cmd("unset", "PYTHONPATH", label=label))
        hint = T("env.import_shadow.hint_pythonpath", entry=loc.entry, source=source) if on_python_path \
            else T("env.import_shadow.hint_sys_path", entry=loc.entry)
        out.append(Finding("env.import_shadow", FAIL,
                           T("env.import_shadow.title", name=loc.name, found=loc.found, dist=loc.dist, version=version,
                             installed=loc.installed),
                           observed=loc.found, expected=loc.installed, hint=hint, fixable=Fixable.MANUAL,
                           evidence=[f"sys.path entry: {loc.entry} ({loc.kind})",
                                     f"PYTHONPATH ({im.python_path_source}): {':'.join(im.python_path) or '(empty)'}"],
                           commands=commands))
    return out


RULES = (
    rule("env.import_shadow", import_shadow, f"{SYS_PATH_DOC}; {PATH_FINDER_DOC}"),
)
