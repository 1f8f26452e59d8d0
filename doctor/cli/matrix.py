"""``ascend-doctor matrix``: show, explain, verify and sync the compatibility matrix."""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

import typer

from doctor.cli.options import takes
from doctor.cli.params import JSON, LANG, MATRIX, Opt, output
from doctor.errors import UsageError
from doctor.i18n import T, tr

if TYPE_CHECKING:  # rich is imported lazily at run time
    from rich.progress import Progress, TaskID

# one total budget for everything `matrix verify` / `matrix sync` read from the index
INDEX_TIMEOUT = Opt("timeout", ("--timeout",), "seconds", 300.0, "Give up on the package index after this many seconds in total.",
                    metavar="SECONDS", min=1.0)

matrix_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="The compatibility matrix: show rows, explain a release or finding, verify it against "
         "package-index metadata, sync newer releases into a user overlay.",
)


# Fields shown per release, in this order (see doctor/matrix/model.py for their meaning).
FIELDS = (
    "vllm", "vllm_alternatives", "python", "requires_python", "cann", "cann_by_hardware", "torch",
    "torch_npu", "torch_npu_recommended", "torchvision", "torchaudio", "triton_ascend",
    "triton_ascend_alternatives", "transformers", "numpy", "extra_requirements", "glibc_min",
    "glibc_by_arch", "hardware", "mooncake", "mooncake_install", "images", "vllm_by_image", "extra_index_urls",
    "distribution", "official_row", "curated", "released",
)


def _load(extra: List[str]):
    """The matrix with the user's overlays and ``--matrix`` files; bad input is a UsageError."""
    from doctor.matrix import MatrixError, load_matrix

    for p in extra:
        if not Path(p).is_file():
            raise UsageError(T("option.error.no_file", option="--matrix", path=p))
    try:
        return load_matrix([Path(p) for p in extra],
                           warn=lambda m: print(f"ascend-doctor: warning: {m}", file=sys.stderr))
    except MatrixError as e:
        raise UsageError(str(e))


def _find(matrix, release: str):
    from doctor.matrix.query import release_row

    row = release_row(matrix, release)
    if row is None:
        raise UsageError(T("matrix.error.no_row", release=repr(release), first=matrix.releases[0].vllm_ascend,
                           last=matrix.releases[-1].vllm_ascend))
    return row


def release_dict(row) -> Dict[str, object]:
    """A release row as JSON-ready data: schema fields only, empty values left out."""
    d = dataclasses.asdict(row)
    out: Dict[str, object] = {"vllm_ascend": row.vllm_ascend}
    for key in FIELDS + ("known_problems", "deviations", "notes", "source", "sources"):
        value = d.get(key)
        if value in (None, (), [], {}) and key not in ("official_row", "curated"):
            continue
        out[key] = list(value) if isinstance(value, tuple) else value
    return out


def _fmt(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items())
    return str(value)


def _console():
    from doctor import terminal

    import os

    console = terminal.console(highlight=False, soft_wrap=True)
    if not console.is_terminal and not os.environ.get("COLUMNS"):  # piped, no width asked for: do not squeeze
        console.width = max(console.width, 180)
    return console


# ---------------------------------------------------------------------------------------------
# show


@matrix_app.command()
@takes(Opt("release", ("--release",), "str", None, "One release, with the source of every fact."), JSON, MATRIX, LANG)
def show(**params: Any) -> None:
    """The matrix as a table, or one release with its sources."""
    out = output(params)
    language, as_json, release = out.lang, out.as_json, params["release"]
    m = _load(params["matrix"])
    rows = [_find(m, release)] if release else m.releases
    if as_json:
        from doctor.textsafe import dumps

        sys.stdout.write(dumps({"releases": [release_dict(r) for r in rows]}) + "\n")
        return
    if release:
        _print_release(rows[0], language)
        return
    from doctor.render import print_fitted_table

    headers = ("vllm-ascend", "vLLM", "Python", "CANN", "torch / torch-npu", "triton-ascend",
               "Mooncake", "glibc", tr("matrix.col.hardware", language), tr("matrix.col.notes", language))
    rows = []
    for r in m.releases:
        npu = r.torch_npu + (f" ({r.torch_npu_recommended})" if r.torch_npu_recommended else "")
        cann = ", ".join(r.cann) + "".join(f"; {k}: {v}" for k, v in r.cann_by_hardware.items())
        flags = []
        if not r.curated:
            flags.append(tr("matrix.flag.not_curated", language))
        if not r.official_row:
            flags.append(tr("matrix.flag.no_official_row", language))
        if r.distribution == "sdist":
            flags.append("sdist")
        if r.known_problems:
            flags.append(tr("matrix.flag.known_problems", language, count=len(r.known_problems)))
        rows.append((r.vllm_ascend, " / ".join(r.vllm_accepted), r.python, cann, f"{r.torch} / {npu}",
                     r.triton_ascend or "", r.mooncake or "", r.glibc_min, ", ".join(r.hardware), "; ".join(flags)))
    print_fitted_table(_console(), tr("matrix.title", language), headers, rows)


