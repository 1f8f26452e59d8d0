"""The ``guard`` command (docs/guard.md): ``ascend-doctor guard [--run] -- pip install ...``."""
from __future__ import annotations

import os
import shlex
import sys
from typing import Any, List, Optional

import typer

from doctor.cli import params as p
from doctor.cli.options import takes
from doctor.cli.params import Opt

CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": True}


GUARD = (p.ROOT, p.PYTHON,
         Opt("requirement", ("-r", "--requirement"), "list", [],
             "Judge installing this requirements file (pip reads it: -r, -c, markers, index options, hashes)."),
         Opt("run", ("--run",), "flag", False, "Run the command when it breaks nothing (without --run: only judge)."),
         p.STAGE, p.JSON.but(help="Print the judgement as JSON on stdout."), p.LANG, p.MATRIX,
         Opt("timeout", ("--timeout",), "seconds", 600.0, "Seconds pip may take to resolve (and, with --run, to install)."))


@takes(*GUARD)
def guard_command(ctx: typer.Context, **params: Any) -> None:
    """Judge a pip command before it runs: what it would install, replace and break (exit 3), and what to run instead."""
    from doctor.errors import UsageError
    from doctor.i18n import T, tr
    from doctor.usecases.guard import EXIT_BREAKS, run_command, run_guard

    out = p.output(params)
    language, as_json, run, timeout = out.lang, out.as_json, params["run"], params["timeout"]
    if timeout <= 0:
        raise UsageError(T("option.error.must_be_positive", option="--timeout"))
    argv = list(ctx.args)
    if not argv and not params["requirement"]:
        from doctor.program import DOCTOR, spelled_text

        raise UsageError(T("guard.error.no_command", doctor=spelled_text(DOCTOR)))
    opts = p.check_options({k: params[k] for k in ("root", "python", "stage", "matrix")})
    env = dict(os.environ)
    from doctor.cli.fix import _busy

    with _busy(tr("plan.resolving", language, installer="pip"), language, enabled=not as_json) as busy:
        result = guard_run = run_guard(argv, opts, env, requirement_files=list(params["requirement"]), timeout=timeout,
                                       progress=busy.update)
    j = result.judgement
    code = j.exit_code
    if as_json:
        doc = j.to_json(language)
    else:
        print_judgement(j, language, result.facts.python.executable if result.facts.python else None)
    if run and j.command.sub in ("install", "uninstall", "other") and code != EXIT_BREAKS:
        from doctor import terminal

        echo = (lambda s: terminal.say(s, sys.stderr)) if as_json else terminal.say
        if not as_json:
            _line(tr("guard.running", language, command=shlex.join(j.command.argv)))
        rc = run_command(guard_run, env, timeout, echo)
        code = rc if rc else code
        if as_json:
            doc["ran"] = {"exit_code": rc}
    elif not as_json:
        if code == EXIT_BREAKS:
            _line(tr("guard.refused", language) if run else tr("guard.not_run", language))
        elif j.command.sub == "install" and not run:
            _line(tr("guard.not_run", language))
    if as_json:
        from doctor.render import print_json

        print_json(doc)
    raise typer.Exit(code)


def _line(text: str) -> None:
    from doctor import terminal

    terminal.say(text)  # names, versions and pip's messages are data


