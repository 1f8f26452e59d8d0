"""Is the greedy output right? Compare it with a reference (the CPU run, or a golden file
recorded on a known-good host with --record-golden).

Each output is ``{"prompt": [ids], "tokens": [ids], "top": [[[id, logprob], ...] per position]}``.
The stated tolerance (docs/smoke.md): the tokens must be the reference's tokens, position by
position, until the first place where the reference itself had a near tie (its chosen token
and the device's token within LOGPROB_TOL nats of each other); after such a place the two
sequences legitimately part and are not compared further. Where the tokens agree, the chosen
token's logprob must be within LOGPROB_TOL nats of the reference's. Garbled output after an
upgrade (vllm-ascend #463, #4480) fails the first rule at once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

LOGPROB_TOL = 0.5  # nats; bf16 on a device against float32 on the CPU stays well inside this


@dataclass(frozen=True)
class PromptComparison:
    index: int
    compared: int                 # positions compared
    diverged_at: Optional[int]    # first position with another token
    tie: bool                     # the divergence is at a near tie of the reference
    max_logprob_diff: float
    expected: List[int]
    got: List[int]

    @property
    def ok(self) -> bool:
        return (self.diverged_at is None or self.tie) and self.max_logprob_diff <= LOGPROB_TOL


@dataclass(frozen=True)
class Comparison:
    prompts: List[PromptComparison]
    problem: Optional[str] = None  # the outputs cannot be compared (other prompts, nothing to compare)

    @property
    def ok(self) -> bool:
        return self.problem is None and all(p.ok for p in self.prompts)

    @property
    def first_bad(self) -> Optional[PromptComparison]:
        return next((p for p in self.prompts if not p.ok), None)

    def to_json(self) -> Dict[str, Any]:
        return {
            "ok": self.ok,
            "problem": self.problem,
            "tolerance_nats": LOGPROB_TOL,
            "prompts": [{"index": p.index, "compared": p.compared, "diverged_at": p.diverged_at, "tie": p.tie,
                         "max_logprob_diff": round(p.max_logprob_diff, 4), "ok": p.ok} for p in self.prompts],
        }


def _logprob_of(top: Sequence[Sequence[Any]], token: int) -> Optional[float]:
    for t, lp in top:
        if int(t) == token:
            return float(lp)
    return None


def compare_one(index: int, ref: Dict[str, Any], got: Dict[str, Any]) -> PromptComparison:
    want, have = [int(t) for t in ref.get("tokens", [])], [int(t) for t in got.get("tokens", [])]
    ref_top, got_top = ref.get("top") or [], got.get("top") or []
    worst, diverged, tie, compared = 0.0, None, False, 0
    for j in range(min(len(want), len(have))):
        compared = j + 1
        if want[j] != have[j]:
            diverged = j
            if j < len(ref_top):
                chosen = _logprob_of(ref_top[j], want[j])
                other = _logprob_of(ref_top[j], have[j])
                tie = chosen is not None and other is not None and chosen - other <= LOGPROB_TOL
            break
        if j < len(ref_top) and j < len(got_top):
            a, b = _logprob_of(ref_top[j], want[j]), _logprob_of(got_top[j], have[j])
            if a is not None and b is not None:
                worst = max(worst, abs(a - b))
    if diverged is None and len(have) < len(want):
        diverged, tie = len(have), False  # stopped early (an EOS the reference did not produce)
    return PromptComparison(index, compared, diverged, tie, worst, want, have)


def compare(reference: Sequence[Dict[str, Any]], outputs: Sequence[Dict[str, Any]]) -> Comparison:
    if not reference or not outputs:
        return Comparison([], problem="nothing to compare")
    if len(reference) != len(outputs) or any(list(r.get("prompt", [])) != list(o.get("prompt", []))
                                             for r, o in zip(reference, outputs)):
        return Comparison([], problem="the reference was made for other prompts")
    return Comparison([compare_one(i, r, o) for i, (r, o) in enumerate(zip(reference, outputs))])


GOLDEN_SCHEMA = 1


def golden_doc(model: Dict[str, Any], prompts: List[str], tokens: int, top: int,
               outputs: Dict[str, List[Dict[str, Any]]], recorded: Dict[str, Any]) -> Dict[str, Any]:
    """The golden file: the model's identity, the prompts, and the outputs per stage."""
    return {"schema": GOLDEN_SCHEMA, "model": model, "prompts": prompts, "tokens": tokens, "top": top,
            "outputs": outputs, "recorded": recorded}


class GoldenError(ValueError):
    pass


def check_golden(doc: Any) -> Dict[str, Any]:
    """A golden file's content, validated; GoldenError says what is wrong with it."""
    if not isinstance(doc, dict) or doc.get("schema") != GOLDEN_SCHEMA:
        raise GoldenError(f"not a smoke golden file (schema {GOLDEN_SCHEMA})")
    if not isinstance(doc.get("outputs"), dict) or not isinstance(doc.get("prompts"), list):
        raise GoldenError("it has no outputs or prompts")
    for stage, outs in doc["outputs"].items():
        if not isinstance(outs, list) or not all(isinstance(o, dict) and isinstance(o.get("tokens"), list) for o in outs):
            raise GoldenError(f"outputs.{stage} is not a list of outputs")
    if not isinstance(doc.get("tokens"), int) or doc["tokens"] <= 0:
        raise GoldenError("tokens must be a positive number")
    return doc
