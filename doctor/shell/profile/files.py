"""Finding and reading the files of a profile: bounded, streamed, regular files only.

A trace_view.json of hundreds of MB is never loaded: it is decoded one event at a time with
``json.JSONDecoder`` over 1 MiB chunks (an event may not exceed MAX_EVENT bytes), so memory stays
that of the columns the analysis keeps. CSV tables are read line by line with a cap on a line's
length. Every failure is a :class:`ProfileInputError`: one line, exit 2.
"""
from __future__ import annotations

import codecs
import csv
import json
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, List, Optional, Tuple

from doctor.errors import UsageError
from doctor.i18n import T
from doctor.shell.host import files

CHUNK = 1 << 20
MAX_EVENT = 1 << 20  # bytes of one trace event (a kernel with its args is a few hundred)
MAX_VALUE = 16 << 20  # bytes of a top-level value other than the events (Kineto metadata)
MAX_LINE = 1 << 20  # bytes of one CSV line
MAX_ENTRIES = 20_000  # directory entries looked at while searching
MAX_DEPTH = 3
MAX_INFO = 4 << 20  # bytes of profiler_info.json / profiler_metadata.json / communication.json
_WS = re.compile(r"[ \t\n\r]*")
_WS_COMMA = re.compile(r"[ \t\n\r,]*")
_WS_SEP = re.compile(r"[ \t\n\r]*(,)?[ \t\n\r]*")  # between two events: blanks, one comma, blanks
# the end of an object followed by the next one: where a run of whole events may end (or inside a
# string or a nested value: then the run does not decode, and the events go one at a time)
_CUT = re.compile(r"\}[ \t\n\r]*,[ \t\n\r]*(?=\{)")
_TAIL = 16 << 10  # characters searched for the last cut, widened when none is found
_RUN = 128 << 10  # characters decoded at a time, about: the events of a run are added while in the cache

Progress = Callable[[int], None]


class ProfileInputError(UsageError):
    """A profile that cannot be read: the message is the one line the user sees."""


# -- the layout ------------------------------------------------------------------------------


@dataclass
class RankFiles:
    """The files of one rank (one *_ascend_pt, one PROF_*, or bare files)."""

    label: str
    root: str
    producer: str  # torch_npu | msprof | bare
    trace: Optional[str] = None
    table: Optional[str] = None
    info: Optional[str] = None  # profiler_info*.json
    metadata: Optional[str] = None  # profiler_metadata.json
    step_trace: Optional[str] = None
    communication: Optional[str] = None
    memory_record: Optional[str] = None
    api_statistic: Optional[str] = None
    raw: bool = False  # FRAMEWORK/ and PROF_* only: not analysed yet
    present: List[str] = field(default_factory=list)  # names of the files found


@dataclass
class Layout:
    path: str
    kind: str  # torch_npu | torch_npu_cluster | msprof | bare_trace | bare_table | cluster_summary
    ranks: List[RankFiles]
    raw: List[RankFiles]  # ranks not analysed yet (FRAMEWORK/ + PROF_* only)
    cluster_step_trace: Optional[str] = None


def _is_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _is_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _list(path: str) -> List[str]:
    try:
        with os.scandir(path) as it:
            out = []
            for n, entry in enumerate(it):
                if n >= MAX_ENTRIES:
                    break
                out.append(entry.name)
            return sorted(out)
    except OSError as e:
        raise ProfileInputError(f"{path}: {e.strerror or e}") from None


def _first(directory: str, names: List[str], pattern: str) -> Optional[str]:
    rx = re.compile(pattern)
    for n in names:
        if rx.fullmatch(n) and _is_file(os.path.join(directory, n)):
            return os.path.join(directory, n)
    return None


def _output_dir(rank: RankFiles, out: str) -> None:
    names = _list(out)
    rank.present = [n for n in names if _is_file(os.path.join(out, n))]
    rank.trace = _first(out, names, r"trace_view\.json")
    rank.table = _first(out, names, r"kernel_details\.csv")
    rank.step_trace = _first(out, names, r"step_trace_time\.csv")
    rank.communication = _first(out, names, r"communication\.json")
    rank.memory_record = _first(out, names, r"memory_record\.csv")
    rank.api_statistic = _first(out, names, r"api_statistic\.csv")


