"""Seed 001's capacity evaluation (LMCache long-doc-qa) as plain data (pure): which document
counts to try, where the second ask's TTFT jumps (the measured knee), and whether that is where
the configuration says the cache is full.

N documents of L tokens are sent once (cold) and then again; while they all fit, the second ask
is a cache hit and its TTFT stays low; once they do not, LRU eviction of a sequential scan turns
every second ask into a miss and TTFT jumps to the cold level (seed 001: 0.3-0.5 s -> 2.7-3.1 s).
Where the server counts its prefix-cache hits, those counts decide hit or miss: TTFT moves with
whatever else loads the server, the counts do not. TTFT decides only where nothing was counted.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from doctor.smoke.kvpool_calc import Prediction

DEFAULT_DOCS = list(range(10, 111, 10))   # seed 001's table
HIT_RATIO = 0.8                           # as the protocol's tiers: a hit is clearly faster than cold
HIT_SHARE = 0.5                           # as the tiers: at least half the prompt tokens came from a cache
MAX_POINTS = 40
MAX_DOCS = 100_000


class SweepError(ValueError):
    pass


def parse_docs(text: str) -> List[int]:
    """``10,20,40`` or ``10-110:10`` (start-stop:step, stop included) -> sorted document counts."""
    out: List[int] = []
    for part in str(text).replace(" ", "").split(","):
        if not part:
            continue
        m = re.match(r"^(\d+)-(\d+)(?::(\d+))?$", part)
        if m:
            lo, hi, step = int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)
            if hi < lo or step < 1:
                raise SweepError(f"{part!r}: write START-STOP:STEP with START <= STOP, e.g. 10-110:10")
            if hi > MAX_DOCS or (hi - lo) // step + 1 > MAX_POINTS:  # before the range is made (1-1000000000)
                raise SweepError(f"at most {MAX_POINTS} points of at most {MAX_DOCS} documents")
            out.extend(range(lo, hi + 1, step))
        elif part.isdigit():
            out.append(int(part))
        else:
            raise SweepError(f"{part!r}: write document counts, e.g. 10,20,40 or 10-110:10")
    docs = sorted(set(out))
    if not docs or docs[0] < 1:
        raise SweepError("the document counts must be 1 or more")
    if len(docs) > MAX_POINTS or docs[-1] > MAX_DOCS:
        raise SweepError(f"at most {MAX_POINTS} points of at most {MAX_DOCS} documents")
    return docs


def plan_docs(prediction: Optional[Prediction]) -> List[int]:
    """Eight counts from a quarter to twice the predicted fit, else seed 001's 10..110."""
    if prediction is None:
        return list(DEFAULT_DOCS)
    fit = (prediction.docs_low + prediction.docs_high) / 2
    if fit < 1:
        return list(DEFAULT_DOCS)
    step = max(1, round(fit / 4))
    return [step * k for k in range(1, 9)]


@dataclass(frozen=True)
class Point:
    """TTFT medians of one document count: a straggler must not move the knee (means are kept
    for the report, as LMCache's benchmark prints them)."""

    docs: int
    cold_ms: Optional[float]    # the first ask (always a miss: fresh documents)
    hit_ms: Optional[float]     # the second ask
    cold_mean_ms: Optional[float] = None
    hit_mean_ms: Optional[float] = None
    hit_share: Optional[float] = None   # the second ask's prompt tokens the server counted as cache hits

    def to_json(self) -> Dict[str, Any]:
        return {"docs": self.docs, "cold_ttft_ms": self.cold_ms, "second_ttft_ms": self.hit_ms,
                "cold_ttft_mean_ms": self.cold_mean_ms, "second_ttft_mean_ms": self.hit_mean_ms,
                "second_hit_share": self.hit_share}


@dataclass(frozen=True)
class Knee:
    last_fit: Optional[int]       # the largest count whose second ask was a hit
    first_miss: Optional[int]     # the smallest count whose second ask was not
    threshold_ms: Optional[float]
    visible: bool                 # the curve has both a hit level and a miss level
    by: str = "ttft"              # what told hits from misses: "counters", "ttft", or "both" (mixed points)

    def to_json(self) -> Dict[str, Any]:
        return {"last_fit": self.last_fit, "first_miss": self.first_miss,
                "threshold_ms": None if self.threshold_ms is None else round(self.threshold_ms, 1),
                "visible": self.visible, "by": self.by}


def hit_share(delta: Optional[Dict[str, float]], prompt_tokens: int) -> Optional[float]:
    """The share of an ask's prompt tokens the server counted as hits in HBM or in the pool
    (``kvpool_calc.counter_delta``), or None when it counted neither."""
    hits = [delta[k] for k in ("hbm_hits", "pool_hits") if delta and k in delta]
    if not hits or prompt_tokens <= 0:
        return None
    return round(min(1.0, max(0.0, sum(hits)) / prompt_tokens), 3)


def find_knee(points: Sequence[Point]) -> Knee:
    """A second ask is a miss when the server counted less than HIT_SHARE of its prompt tokens as
    cache hits. Where it counted nothing, a second ask is a miss when its TTFT is past the middle
    of the hit plateau (the lowest second ask) and the cold level of its own count (its first ask,
    else the highest second ask), or no faster than HIT_RATIO of its own first ask. The knee lies
    between the last hit before the first miss and that miss."""
    pts = sorted((p for p in points if p.hit_ms is not None), key=lambda p: p.docs)
    if not pts:
        return Knee(None, None, None, False)
    low = min(p.hit_ms for p in pts if p.hit_ms is not None)
    top = max(p.hit_ms for p in pts if p.hit_ms is not None)

    def miss(p: Point) -> bool:
        assert p.hit_ms is not None
        if p.hit_share is not None:
            return p.hit_share < HIT_SHARE
        if p.cold_ms is not None and p.hit_ms > HIT_RATIO * p.cold_ms:
            return True
        cold = p.cold_ms if p.cold_ms is not None else top
        return cold > 1.5 * low and p.hit_ms > (low + cold) / 2

    first = next((p for p in pts if miss(p)), None)
    fits = [p for p in pts if not miss(p) and (first is None or p.docs < first.docs)]
    last_fit = fits[-1].docs if fits else None
    ref = first or pts[-1]
    cold = ref.cold_ms if ref.cold_ms is not None else top
    counted = {p.hit_share is not None for p in pts}
    by = "both" if len(counted) == 2 else "counters" if True in counted else "ttft"
    return Knee(last_fit, first.docs if first else None, (low + cold) / 2, visible=bool(first and fits), by=by)


@dataclass(frozen=True)
class Agreement:
    state: str          # "agree", "below" (fewer documents fit than predicted), "above", "unknown"
    detail: str = ""


def agree(knee: Knee, prediction: Optional[Prediction]) -> Agreement:
    """The fit count F lies in [last_fit, first_miss); it agrees with the prediction when that
    interval meets [docs_low, docs_high]."""
    if prediction is None:
        return Agreement("unknown", "no prediction")
    lo, hi = prediction.docs_low, prediction.docs_high
    a = knee.last_fit if knee.last_fit is not None else 0
    b = knee.first_miss if knee.first_miss is not None else math.inf
    if knee.last_fit is None and knee.first_miss is None:
        return Agreement("unknown", "no measurement")
    if a <= hi and lo < b:
        return Agreement("agree")
    return Agreement("below" if b <= lo else "above")
