"""profile DIR: find the files, stream them into columns, analyse each rank, one report.

Reading is the shell's (doctor/shell/profile/files.py); judgement is doctor/profile's."""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from doctor.findings import Command
from doctor.profile import cluster, commstats, kernels, memory, trace, view
from doctor.profile.analyse import analyse
from doctor.profile.identify import identify
from doctor.profile.report import RankResult, Report, assemble
from doctor.profile.verdict import judge
from doctor.shell.profile import files as pf
from doctor.versions import pep440

ProgressFn = Callable[[str, int, int], None]


@dataclass
class ProfileOptions:
    path: str
    release: Optional[str] = None  # vllm-ascend version the profile was taken on
    only: Sequence[str] = ()  # the rank directories (names) to read, when not all (a capture just made)


class RawProfile(pf.ProfileInputError):
    """Only FRAMEWORK/ and PROF_* are there: the offline analysis has not run."""

    def __init__(self, message: str, command: Command):
        super().__init__(message)
        self.message, self.command = message, command


def analyse_command(raw: Sequence[pf.RankFiles]) -> Command:
    """``analyse()`` on the directory that holds the *_ascend_pt directories (the torch_npu API:
    torch_npu.profiler.profiler.analyse(profiler_path))."""
    parents = sorted({os.path.dirname(os.path.abspath(r.root)) for r in raw})
    path = parents[0] if len(parents) == 1 else os.path.abspath(raw[0].root)
    code = f"from torch_npu.profiler.profiler import analyse; analyse({path!r})"
    return Command(("python3", "-c", code))


def _total_bytes(paths: Sequence[Optional[str]]) -> int:
    n = 0
    for p in paths:
        if p:
            try:
                n += os.path.getsize(p)
            except OSError:
                pass
    return n


def _releases_for(torch_npu_version: Optional[str]) -> List[str]:
    if not torch_npu_version:
        return []
    v = pep440(torch_npu_version)
    if v is None:
        return []
    from doctor.matrix import load_matrix

    try:
        matrix = load_matrix(user_overlays=False, error_knowledge=False)
    except Exception:  # the matrix is advice's helper here, never a reason to fail the analysis
        return []
    exact = [r.vllm_ascend for r in matrix.releases if any(pep440(a) == v for a in r.torch_npu_accepted)]
    if exact:
        return exact
    base = v.base_version
    return [r.vllm_ascend for r in matrix.releases
            if any(getattr(pep440(a), "base_version", None) == base for a in r.torch_npu_accepted)]


class _Bytes:
    """Progress in bytes over every file of the run."""

    def __init__(self, progress: Optional[ProgressFn], total: int):
        self.progress, self.total, self.done, self.name = progress, total, 0, ""

    def file(self, path: str) -> Callable[[int], None]:
        self.name = os.path.basename(path)

        def on(n: int) -> None:
            self.done += n
            if self.progress is not None:
                self.progress(self.name, self.done, self.total)
        return on


def _table(path: str, base: Optional[int], progress: Callable[[int], None]) -> kernels.KernelTable:
    rows = pf.csv_rows(path, progress, follow=False)
    head = next(rows, None)
    if head is None:
        raise pf.ProfileInputError(f"{path}: empty file")
    try:
        b = kernels.KernelTableBuilder(head, base)
    except ValueError as e:
        raise pf.ProfileInputError(f"{path}: not a kernel table ({e})") from None
    for row in rows:
        b.add(row)
    t = b.finish()
    if t.rows and not len(t):
        raise pf.ProfileInputError(f"{path}: no row has a duration (wrong types in every row)")
    return t


def read_trace(path: str, progress: Optional[Callable[[int], None]] = None,
               follow: bool = True) -> Tuple[trace.Trace, pf.StreamResult]:
    """A trace file as columns: streamed, runs of whole events added in one go."""
    b = trace.TraceBuilder()
    res = pf.stream_trace(path, b.add, progress, follow=follow, on_events=b.add_many)
    b.container = res.container
    return b.finish(), res