def _msprof_output(rank: RankFiles, out: str) -> None:
    names = _list(out)
    rank.present = [n for n in names if _is_file(os.path.join(out, n))]
    rank.trace = _first(out, names, r"msprof_\d+\.json")
    rank.table = _first(out, names, r"op_summary_\d+\.csv")
    rank.api_statistic = _first(out, names, r"api_statistic_\d+\.csv")
    rank.memory_record = _first(out, names, r"memory_record_\d+\.csv")


def _ascend_pt(path: str) -> RankFiles:
    names = _list(path)
    rank = RankFiles(label=os.path.basename(path.rstrip("/")) or path, root=path, producer="torch_npu")
    rank.info = _first(path, names, r"profiler_info(_\d+)?\.json")
    rank.metadata = _first(path, names, r"profiler_metadata\.json")
    out = os.path.join(path, "ASCEND_PROFILER_OUTPUT")
    if _is_dir(out):
        _output_dir(rank, out)
    if rank.trace is None and rank.table is None:
        rank.raw = "FRAMEWORK" in names or any(n.startswith("PROF_") for n in names)
    return rank


def _prof(path: str) -> Optional[RankFiles]:
    """A PROF_* directory of msprof: mindstudio_profiler_output/ (CANN >= 8.0) or the older
    device_N/timeline + device_N/summary."""
    rank = RankFiles(label=os.path.basename(path.rstrip("/")), root=path, producer="msprof")
    out = os.path.join(path, "mindstudio_profiler_output")
    if _is_dir(out):
        _msprof_output(rank, out)
        return rank
    for n in _list(path):
        if re.fullmatch(r"device_\d+", n):
            dev = os.path.join(path, n)
            for sub, attr, rx in (("timeline", "trace", r"msprof_[\d_]+\.json"), ("summary", "table", r"op_summary_[\d_]+\.csv")):
                d = os.path.join(dev, sub)
                if _is_dir(d):
                    setattr(rank, attr, _first(d, _list(d), rx))
            if rank.trace or rank.table:
                return rank
    return None


def _bare(path: str, names: List[str]) -> Optional[RankFiles]:
    rank = RankFiles(label=os.path.basename(path.rstrip("/")) or path, root=path, producer="bare")
    _output_dir(rank, path)
    if rank.trace is None:
        rank.trace = _first(path, names, r".*\.pt\.trace\.json|msprof_\d+\.json")
    if rank.table is None:
        rank.table = _first(path, names, r"op_summary_\d+\.csv")
    rank.info = _first(path, names, r"profiler_info(_\d+)?\.json")
    return rank if rank.trace or rank.table else None