def print_judgement(j, lang: str, python: Optional[str] = None) -> None:
    """The verdict first (safe, warns, breaks), then what to run instead, then the detail: what
    would be replaced and violated, what check would report, and what pip would install."""
    from doctor.findings import cmd
    from doctor.i18n import tr
    from doctor.textsafe import clean
    from doctor.usecases.guard import EXIT_BREAKS, EXIT_SAFE

    _line(tr("guard.header", lang, command=clean(shlex.join(j.command.argv))))
    if j.note is not None:
        _line(j.note.text(lang))
        return
    key = {EXIT_SAFE: "guard.safe", EXIT_BREAKS: "guard.breaks"}.get(j.exit_code, "guard.warns")
    mark = {EXIT_SAFE: "✓", EXIT_BREAKS: "✗"}.get(j.exit_code, "!")
    _line(f"{mark} " + tr(key, lang) + tr("guard.exit", lang, code=j.exit_code))
    if j.failure is not None:
        _line(tr("guard.not_resolved", lang, kind=j.failure.kind))
        for x in j.failure.message.splitlines():
            _line(f"  {clean(x)}")
        for h in j.failure.hosts:
            _line("  " + tr("guard.host_failed", lang, host=h.host, how=h.how))
    if j.exit_code != EXIT_SAFE and j.failure is None:
        if j.instead is not None:
            _line(tr("guard.instead", lang) + " " + j.instead.label.text(lang))
            _line("  " + j.instead.shell())
        elif j.exit_code == EXIT_BREAKS:
            _line(tr("guard.no_instead", lang))
            _line("  " + cmd("ascend-doctor", "fix", *(("--python", python) if python else ())).shell())
        for w in j.instead_why:
            _line(f"  {w.text(lang)}")
    replaced = [c for c in j.changes if c.before is not None]
    if replaced:
        _line(tr("guard.replaced", lang))
        for c in replaced:
            _line(clean(f"  {c.name}: {c.before} -> {c.after or '-'}"))
    if j.violated:
        _line(tr("guard.violated", lang))
        for v in j.violated:
            _line(f"  {clean(v)}")
    if j.broken:
        _line(tr("guard.findings", lang))
        for f in j.broken:
            _line(clean(f"  [{f.status}] {f.id}: {f.title.text(lang)}"))
    if j.resolved:
        _line(tr("guard.would_install", lang, n=len(j.resolved)) + " "
              + ", ".join(clean(f"{r.name} {r.version}") for r in j.resolved))


def requirements_failure(failure):
    """The finding of ``check --requirements`` when pip cannot resolve the files: its title says
    pip's first line (the report shows titles, not the observed datum)."""
    from doctor.findings import FAIL, Finding
    from doctor.i18n import T

    lines = [x.strip() for x in failure.message.splitlines() if x.strip()]
    first = lines[0][:300] if lines else None
    title = T("guard.requirements_not_resolved", kind=failure.kind, why=first) if first else \
        T("guard.not_resolved", kind=failure.kind)
    return Finding("env.requirements", FAIL, title, observed=first, evidence=lines[1:20])


def check_requirements(opts, files: List[str], as_json: bool, lang: str, verbose: bool, fail_on: str) -> None:
    """``check --requirements FILE``: the check of the environment as it would be after pip
    installed the files (resolved by pip in report mode; nothing is installed)."""
    import time

    from doctor.i18n import tr
    from doctor.usecases.guard import run_guard

    started = time.perf_counter()
    run = run_guard([], opts, dict(os.environ), requirement_files=files, requirement_option="--requirements")
    j = run.judgement
    verdict = j.after if j.after is not None else run.before
    if j.failure is not None:
        verdict.findings.insert(0, requirements_failure(j.failure))
    code = verdict.exit_code(fail_on)
    timings = {"total": round((time.perf_counter() - started) * 1000, 2)}
    target = {"vllm_ascend": run.facts.version_of("vllm-ascend"), "matrix_row": None}
    if as_json:
        from doctor.render import check_doc

        doc = check_doc(verdict, stage=opts.stage, target=target, timings=timings, lang=lang)
        doc["requirements"] = {"files": list(files), "would_install": [{"name": r.name, "version": r.version}
                                                                        for r in j.resolved],
                               "changes": [{"name": c.name, "before": c.before, "after": c.after} for c in j.changes]}
        if j.failure is not None:
            doc["requirements"]["failure"] = j.failure.to_json()
        from doctor.render import print_json

        print_json(doc)
    else:
        from doctor.render import print_check

        _line(tr("guard.requirements_header", lang, files=", ".join(files)))
        print_check(verdict, stage=opts.stage, target_row=None, timings=timings, lang=lang, verbose=verbose, exit_code=code)
        if j.resolved:  # detail, after the verdict
            _line(tr("guard.would_install", lang, n=len(j.resolved)) + " "
                  + ", ".join(f"{r.name} {r.version}" for r in j.resolved))
    raise typer.Exit(code)