MAX_COMMUNICATION_JSON = 16 << 20  # bytes: decoded whole (a few hundred bytes per operator and step)


def _memory(path: str, base: Optional[int], progress: Callable[[int], None]) -> Optional[memory.MemorySeries]:
    """memory_record.csv as one series (the framework's component); ProfileInputError when it
    cannot be read."""
    rows = pf.csv_rows(path, progress, follow=False)
    head = next(rows, None)
    if head is None:
        raise pf.ProfileInputError(f"{path}: empty file")
    try:
        b = memory.MemoryRecordBuilder(head, base)
    except ValueError as e:
        raise pf.ProfileInputError(f"{path}: not a memory record ({e})") from None
    for row in rows:
        b.add(row)
    return b.finish()


def load_rank(files: pf.RankFiles, bytes_progress: _Bytes) -> RankResult:
    if not files.trace and not files.table:  # an empty *_ascend_pt, or one behind a symlink loop
        from doctor.i18n import T

        raise pf.ProfileInputError(T("profile.error.no_rank_data", path=files.root))
    info = None
    notes: List[str] = []
    if files.info:
        try:
            info = pf.read_json(files.info)
        except pf.ProfileInputError as e:
            notes.append(f"profiler_info unreadable: {e}")
    base: Optional[int] = None
    tr: Optional[trace.Trace] = None
    table: Optional[kernels.KernelTable] = None
    if files.trace:
        tr, res = read_trace(files.trace, bytes_progress.file(files.trace), follow=files.producer == "bare")
        if tr.events and tr.skipped == tr.events:
            raise pf.ProfileInputError(f"{files.trace}: no event has the fields of a trace event (ph, ts, dur, pid)")
        if not res.complete:
            notes.append("trace_truncated_end")
        if tr.skipped:
            notes.append(f"skipped {tr.skipped} events of the wrong shape")
        base = tr.base_us
    if files.table:
        table = _table(files.table, base, bytes_progress.file(files.table))
        if table.skipped:
            notes.append(f"skipped {table.skipped} kernel rows without a duration")
    series: Optional[memory.MemorySeries] = None
    if files.memory_record:
        try:
            series = _memory(files.memory_record, base, bytes_progress.file(files.memory_record))
        except pf.ProfileInputError as e:
            notes.append(f"memory_record unreadable: {e}")
    comm: Optional[Dict[str, Any]] = None
    if files.communication:
        try:
            comm = commstats.summarise(pf.read_json(files.communication, MAX_COMMUNICATION_JSON))
        except pf.ProfileInputError as e:
            notes.append(f"communication.json unreadable: {e}")
    step_header: List[str] = []
    if files.step_trace:
        try:
            step_header = pf.header(files.step_trace)
        except pf.ProfileInputError:
            step_header = []
    label = files.label
    if tr is not None:
        rank = view.from_trace(tr, label, table)
        producer = files.producer
        if producer == "bare":
            producer = "torch" if tr.container == "object" and not rank.has_cann and not len(rank) else \
                "torch_npu" if rank.host_lane else "msprof" if rank.has_cann or len(rank) else "unknown"
        del tr  # freed here (no cycles: a collection found nothing to free), before the next rank's
    else:
        assert table is not None
        rank = view.from_table(table, label)
        producer = files.producer if files.producer != "bare" else "torch_npu" if table.header[:1] != ["Device_id"] \
            or "Name" in table.header else "msprof"
    ident = identify(producer, info, table.header if table is not None else (), step_header,
                     rank.has_cann if rank.has_trace else None)
    if ident.rank_id is not None:
        label = f"rank {ident.rank_id}"
        rank.label = label
    figures = analyse(rank)
    verdict = judge(figures.totals, figures.device_kind, figures.device_kind_measured)
    present = {"trace": files.trace, "kernel_table": files.table, "profiler_info": files.info,
               "step_trace_time": files.step_trace}
    held = None
    if series is not None:
        ident.profile_memory = True  # the file is written only with profile_memory=True
        present["memory_record"] = files.memory_record
        held = memory.summarise(series, [(s.start, s.end) for s in figures.steps])
    if comm is not None:
        present["communication_json"] = files.communication
    return RankResult(label, present, ident, figures, verdict, notes, memory=held, communication=comm)


