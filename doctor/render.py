"""Output: lines for people, one JSON object for programs.

The text report is written line by line, never as a fixed-width table: a piped report carries no
padding, and nothing is wrapped by the doctor (the terminal wraps prose; a command stays one line
that runs when copied). By default problems are shown in full and passing checks collapse into
one line per run of layers; ``-v`` shows every finding with its evidence.
"""
from __future__ import annotations

import sys
from typing import Dict, List, Optional, Sequence, Tuple

from doctor.record import record

from doctor import __version__
from doctor.findings import FAIL, INFO, OK, SKIP, WARN, Command, Finding, Verdict
from doctor.i18n import join, tr
from doctor.textsafe import clean

SYMBOL = {OK: "✓", INFO: "i", WARN: "!", FAIL: "✗", SKIP: "-"}
STYLE = {OK: "green", INFO: "cyan", WARN: "yellow", FAIL: "bold red", SKIP: "dim"}
JSON_SCHEMA_VERSION = 1
DETAIL, COMMAND = "    ", "      "  # indents under a finding: its details, its commands


def json_text(doc) -> str:
    """Every JSON document the doctor prints: UTF-8 as it is, indented by two."""
    from doctor.textsafe import dumps

    return dumps(doc, indent=2)


def print_json(doc) -> None:
    """``--json``: the one object on stdout."""
    sys.stdout.write(json_text(doc) + "\n")


def check_doc(verdict: Verdict, *, stage: str, target: Dict, timings: Dict[str, float], lang: str) -> Dict:
    """check --json's object."""
    counts = verdict.counts()
    doc = {
        "schema_version": JSON_SCHEMA_VERSION,
        "tool_version": __version__,
        "stage": stage,
        "target": target,
        "summary": {"ok": counts[OK], "info": counts[INFO], "warn": counts[WARN], "fail": counts[FAIL],
                    "skip": counts[SKIP], "root_cause": verdict.root_cause},
        "findings": [f.to_json(lang) for f in verdict.findings],
        "timings_ms": timings,
    }
    return doc


def asks_to_act(f: Finding) -> bool:
    """A finding the default report shows in full: a problem, or a note with something to do
    (``fixable`` other than ``none``)."""
    return f.status in (WARN, FAIL) or (f.status == INFO and f.fixable != "none")


@record
class Lines:
    """A rich console that writes each line as it is: no wrapping, no padding."""

    console: object

    def __call__(self, text: str = "", style: Optional[str] = None) -> None:
        from rich.text import Text as RichText

        # one line: whatever data it holds, its control characters (a line break too) are shown escaped
        self.console.print(RichText(clean(text), style=style or ""), soft_wrap=True)  # type: ignore[attr-defined]

    def parts(self, *parts) -> None:
        """One line from (text, style) pieces."""
        from rich.text import Text as RichText

        line = RichText()
        for text, style in parts:
            line.append(clean(text), style=style or "")
        self.console.print(line, soft_wrap=True)  # type: ignore[attr-defined]


def print_unpadded(console, renderable) -> None:
    """A table as rich lays it out, without the spaces that pad its last column when the output
    is not a terminal (a log or a pipe keeps no trailing blanks)."""
    if console.is_terminal:
        console.print(renderable)
        return
    with console.capture() as captured:
        console.print(renderable)
    console.file.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))


def console_lines(file=None) -> Lines:
    from doctor.terminal import console

    return Lines(console(file=file or sys.stdout, highlight=False, soft_wrap=True))


def print_commands(out: Lines, commands: Sequence[Command], lang: str, indent: str = DETAIL) -> None:
    """Each command on a line of its own, under the label of its group (a label starts a group of
    alternatives; commands without one continue the group above)."""
    for c in commands:
        if c.label is not None:
            out(f"{indent}{c.label.text(lang)}")
        out(f"{indent}  {c.shell()}", "cyan")


