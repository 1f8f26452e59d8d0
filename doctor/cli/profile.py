"""The `profile` command (docs/profile.md): read a serving profile, verdict first."""
from __future__ import annotations

import sys
from typing import Any, Optional, Tuple

import typer

from doctor import textsafe
from doctor.cli import params as p
from doctor.cli.options import takes
from doctor.cli.params import Opt
from doctor.errors import UsageError
from doctor.i18n import T
from doctor.render import print_json



PROFILE = (
    Opt("report", ("--report",), "str", None, "Also write a self-contained HTML page (timeline, step breakdown)."),
    Opt("release", ("--release",), "str", None,
        "The vllm-ascend release the profile was taken on (default: from the profile's torch_npu version)."),
    Opt("collect", ("--collect",), "flag", False, "Capture a profile from a running vllm server first (--endpoint)."),
    Opt("endpoint", ("--endpoint",), "str", None, "--collect: the server, http://host:port."),
    Opt("profile_dir", ("--profile-dir",), "str", None,
        "--collect: the directory the server writes its profiles to (its torch_profiler_dir)."),
    Opt("requests", ("--requests",), "int", 8, "--collect: requests sent while profiling (bounded capture)."),
    Opt("concurrency", ("--concurrency",), "int", 4, "--collect: requests in flight."),
    Opt("output_len", ("--output-len",), "int", 32, "--collect: tokens per request."),
    Opt("stop_timeout", ("--stop-timeout",), "seconds", 900.0,
        "--collect: seconds /stop_profile may take (the server parses the capture then)."),
    p.JSON, p.LANG,
)


@takes(*PROFILE)
def profile_command(
    path: Optional[str] = typer.Argument(None, help="A *_ascend_pt directory, a parent of several (one per rank), "
                                                    "an msprof PROF_* output, or a trace_view.json / kernel_details.csv."),
    compare: Optional[Tuple[str, str]] = typer.Option(None, "--compare",
                                                      help="BEFORE AFTER: what changed between two profiles."),
    **params: Any,
) -> None:
    """Read a serving profile: host-, device- or communication-bound, why, and what to change."""
    out = p.output(params)
    language, as_json, report, release, collect = out.lang, out.as_json, params["report"], params["release"], params["collect"]
    if compare and (path or collect):
        raise UsageError(T("profile.error.compare_alone"))
    only: Tuple[str, ...] = ()
    if collect:
        path, only = _collect(params["endpoint"], params["profile_dir"], path, params["requests"], params["concurrency"],
                              params["output_len"], params["stop_timeout"], language)
    if compare:
        _compare(compare, release, as_json, language, report)
        return
    if not path:
        raise UsageError(T("profile.error.no_path"))
    from doctor.usecases.profile import ProfileOptions, RawProfile, run

    with _progress() as progress:
        try:
            rep = run(ProfileOptions(path, release, only), progress)
        except RawProfile as e:
            _raw(e, as_json)
    if report:
        _write_report(report, rep, language)
    if as_json:
        from doctor.profile.report import to_json

        doc = to_json(rep, language)
        if report:
            doc["report"] = report
        print_json(doc)
        return
    from doctor.profile.text import lines
    from doctor.render import console_lines

    say = console_lines()
    for text, style in lines(rep, language):
        say(text, style)
    if report:
        from doctor.i18n import tr
        from doctor.profile.text import shown

        say(tr("profile.report_written", language, path=shown(report, 300)), "dim")


def _raw(e, as_json: bool) -> None:
    """Not analysed yet: the one-line reason, then the command that analyses it, on a line of its own."""
    if as_json:
        print_json({"schema_version": 1, "kind": "profile", "error": e.message, "commands": [e.command.to_json()]})
    _say(f"ascend-doctor: error: {e.message}")
    _say(e.command.shell())
    raise typer.Exit(2)


def _collect(endpoint: Optional[str], profile_dir: Optional[str], path: Optional[str], requests: int, concurrency: int,
             output_len: int, stop_timeout: float, lang: str) -> Tuple[str, Tuple[str, ...]]:
    """Capture from the server; (the directory to read, the rank directories of this capture)."""
    if not endpoint:
        raise UsageError(T("profile.error.collect_endpoint"))
    directory = profile_dir or path
    if not directory:
        raise UsageError(T("profile.error.collect_dir"))
    if not 1 <= requests <= 1000 or not 1 <= concurrency <= 256 or not 1 <= output_len <= 4096:
        raise UsageError(T("profile.error.collect_bounds"))
    from doctor.shell.profile.collect import CollectError, CollectOptions, collect

    try:
        new = collect(CollectOptions(endpoint, directory, requests, concurrency, output_len, stop_timeout), lang,
                      say=_say if sys.stderr.isatty() else None)
    except CollectError as e:
        _say(f"ascend-doctor: error: {e.text(lang)}")
        for line in e.settings:
            _say("  " + line)
        raise typer.Exit(2)
    if len(new) == 1:
        return new[0], ()
    import os

    return os.path.dirname(new[0]), tuple(os.path.basename(n) for n in new)


def _say(line: str) -> None:
    try:
        print(textsafe.clean_block(line), file=sys.stderr)  # a server's answer or a file name: data
    except OSError:
        pass


def _compare(pair: Tuple[str, str], release: Optional[str], as_json: bool, lang: str, report: Optional[str]) -> None:
    from doctor.profile.compare import compare, to_json
    from doctor.usecases.profile import compare_pair

    with _progress() as progress:
        before, after = compare_pair(pair[0], pair[1], release, progress)
    c = compare(before, after)
    if report:
        _write_report(report, after, lang, before=before)
    if as_json:
        from doctor.profile.report import to_json as report_json

        doc = {"schema_version": 1, "kind": "profile_compare", "before": report_json(before, lang)["summary"],
               "after": report_json(after, lang)["summary"], "comparison": to_json(c)}
        print_json(doc)
        return
    from doctor.profile.compare_text import lines
    from doctor.render import console_lines

    out = console_lines()
    for text, style in lines(c, pair, lang):
        out(text, style)


def _write_report(target: str, rep, lang: str, before=None) -> None:
    from doctor.profile.html import render
    from doctor.shell.host.files import write_atomic

    try:
        write_atomic(target, render(rep, lang, before=before))
    except OSError as e:
        raise UsageError(T("option.error.detail", option="--report", value=target, error=e.strerror or str(e))) from None


class _progress:
    """A byte bar on stderr while the files are read (terminal only, from 4 MB of input)."""

    def __enter__(self):
        self.bar = None
        if not sys.stderr.isatty():
            return None
        return self.update

    def update(self, name: str, done: int, total: int) -> None:
        if self.bar is None:
            if total < (4 << 20):
                return
            from doctor.shell.host.progress import rich_bar

            self.bar = rich_bar(("text", "bar", "bytes", "speed"), width=30, highlight=False)
            self.task = self.bar.add_task(textsafe.markup(name), total=total)
        # a file name is data: shown as written (doctor/textsafe.py)
        self.bar.update(self.task, description=textsafe.markup(f"reading {name}"), completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