def find(path: str) -> Layout:
    """What ``path`` holds. Raises ProfileInputError when it holds no profile."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise ProfileInputError(f"{path}: {e.strerror or e}") from None
    if stat.S_ISREG(st.st_mode):
        name = os.path.basename(path)
        rank = RankFiles(label=name, root=os.path.dirname(path) or ".", producer="bare")
        if name.lower().endswith(".csv"):
            rank.table = path
            kind = "bare_table"
        else:
            rank.trace = path
            kind = "bare_trace"
        return Layout(path, kind, [rank], [])
    if not stat.S_ISDIR(st.st_mode):
        raise ProfileInputError(T("profile.error.not_file_or_dir", path=path))
    base = os.path.basename(os.path.abspath(path))
    names = _list(path)
    if base == "ASCEND_PROFILER_OUTPUT":
        parent = os.path.dirname(os.path.abspath(path))
        rank = _ascend_pt(parent)
        return Layout(path, "torch_npu", [rank], [])
    if "ASCEND_PROFILER_OUTPUT" in names or base.endswith("_ascend_pt"):
        rank = _ascend_pt(path)
        return Layout(path, "torch_npu", [] if rank.raw else [rank], [rank] if rank.raw else [])
    if base == "mindstudio_profiler_output":
        rank = RankFiles(label=os.path.basename(os.path.dirname(os.path.abspath(path))), root=path, producer="msprof")
        _msprof_output(rank, path)
        return Layout(path, "msprof", [rank], [])
    if base.startswith("PROF_"):
        prof = _prof(path)
        if prof is not None:
            return Layout(path, "msprof", [prof], [])
    if "cluster_step_trace_time.csv" in names:
        return Layout(path, "cluster_summary", [], [], cluster_step_trace=os.path.join(path, "cluster_step_trace_time.csv"))
    bare = _bare(path, names)
    if bare is not None:
        return Layout(path, "bare_trace" if bare.trace else "bare_table", [bare], [])
    ranks: List[RankFiles] = []
    raw: List[RankFiles] = []
    for sub in _children(path):
        sub_base = os.path.basename(sub)
        if sub_base.endswith("_ascend_pt") or _is_dir(os.path.join(sub, "ASCEND_PROFILER_OUTPUT")):
            r = _ascend_pt(sub)
            (raw if r.raw else ranks).append(r)
        elif sub_base.startswith("PROF_"):
            p = _prof(sub)
            if p is not None:
                ranks.append(p)
        elif sub_base == "cluster_analysis_output" and _is_file(os.path.join(sub, "cluster_step_trace_time.csv")):
            if not ranks and not raw:
                return Layout(path, "cluster_summary", [], [], os.path.join(sub, "cluster_step_trace_time.csv"))
    if not ranks and not raw:
        raise ProfileInputError(T("profile.error.no_profile", path=path))
    kind = "msprof" if ranks and all(r.producer == "msprof" for r in ranks) else \
        "torch_npu_cluster" if len(ranks) + len(raw) > 1 else "torch_npu"
    return Layout(path, kind, ranks, raw)


def _children(path: str, depth: int = 1) -> Iterator[str]:
    """Directories below ``path`` that may be ranks (up to MAX_DEPTH levels), never through a symlink."""
    for n in _list(path):
        sub = os.path.join(path, n)
        if not _is_dir(sub):
            continue
        if n.endswith("_ascend_pt") or n.startswith("PROF_") or n == "cluster_analysis_output" \
                or _is_dir(os.path.join(sub, "ASCEND_PROFILER_OUTPUT")):
            yield sub
        elif depth < MAX_DEPTH:
            yield from _children(sub, depth + 1)


# -- small files -----------------------------------------------------------------------------


def read_json(path: str, cap: int = MAX_INFO) -> Any:
    try:
        data = files.open_regular(path, cap + 1, follow=False)
    except OSError as e:
        raise ProfileInputError(f"{path}: {e.strerror or e}") from None
    if len(data) > cap:
        raise ProfileInputError(T("profile.error.too_large", path=path, mb=cap >> 20))
    try:
        return json.loads(data.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError) as e:
        raise ProfileInputError(T("profile.error.not_json", path=path, error=str(e))) from None


def header(path: str) -> List[str]:
    for row in csv_rows(path):
        return row
    return []


# -- streaming -------------------------------------------------------------------------------


def _open(path: str, follow: bool) -> Tuple[Any, int]:
    try:
        fh = files.open_binary(path, follow=follow)
    except OSError as e:
        raise ProfileInputError(f"{path}: {e.strerror or e}") from None
    return fh, os.fstat(fh.fileno()).st_size


def csv_rows(path: str, progress: Optional[Progress] = None, follow: bool = True) -> Iterator[List[str]]:
    """The rows of a CSV file, streamed; a line longer than MAX_LINE is an error."""
    fh, _ = _open(path, follow)

    def lines() -> Iterator[str]:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pending = ""
        while True:
            block = fh.read(CHUNK)
            if progress is not None and block:
                progress(len(block))
            text = decoder.decode(block, final=not block)
            pending += text
            if len(pending) > MAX_LINE and "\n" not in pending:
                raise ProfileInputError(T("profile.error.line_too_long", path=path, mb=MAX_LINE >> 20))
            *complete, pending = pending.split("\n")
            for line in complete:
                if len(line) > MAX_LINE:
                    raise ProfileInputError(T("profile.error.line_too_long", path=path, mb=MAX_LINE >> 20))
                yield line
            if not block:
                if pending:
                    yield pending
                return

    with fh:
        try:
            yield from csv.reader(lines())
        except csv.Error as e:
            raise ProfileInputError(T("profile.error.not_csv", path=path, error=str(e))) from None


@dataclass
class StreamResult:
    events: int = 0
    container: str = "list"
    complete: bool = True  # the closing bracket was there
    bytes: int = 0


class _Reader:
    """The decoding state of one trace file: text decoded so far from ``dropped`` on."""

    def __init__(self, path: str, fh: Any, size: int, progress: Optional[Progress]):
        self.path, self.fh, self.size, self.progress = path, fh, size, progress
        # the decoder's C scanner: (value, end) from a position, without slicing the buffer
        self.scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.read = 0
        self.dropped = 0

    def fail(self, what: str) -> ProfileInputError:
        return ProfileInputError(f"{self.path}: {what}")

    def fill(self) -> bool:
        if self.eof:
            return False
        block = self.fh.read(CHUNK)
        self.read += len(block)
        if self.progress is not None and block:
            self.progress(len(block))
        if not block:
            self.eof = True
        text = self.decoder.decode(block, final=not block)
        self.dropped += self.pos
        self.buf = self.buf[self.pos:] + text
        self.pos = 0
        return bool(block)

    def offset(self) -> int:
        return self.dropped + self.pos

    def skip(self, rx: "re.Pattern[str]") -> Optional[str]:
        """Skip whitespace; the next character, or None at the end of the file."""
        while True:
            m = rx.match(self.buf, self.pos)
            if m:
                self.pos = m.end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.fill():
                return None

    def value(self, limit: int, what: str) -> Any:
        while True:
            buf, pos = self.buf, self.pos
            end = -1
            obj: Any = None
            # scanned from a copy of what is left: an error's line count then covers the event,
            # not the whole buffer before it
            rest = buf[pos:] if pos else buf
            try:
                obj, end = self.scan(rest, 0)
                end += pos
            except StopIteration as e:
                at = (e.value if isinstance(e.value, int) else 0) + pos
                if self.eof or len(buf) - at > 8:
                    raise self.fail(f"not valid JSON at byte ~{self.offset()}") from None
            except RecursionError:
                raise self.fail(f"nested too deeply at byte ~{self.offset()} (not a profiler trace)") from None
            except ValueError as e:
                # an error before the end of what was read is in the file, not in the next chunk
                at = getattr(e, "pos", len(rest)) + pos
                unterminated = str(getattr(e, "msg", "")).startswith("Unterminated string")
                if self.eof or (len(buf) - at > 8 and not unterminated):
                    raise self.fail(f"not valid JSON at byte ~{self.dropped + at} ({getattr(e, 'msg', e)})") from None
            # a value that reaches the end of what was read may go on in the next chunk
            if end >= 0 and (end < len(buf) or self.eof):
                self.pos = end
                return obj
            if len(buf) - pos > limit:
                raise self.fail(f"{what} longer than {limit >> 20} MB at byte ~{self.offset()} (not a profiler trace)")
            if not self.fill():
                if end >= 0:
                    self.pos = end
                    return obj
                raise self.fail(f"truncated at byte {self.size} (inside {what}): the trace was not written completely")


def _last_cut(buf: str, pos: int) -> Optional["re.Match[str]"]:
    """The last place in ``buf[pos:]`` where one object ends and the next begins."""
    start = max(pos, len(buf) - _TAIL)
    while True:
        last = None
        for m in _CUT.finditer(buf, start):
            last = m
        if last is not None or start == pos:
            return last
        start = max(pos, start - 4 * (len(buf) - start))


def stream_trace(path: str, on_event: Callable[[Any], None], progress: Optional[Progress] = None,
                 follow: bool = True, on_events: Optional[Callable[[List[Any]], None]] = None) -> StreamResult:
    """Decode the events of a Chrome trace (a bare list, or an object with ``traceEvents``) in
    file order. With ``on_events``, the whole events in what has been read go to it as one list
    (one ``json.loads`` of the run: the C decoder does the work), the rest one at a time to
    ``on_event``; without it, every event goes to ``on_event``. A file that ends after a complete
    event but without its closing bracket (the writer was stopped) is accepted and says so;
    anything else malformed is an error, the same error whichever way the events went."""
    fh, size = _open(path, follow)
    r = _Reader(path, fh, size, progress)
    result = StreamResult()
    loads = json.loads

    def events() -> None:
        # the hot loop: runs of whole events decoded by one C call each; between them (a value
        # split across chunks, a run that does not decode) one C scan per event, whitespace
        # skipped by one regex match, and the slow path (the end of the buffer) through the reader
        scan, ws = r.scan, _WS_SEP.match
        count = 0
        one_by_one_until = -1  # file offset (characters) up to which runs are not tried again
        c = r.skip(_WS)
        try:
            while True:
                if c is None:
                    result.complete = False
                    return
                if c == "]":
                    r.pos += 1
                    return
                buf, pos = r.buf, r.pos
                last = False
                if on_events is not None and r.dropped + pos >= one_by_one_until:
                    cut = _CUT.search(buf, pos + _RUN) if len(buf) - pos > 2 * _RUN else None
                    if cut is None:
                        cut = _last_cut(buf, pos)
                    if cut is not None:
                        try:
                            run = loads("[" + buf[pos:cut.start() + 1] + "]")
                        except (ValueError, RecursionError):
                            # an error in the file is found again, and said, one event at a time
                            one_by_one_until = r.dropped + cut.end()
                        else:
                            on_events(run)
                            count += len(run)
                            r.pos = cut.end()
                            c = "{"
                            del run
                            continue
                    elif len(buf) - pos < _TAIL:
                        last = True  # one event, likely cut by the chunk's end: the careful way
                end = -1
                if not last:
                    try:
                        obj, end = scan(buf, pos)
                    except (StopIteration, ValueError, RecursionError):
                        end = -1
                if 0 <= end < len(buf) - 1:
                    r.pos = end
                else:
                    obj = r.value(MAX_EVENT, "an event")
                on_event(obj)
                count += 1
                m = ws(r.buf, r.pos)
                sep = m.group(1) if m else None
                if m and m.end() < len(r.buf):
                    r.pos = m.end()
                    c = r.buf[r.pos]
                    if sep == "," and c == "]":
                        raise r.fail(f"not valid JSON at byte ~{r.offset()} (a comma before ])")
                    if sep is None and c != "]":
                        raise r.fail(f"not valid JSON at byte ~{r.offset()} (expected , or ])")
                    continue
                c = r.skip(_WS)
                if c == ",":
                    r.pos += 1
                    c = r.skip(_WS)
                    if c == "]":
                        raise r.fail(f"not valid JSON at byte ~{r.offset()} (a comma before ])")
                elif c not in (None, "]"):
                    raise r.fail(f"not valid JSON at byte ~{r.offset()} (expected , or ])")
        finally:
            result.events += count

    with fh:
        first = r.skip(_WS)
        if first == "[":
            r.pos += 1
            events()
        elif first == "{":
            result.container = "object"
            r.pos += 1
            found = False
            while True:
                c = r.skip(_WS_COMMA)
                if c is None:
                    raise r.fail(f"truncated at byte {size}: the trace was not written completely")
                if c == "}":
                    r.pos += 1
                    break
                key = r.value(MAX_EVENT, "a key")
                if not isinstance(key, str) or r.skip(_WS) != ":":
                    raise r.fail(f"not valid JSON at byte ~{r.offset()}")
                r.pos += 1
                if key == "traceEvents":
                    if r.skip(_WS) != "[":
                        raise r.fail("traceEvents is not a list")
                    r.pos += 1
                    found = True
                    events()
                    if not result.complete:
                        break
                else:
                    r.skip(_WS)
                    r.value(MAX_VALUE, "a value")
            if not found:
                raise r.fail("a JSON object without traceEvents (not a Chrome trace)")
        elif first is None:
            raise r.fail("empty file")
        else:
            raise r.fail("not a Chrome trace (a JSON list or an object with traceEvents)")
        if result.complete and r.skip(_WS) is not None:
            raise r.fail(f"unexpected data after the trace at byte ~{r.offset()}")
    result.bytes = r.read
    return result