def _print_release(row, lang: str) -> None:
    from doctor.render import print_fitted_table

    d = release_dict(row)
    rows = [(key, _fmt(d[key]), row.source_of(key)) for key in FIELDS if key in d]
    console = _console()
    print_fitted_table(console, f"vllm-ascend {row.vllm_ascend}  ({row.origin})",
                       (tr("matrix.col.fact", lang), tr("matrix.col.value", lang), tr("matrix.col.source", lang)), rows)
    _print_problems(console, row, lang)


def _print_problems(console, row, lang: str) -> None:
    if row.notes:
        console.print(tr("matrix.notes", lang, notes=row.notes), markup=False)
    for kp in row.known_problems:
        console.print(tr("matrix.known_problem", lang, summary=kp.summary_words), markup=False)
        if kp.workaround_words:
            console.print("  " + tr("matrix.workaround", lang, workaround=kp.workaround_words), markup=False)
        console.print("  " + tr("matrix.source", lang, source=kp.source), markup=False)
    for fld, why in row.deviations.items():
        console.print(tr("matrix.deviation", lang, field=fld, why=why), markup=False)


# ---------------------------------------------------------------------------------------------
# explain


def _catalog_entry(finding_id: str):
    """(entry or None, whether a catalog exists). The catalog of the check rules is optional."""
    try:
        from doctor.rules import catalog
    except ImportError:
        return None, False
    describe = getattr(catalog, "describe", None)  # resolves generic ids such as cann.probe_error
    if callable(describe):
        try:
            return describe(finding_id), True
        except KeyError:
            return None, True
    table = getattr(catalog, "CATALOG", None)
    if not isinstance(table, dict):
        return None, False
    return table.get(finding_id), True


def _looks_like_release(text: str) -> bool:
    from doctor.versions import pep440

    return pep440(text.lstrip("vV")) is not None and text[:1].lower() in "v0123456789"


@matrix_app.command()
@takes(MATRIX, LANG)
def explain(
    what: str = typer.Argument(..., help="A vllm-ascend release (0.11.0rc3) or a finding id (vllm.version)."),
    **params: Any,
) -> None:
    """Why a rule exists and where it comes from, or every fact of a release with its source."""
    language = output(params).lang
    if _looks_like_release(what):
        m = _load(params["matrix"])
        row = _find(m, what.lstrip("vV"))
        console = _console()
        console.print(f"vllm-ascend {row.vllm_ascend}", markup=False)
        console.print(tr("matrix.default_source", language, source=row.source), markup=False)
        d = release_dict(row)
        for key in FIELDS:
            if key in d:
                console.print(f"  {key} = {_fmt(d[key])}", markup=False)
                console.print("      " + tr("matrix.source", language, source=row.source_of(key)), markup=False)
        _print_problems(console, row, language)
        return
    entry, have_catalog = _catalog_entry(what)
    if entry is None:
        raise UsageError(T("matrix.error.unknown_finding" if have_catalog else "matrix.error.unknown_finding_no_catalog",
                           id=repr(what)))
    console = _console()
    console.print(f"{what}  [{entry.get('layer', '?')}]", markup=False)
    why = entry.get("why_zh" if language == "zh" else "why_en") or entry.get("why_en") or ""
    console.print(why, markup=False)
    if entry.get("source"):
        console.print(tr("matrix.source", language, source=entry["source"]), markup=False)


# ---------------------------------------------------------------------------------------------
# verify


