"""Time intervals in microseconds as sorted, disjoint ``(start, end)`` lists."""
from __future__ import annotations

from typing import Iterable, List, Sequence, Tuple

Span = Tuple[float, float]


def union(spans: Iterable[Span]) -> List[Span]:
    """The disjoint, sorted union of any intervals (empty and negative ones dropped)."""
    out: List[Span] = []
    for s, e in sorted(x for x in spans if x[1] > x[0]):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def total(spans: Sequence[Span]) -> float:
    return sum(e - s for s, e in spans)


def clip(spans: Sequence[Span], lo: float, hi: float) -> List[Span]:
    """The parts of disjoint sorted ``spans`` inside ``[lo, hi)``."""
    out: List[Span] = []
    for s, e in spans:
        if e <= lo:
            continue
        if s >= hi:
            break
        out.append((max(s, lo), min(e, hi)))
    return out


def subtract(a: Sequence[Span], b: Sequence[Span]) -> List[Span]:
    """``a`` minus ``b``, both disjoint and sorted."""
    out: List[Span] = []
    j = 0
    for s, e in a:
        cur = s
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < e:
            bs, be = b[k]
            if bs > cur:
                out.append((cur, bs))
            cur = max(cur, be)
            if cur >= e:
                break
            k += 1
        if cur < e:
            out.append((cur, e))
    return out


def intersect(a: Sequence[Span], b: Sequence[Span]) -> List[Span]:
    """Where both disjoint sorted lists cover."""
    out: List[Span] = []
    i = j = 0
    while i < len(a) and j < len(b):
        s = max(a[i][0], b[j][0])
        e = min(a[i][1], b[j][1])
        if s < e:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def gaps(spans: Sequence[Span], lo: float, hi: float) -> List[Span]:
    """The holes of disjoint sorted ``spans`` within ``[lo, hi)``."""
    return subtract([(lo, hi)], spans) if hi > lo else []