def print_finding(out: Lines, f: Finding, lang: str, width: int, verbose: bool) -> None:
    out.parts((SYMBOL[f.status] + " ", STYLE[f.status]), (f.id.ljust(width) + "  ", "dim"), (f.title.text(lang), None))
    if f.root_cause and not verbose:  # shown in full under the verdict
        out(DETAIL + tr("render.root_above", lang), "dim")
        return
    print_remedy(out, f, lang, verbose)


def print_remedy(out: Lines, f: Finding, lang: str, verbose: bool) -> None:
    """What a finding says beyond its title: blocked by, the hint, its commands (and with -v the
    evidence and the source)."""
    details: List[str] = []
    if verbose and f.status in (WARN, FAIL) and f.expected:  # the title says what is needed; -v adds the datum
        details.append(tr("render.expected_is", lang, value=_datum(f.expected, lang)))
    if f.blocked_by:
        details.append(tr("render.blocked", lang, id=f.blocked_by))
    if details:
        out(DETAIL + tr("render.detail_sep", lang).join(details), "dim")
    if f.hint and (verbose or f.status != OK):
        out(f"{DETAIL}→ {f.hint.text(lang)}", "dim" if f.status == INFO else None)
    if f.commands and f.status != OK:
        print_commands(out, f.commands, lang)
    if verbose:
        for e in f.evidence:
            if e:
                out(f"{DETAIL}· {_datum(e, lang)}", "dim")
        if f.source:
            out(f"{DETAIL}· " + tr("render.source_is", lang, source=f.source), "dim")


def _datum(value, lang: str) -> str:
    """observed/expected are English data in JSON; a report shows a Text or a Join in its language."""
    return value.text(lang) if hasattr(value, "text") else str(value)


def display_order(findings: Sequence[Finding]) -> List[Finding]:
    """Within each layer the passing checks first, so that a layer's passing checks join one
    collapsed line and its problems follow it (the layers stay in causal order)."""
    first: Dict[str, int] = {}
    for i, f in enumerate(findings):
        first.setdefault(f.layer, i)
    return sorted(findings, key=lambda f: (first[f.layer], asks_to_act(f)))


def passing_line(run: Sequence[Finding], lang: str) -> str:
    layers: List[str] = []
    for f in run:
        if f.layer not in layers:
            layers.append(f.layer)
    key = "render.passing_one" if len(run) == 1 else "render.passing"
    return f"{SYMBOL[OK]} " + tr(key, lang, layers=join(layers), n=len(run))


def verdict_line(verdict: Verdict, lang: str, exit_code: int, no_ascend: bool = False) -> Tuple[str, str]:
    """(the one line that answers "is it all right?", its style): what is wrong, that all is well,
    or that this is no Ascend host."""
    counts = verdict.counts()
    if no_ascend:
        return f"{SYMBOL[FAIL]} " + tr("render.verdict.no_ascend", lang, code=exit_code), "bold red"
    if counts[FAIL]:
        return f"{SYMBOL[FAIL]} " + tr("render.verdict.fail", lang, fail=counts[FAIL], warn=counts[WARN],
                                       code=exit_code), "bold red"
    if counts[WARN]:
        return f"{SYMBOL[WARN]} " + tr("render.verdict.warn", lang, warn=counts[WARN], code=exit_code), "bold yellow"
    if exit_code == 0:
        return f"{SYMBOL[OK]} " + tr("render.healthy", lang), "bold green"
    return tr("render.verdict.other", lang, code=exit_code), "bold"


def print_verdict(out: Lines, verdict: Verdict, lang: str, exit_code: int, no_ascend: bool = False,
                  verbose: bool = False) -> None:
    """The verdict line, then the root cause in full: what it is and what to run."""
    out(*verdict_line(verdict, lang, exit_code, no_ascend))
    root = next((f for f in verdict.findings if f.root_cause), None)
    if root:
        out.parts((tr("render.root", lang), "bold red"), (f"{root.id} — {root.title.text(lang)}", None))
        if not verbose:
            print_remedy(out, root, lang, verbose)