def _read_versions(path: str) -> List[str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise UsageError(T("matrix.error.cannot_read", path=path, error=e.strerror or str(e)))
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


VERIFY = (
    Opt("metadata", ("--metadata",), "list", [],
        "Offline: index metadata JSON (the shape of tests/data/index-metadata.json); repeatable."),
    Opt("versions", ("--versions",), "str", None, "Offline: a file listing the index's versions, one per line."),
    Opt("torch_npu_files", ("--torch-npu-files",), "str", None,
        "Offline: a file listing the index's torch-npu wheel file names, one per line (checks the torch-npu table for "
        "every Python it covers)."),
    INDEX_TIMEOUT, JSON, MATRIX, LANG,
)


@matrix_app.command()
@takes(*VERIFY)
def verify(**params: Any) -> None:
    """Check the matrix against package-index metadata: exit 0 when all agree, 3 otherwise."""
    from doctor.matrix.verify import (fetch_index_metadata, load_metadata_file, torch_npu_files as index_torch_npu_files,
                                      verify as run_verify, verify_torch_npu)

    out = output(params)
    language, as_json, timeout, metadata = out.lang, out.as_json, params["timeout"], params["metadata"]
    versions, torch_npu_files = params["versions"], params["torch_npu_files"]
    m = _load(params["matrix"])
    listed: Optional[List[str]] = _read_versions(versions) if versions else None
    npu_files: Optional[List[str]] = _read_versions(torch_npu_files) if torch_npu_files else None
    if metadata:
        packages = []
        for path in metadata:
            packages.extend(load_metadata_file(Path(path)))
        where = ", ".join(metadata)
    else:
        from doctor.shell.install.index import client_from_pip

        client, cfg = client_from_pip(deadline=timeout)
        if not as_json:
            print(tr("matrix.verify.reading", language, urls=", ".join(cfg.urls)), file=sys.stderr)
        with _progress(language) as step:
            packages, index_listed = fetch_index_metadata(client, progress=step)
            if npu_files is None:
                npu_files = index_torch_npu_files(client)
        listed = (listed or []) + index_listed
        where = ", ".join(cfg.urls)
    found = run_verify(m, packages, index_versions=listed, include_explained=True)
    if npu_files is not None:
        found += verify_torch_npu(m, npu_files)
    unexplained = [d for d in found if not d.explained]
    checked = len({p.get("version") for p in packages if p.get("name", "").replace("_", "-").lower() == "vllm-ascend"})
    if as_json:
        from doctor.textsafe import dumps

        sys.stdout.write(dumps({"checked": checked, "source": where,
                                "disagreements": [d.as_dict() for d in unexplained],
                                "explained": [d.as_dict() for d in found if d.explained]}) + "\n")
    else:
        for d in found:
            print(d.line())
        print(tr("matrix.verify.summary", language, checked=checked, where=where, unexplained=len(unexplained),
                 documented=len(found) - len(unexplained)))
    raise typer.Exit(3 if unexplained else 0)


class _progress:
    """A progress bar on stderr while metadata is read, only when stderr is a terminal."""

    def __init__(self, lang: str):
        self.lang = lang
        self.bar: Optional[Progress] = None  # doctor.shell.host.progress.rich_bar's
        self.task: Optional[TaskID] = None

    def __enter__(self) -> Callable[[int, int, str], None]:
        if sys.stderr.isatty():
            from doctor.shell.host.progress import rich_bar

            self.bar = rich_bar(("text", "bar", "of"))
        return self.step

    def step(self, done: int, total: int, version: str) -> None:
        if self.bar is None:
            return
        if self.task is None:
            self.task = self.bar.add_task(tr("matrix.reading_metadata", self.lang), total=total)
        self.bar.update(self.task, completed=done, description=tr("matrix.read_release", self.lang, version=version))

    def __exit__(self, *exc: Any) -> None:  # never swallows the exception
        if self.bar is not None:
            self.bar.stop()


# ---------------------------------------------------------------------------------------------
# sync


@matrix_app.command()
@takes(Opt("dry_run", ("--dry-run",), "flag", False, "Print the overlay instead of writing it."), INDEX_TIMEOUT, MATRIX, LANG)
def sync(**params: Any) -> None:
    """Add rows for vllm-ascend releases newer than the matrix, from the index pip is configured for."""
    from doctor.shell.install.index import client_from_pip
    from doctor.matrix.sync import sync as run_sync
    from doctor.shell.host.matrix_overlay import write_validated

    language, dry_run = output(params).lang, params["dry_run"]
    m = _load(params["matrix"])
    client, cfg = client_from_pip(deadline=params["timeout"])
    result = run_sync(m, client, dry_run=dry_run, write=write_validated)
    if dry_run:
        sys.stdout.write(result.text)
        print(tr("matrix.sync.dry_run", language, count=len(result.added), newest=result.newest_curated, path=result.path),
              file=sys.stderr)
        _print_unchecked(result, language, file=sys.stderr)
        return
    if result.added:
        print(tr("matrix.sync.wrote", language, path=result.path, added=", ".join(result.added)))
        _print_unchecked(result, language)
    else:
        print(tr("matrix.sync.nothing_new", language, newest=result.newest_curated, urls=", ".join(cfg.urls), path=result.path))


def _print_unchecked(result, language: str, file=None) -> None:
    """Which tuning rows a synced release was not checked against (their windows are open-ended)."""
    for version, items in result.unchecked.items():
        if items:
            print(tr("matrix.sync.tuning_unchecked", language, version=version, count=len(items),
                     checked=result.tuning_checked_through, items=", ".join(items)), file=file or sys.stdout)