def known_release(release: str) -> str:
    """The matrix's spelling of ``--release``; UsageError (exit 2) for a release the matrix does not
    know, as check --target and matrix explain refuse it (the same lookup: release_row). A matrix
    that cannot be loaded does not fail the analysis: the release is then taken as given."""
    from doctor.errors import UsageError
    from doctor.i18n import T
    from doctor.matrix import MatrixError, load_matrix
    from doctor.matrix.query import release_row

    try:
        matrix = load_matrix(error_knowledge=False)
    except MatrixError:
        return release.lstrip("vV")
    row = release_row(matrix, release)
    if row is None:
        raise UsageError(T("profile.error.release_unknown", release=release))
    return row.vllm_ascend


def run(opts: ProfileOptions, progress: Optional[ProgressFn] = None) -> Report:
    if opts.release is not None and pep440(opts.release.lstrip("v")) is None:
        raise pf.ProfileInputError(f"--release {opts.release!r}: a vllm-ascend version such as 0.11.0rc3")
    if opts.release is not None:
        opts = ProfileOptions(opts.path, known_release(opts.release), opts.only)
    layout = pf.find(opts.path)
    if opts.only:
        keep = set(opts.only)
        layout.ranks = [r for r in layout.ranks if os.path.basename(r.root.rstrip("/")) in keep]
        layout.raw = [r for r in layout.raw if os.path.basename(r.root.rstrip("/")) in keep]
    if layout.raw and not layout.ranks:
        cmd = analyse_command(layout.raw)
        raise RawProfile(f"{opts.path}: not analysed yet (only FRAMEWORK/ and PROF_* are there); run the offline "
                         "analysis first (torch_npu on the machine that has it), then profile the directory again:", cmd)
    notes: List[str] = []
    if layout.raw:
        notes.append(f"{len(layout.raw)} rank(s) not analysed yet: " + ", ".join(r.label for r in layout.raw))
    cluster_only: List[cluster.RankTotals] = []
    if layout.kind == "cluster_summary" and layout.cluster_step_trace:
        rows = list(pf.csv_rows(layout.cluster_step_trace, follow=False))
        try:
            cluster_only = cluster.from_cluster_table(rows[0] if rows else [], rows[1:])
        except ValueError as e:
            raise pf.ProfileInputError(f"{layout.cluster_step_trace}: {e}") from None
        if not cluster_only:
            raise pf.ProfileInputError(f"{layout.cluster_step_trace}: no rank rows")
    counter = _Bytes(progress, _total_bytes([p for r in layout.ranks for p in (r.trace, r.table, r.memory_record)]))
    results = [load_rank(r, counter) for r in layout.ranks]
    if len(results) > 1:
        labels = [r.label for r in results]
        if len(set(labels)) < len(labels):
            for r, files in zip(results, layout.ranks):
                r.label = files.label
    releases: List[str] = []
    source: Optional[str] = None
    if opts.release:
        releases, source = [opts.release.lstrip("v")], "option"
    else:
        versions = {r.identity.torch_npu_version for r in results if r.identity.torch_npu_version}
        if len(versions) == 1:
            releases = _releases_for(versions.pop())
            source = "torch_npu" if releases else None
    return assemble(opts.path, layout.kind, results, releases, source, notes, cluster_only)


def quoted(path: str) -> str:
    return shlex.quote(path)


def compare_pair(before: str, after: str, release: Optional[str], progress: Optional[ProgressFn] = None
                 ) -> Tuple[Report, Report]:
    return run(ProfileOptions(before, release), progress), run(ProfileOptions(after, release), progress)