def print_check(verdict: Verdict, *, stage: str, target_row: Optional[str], timings: Dict[str, float],
                lang: str, verbose: bool, exit_code: int, file=None, header: Optional[str] = None,
                collapse: bool = True, summary: bool = True, no_ascend: bool = False,
                chosen_python: Optional[str] = None) -> None:
    """The report: the header, the verdict line and the root cause with what to run (``summary``),
    then the detail: every problem in full in causal order with runs of passing checks collapsed
    to one line each (``collapse``; ``verbose`` shows everything), the notes left out, the skipped
    checks, and the counts (``summary``). ``no_ascend``: nothing of an Ascend stack was found.
    ``chosen_python``: the interpreter the doctor chose itself (no --python), named in the header."""
    out = console_lines(file)
    target = header or (tr("render.target", lang, row=target_row) if target_row else tr("render.no_target", lang))
    top = tr("render.header", lang, v=__version__, stage=stage, target=target)
    if chosen_python and not no_ascend:
        top = tr("render.header_python", lang, header=top, python=chosen_python)
    out(top, "bold")
    if summary:
        print_verdict(out, verdict, lang, exit_code, no_ascend, verbose)
    full = not collapse or verbose
    shown = [f for f in verdict.findings if f.status != SKIP and (full or asks_to_act(f))]
    width = max((len(f.id) for f in shown), default=0)
    run: List[Finding] = []
    notes: List[Finding] = []
    for f in (verdict.findings if full else display_order(verdict.findings)):
        if f.status == SKIP and not verbose:
            continue  # summarised below: in a build stage they share one reason
        if full or asks_to_act(f):
            if run:
                out(passing_line(run, lang), "green")
                run = []
            print_finding(out, f, lang, width, verbose)
        elif f.status == INFO:
            notes.append(f)  # named on the notes line, not counted as a passing check
        else:
            run.append(f)
    if run:
        out(passing_line(run, lang), "green")
    if notes:
        out(f"{SYMBOL[INFO]} " + tr("render.notes", lang, n=len(notes), ids=join([f.id for f in notes])), "dim")
    skipped = [f for f in verdict.findings if f.status == SKIP]
    if skipped and not verbose:
        reasons = tr("sep.semi", lang).join(sorted({x.title.text(lang) for x in skipped}))
        out(f"{SYMBOL[SKIP]} " + tr("render.skipped", lang, ids=join([x.id for x in skipped]), reasons=reasons), "dim")
    if verbose and timings:
        out(tr("render.timings", lang, timings=", ".join(f"{k}={v:g}" for k, v in timings.items())), "dim")
    if summary:
        out(summary_line(verdict, lang, exit_code), "dim")


def summary_line(verdict: Verdict, lang: str, exit_code: int) -> str:
    return tr("render.summary", lang, code=exit_code, **verdict.counts())


def _plain(cell) -> str:
    return cell.plain if hasattr(cell, "plain") else str(cell)


def wrap_words(words: Sequence[Tuple[str, str]], width: int, indent: str = "    ") -> List[List[Tuple[str, str]]]:
    """Greedy lines of at most ``width`` cells from (word, style) pairs, broken between words only
    (a word longer than the line gets a line of its own, whole); later lines start with ``indent``."""
    from rich.cells import cell_len

    lines: List[List[Tuple[str, str]]] = [[]]
    used, fresh = 0, True
    for word, style in words:
        n = cell_len(word)
        if not fresh and used + 1 + n > width:
            lines.append([(indent, "")] if indent else [])
            used, fresh = cell_len(indent), True
        if not fresh:
            lines[-1].append((" ", ""))
            used += 1
        lines[-1].append((word, style))
        used, fresh = used + n, False
    return lines


