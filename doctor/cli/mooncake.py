"""``ascend-doctor mooncake build``: rebuild Mooncake with -DUSE_ASCEND_DIRECT=ON.

``fix`` plans call exactly ``python -m doctor mooncake build --tag v<version> --python <target>``:
keep those options stable.
"""
from __future__ import annotations

import os
import re
import shutil
from typing import Any

import typer

from doctor.cli import params as p
from doctor.cli.options import takes
from doctor.cli.params import Opt
from doctor.errors import UsageError
from doctor.render import print_json
from doctor.i18n import T, tr

mooncake_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Mooncake on Ascend: build it from source with the Ascend direct transport.",
)

EXIT_FAILED = 3


BUILD = (
    Opt("tag", ("--tag",), "str", None, "Mooncake tag to build, e.g. v0.3.9 (cloned from GitHub unless --source)."),
    Opt("source", ("--source",), "str", None, "A local Mooncake checkout or mirror instead of GitHub."),
    p.PYTHON,
    Opt("with_system_deps", ("--with-system-deps",), "flag", False,
        "Also run dependencies.sh -y (apt packages, yalantinglibs; needs root)."),
    Opt("jobs", ("--jobs", "-j"), "int", 0, "Parallel compile jobs (default: all cores)."),
    Opt("prefix", ("--prefix",), "str", "/usr/local", "CMAKE_INSTALL_PREFIX for the native libraries and mooncake_master."),
    Opt("cmake_arg", ("--cmake-arg",), "list", [], "Extra CMake argument (repeatable), e.g. -DUSE_ETCD=ON."),
    Opt("log", ("--log",), "str", None, "Log file (default: ~/.cache/ascend-doctor/mooncake-build-<time>.log)."),
    Opt("keep_build", ("--keep-build",), "flag", False, "Keep the temporary build directory."),
    Opt("stage_into", ("--stage-into",), "str", None,
        "Only build, and install into this staging directory (fix --apply puts the tree in place through its transaction).",
        hidden=True),
    p.JSON, p.LANG,
)


@mooncake_app.command("build")
@takes(*BUILD)
def build_command(**params: Any) -> None:
    """Clone, configure with -DUSE_ASCEND_DIRECT=ON, build, install, verify; roll back on failure."""
    from doctor.shell.mooncake.build import BuildOptions, run_build
    from doctor.probes.python_env import target_python
    from doctor.shell.host.root import Host

    out = p.output(params)
    language, as_json = out.lang, out.as_json
    tag, source, python, jobs, prefix, stage_into = (params[k] for k in ("tag", "source", "python", "jobs", "prefix",
                                                                         "stage_into"))
    if not tag and not source:
        raise UsageError(T("mooncake_build.error.need_tag_or_source"))
    if tag is not None:
        if not re.match(r"^v?\d+\.\d+[\w.\-]*$", tag):
            raise UsageError(T("mooncake_build.error.bad_tag", tag=repr(tag)))
        tag = tag if tag.startswith("v") else "v" + tag
    if source is not None and not os.path.isdir(source):
        raise UsageError(T("option.error.not_dir", option="--source", path=source))
    if jobs < 0:
        raise UsageError(T("option.error.must_be_positive", option="--jobs"))
    target = target_python(Host(), python).executable or "python3"  # the interpreter check judges here
    resolved = target if os.sep in target else shutil.which(target)
    if not resolved or not os.path.exists(resolved):
        raise UsageError(T("mooncake_build.error.no_interpreter", python=target))
    from doctor.usecases.check import validate_python

    validate_python(resolved, dict(os.environ))
    opts = BuildOptions(tag=tag, source=os.path.abspath(source) if source else None, python=os.path.abspath(resolved),
                        with_system_deps=params["with_system_deps"], jobs=jobs, prefix=os.path.abspath(prefix),
                        cmake_args=list(params["cmake_arg"]), log=params["log"], keep_build=params["keep_build"],
                        stage_into=os.path.abspath(stage_into) if stage_into else None)
    signatures = _signatures()
    if as_json:
        result = run_build(opts, signatures=signatures)
        print_json(result.to_json())
    else:
        from doctor import terminal
        from doctor.cli.mooncake_render import PlainReporter, RichReporter

        console = terminal.console(stderr=True, highlight=False)
        reporter: PlainReporter | RichReporter = RichReporter(console) if console.is_terminal else PlainReporter(console)
        try:
            result = run_build(opts, reporter=reporter, signatures=signatures)
        finally:
            reporter.close()
        _print(result, language)
    raise typer.Exit(0 if result.ok else EXIT_FAILED)


def _signatures():
    try:
        from doctor.matrix import load_matrix

        return load_matrix().signatures
    except Exception:  # a broken shipped matrix must not stop a build; local signatures remain
        return []


def _print(result, lang: str) -> None:
    from rich.text import Text

    from doctor import terminal

    plain = terminal.console(highlight=False, soft_wrap=True)  # never wrapped by us: a command in a line stays whole

    class _Out:  # build output and known-error texts are data: never read as markup
        def print(self, what, markup: bool = False) -> None:
            plain.print(what, markup=False)

    out = _Out()
    if result.ok:
        tag = result.tag or tr("mooncake_build.local_source", lang)
        out.print(Text(tr("mooncake_build.built", lang, tag=tag), style="bold green"))
        out.print("  " + tr("mooncake_build.package", lang, package=result.verify.get('package', '?')), markup=False)
        out.print("  " + tr("mooncake_build.transport", lang, transport=result.transport), markup=False)
        if result.replaced:
            out.print("  " + tr("mooncake_build.replaced", lang, count=len(result.replaced)))
    else:
        err = result.message.text(lang) if result.message is not None else (result.error or "?")
        out.print(Text(tr("mooncake_build.failed", lang, stage=result.stage, error=err), style="bold red"))
        if result.restored:
            out.print("  " + tr("mooncake_build.restored", lang))
        for k in result.known:
            out.print(Text("  " + tr("mooncake_build.known", lang, id=k.id, line=k.line, text=k.text.strip()[:200]),
                           style="yellow"))
            cause, fix = (k.cause_zh or k.cause, k.fix_zh or k.fix) if lang == "zh" else (k.cause, k.fix)
            out.print("    " + tr("mooncake_build.known_cause", lang, cause=cause), markup=False)
            out.print("    " + tr("mooncake_build.known_fix", lang, fix=fix), markup=False)
        if result.tail:
            out.print("  " + tr("mooncake_build.log_tail", lang))
            for line in result.tail[-20:]:
                out.print(Text("    " + line, style="dim"))
    for m in ([] if result.ok else result.manual):
        out.print("  " + tr("mooncake_build.manual_step", lang, step=m.text.text(lang)))
        if m.command:  # a command is a line of its own, never inside the words
            out.print("      " + m.command)
    for n in result.notes:
        out.print("  " + tr("mooncake_build.note", lang, note=n.text.text(lang)))
        if n.command:
            out.print("      " + n.command)
    out.print("  " + tr("mooncake_build.log", lang, log=result.log))