def print_fitted_table(console, title: Optional[str], headers: Sequence, rows: Sequence[Sequence], *,
                       boxed: bool = True) -> None:
    """A table that fits the console's width (COLUMNS, or the terminal's) and never splits a
    word (a version, a URL, a path): every column is at least as wide as its longest word, cells
    wrap between words only. When even that does not fit, each row becomes a record
    ("header: value · header: value") wrapped between words at the width, its later lines
    indented. Cells are strings or rich Text (whose style is kept); ``boxed=False`` lays the
    table out without borders, columns two spaces apart."""
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text as RichText

    def longest_word(cells) -> int:
        return max((cell_len(w) for c in cells for w in _plain(c).split()), default=0)

    width = console.width
    mins = [max(longest_word([h]), longest_word([r[i] for r in rows])) for i, h in enumerate(headers)]
    # rich's box: a border and a space each side of a cell; unboxed: one space each side, no edges
    overhead = 3 * len(headers) + 1 if boxed else 2 * (len(headers) - 1)
    needed = sum(mins) + overhead
    if needed > width:
        if title:
            for line in wrap_words([(w, "") for w in title.split()], width):
                console.print(RichText("".join(w for w, _ in line)), soft_wrap=True)
        for r in rows:
            words: List[Tuple[str, str]] = []
            for h, v in zip(headers, r):
                if not _plain(v).strip():
                    continue
                if words:
                    words.append(("·", "dim"))
                style = str(v.style) if isinstance(v, RichText) and v.style else ""
                label = _plain(h).split()
                words.extend((w, "dim") for w in label[:-1])
                words.append(((label[-1] if label else "") + ":", "dim"))
                words.extend((w, style) for w in _plain(v).split())
            for line in wrap_words(words, width):
                text = RichText()
                for w, style in line:
                    text.append(w, style=style)
                console.print(text, soft_wrap=True)
        return
    # the widths, given: each column its longest word, the room left shared by what each lacks
    natural = [max([cell_len(_plain(h))] + [cell_len(_plain(r[i])) for r in rows]) for i, h in enumerate(headers)]
    room = width - needed
    lack = [n - m for n, m in zip(natural, mins)]
    widths = natural if sum(lack) <= room else [m + room * x // max(1, sum(lack)) for m, x in zip(mins, lack)]
    if boxed:
        table = Table(title=title, show_lines=False)
    else:
        table = Table(title=title, show_header=True, header_style="bold", box=None, pad_edge=False, padding=(0, 1))
    for h, col_width in zip(headers, widths):
        table.add_column(h if isinstance(h, RichText) else RichText(_plain(h)), width=col_width, overflow="fold")
    for r in rows:
        table.add_row(*[c if isinstance(c, RichText) else RichText(_plain(c)) for c in r])
    print_unpadded(console, table)


def _chosen(py) -> Optional[str]:
    """``3.11.7 /usr/bin/python3`` (version and path) of an interpreter that ran, else None."""
    if py is None or not py.found or py.source != "interpreter" or not py.executable:
        return None
    return f"{py.version} {py.executable}" if py.version else py.executable


def show_check(result, out, code: int, *, target: Dict, no_ascend: bool, python_chosen: bool = False) -> None:
    """check's report of a CheckResult (doctor/usecases/check.py) for an Output
    (doctor/cli/params.py): one JSON object, or the text (an image's identity first, its detail
    after the verdict). ``python_chosen``: no --python was given and the doctor ran the default
    interpreter, which the header then names."""
    image = result.facts.image
    if out.as_json:
        doc = check_doc(result.verdict, stage=result.ctx.stage, target=target, timings=result.timings, lang=out.lang)
        if image is not None:
            from doctor.render_image import image_json

            doc["image"] = image_json(image, result.image, out.lang)
        print_json(doc)
        return
    if image is not None:
        from doctor.render_image import print_image

        print_image(image, result.image, out.lang, part="identity")
    print_check(result.verdict, stage=result.ctx.stage, target_row=result.ctx.release.key if result.ctx.release else None,
                timings=result.timings, lang=out.lang, verbose=out.verbose, exit_code=code,
                no_ascend=no_ascend, chosen_python=_chosen(result.facts.python) if python_chosen else None)
    if image is not None:  # detail: digest, base, the layer each problem came from
        print_image(image, result.image, out.lang, failing=code != 0, part="detail")
