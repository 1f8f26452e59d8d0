"""Each stage's outcome -> its result (name, status, seconds, metrics) and its finding.

Pure: the runner hands over what the scripts reported (an :class:`Outcome`) and, for the hint,
a function that matches error text against the signatures of `ascend-doctor explain`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from doctor.findings import Fixable, FAIL, OK, SKIP, WARN, Finding, Message, Status
from doctor.i18n import T, Text
from doctor.smoke import golden
from doctor.smoke.collective import RankState, culprits
from doctor.smoke.events import ScriptRun

Explain = Callable[[str], Optional[Message]]

SOURCE = "docs/smoke.md"


@dataclass
class Outcome:
    """A target script's run, as the runner saw it."""

    run: ScriptRun
    seconds: float
    timed_out: bool = False
    returncode: Optional[int] = None
    start_error: Optional[str] = None   # the interpreter could not be started
    log: List[str] = field(default_factory=list)
    timeout: float = 0.0


@dataclass
class StageResult:
    name: str
    status: str
    seconds: float
    metrics: Dict[str, Any]
    title: Message
    hint: Optional[Message] = None
    observed: Optional[str] = None
    evidence: List[str] = field(default_factory=list)

    def to_json(self, lang: str = "en") -> Dict[str, Any]:
        return {"name": self.name, "status": self.status, "seconds": round(self.seconds, 3), "metrics": self.metrics,
                "title": self.title.text(lang), "hint": self.hint.text(lang) if self.hint else None}

    def finding(self) -> Finding:
        return Finding(f"smoke.{self.name}", Status(self.status), self.title, observed=self.observed, hint=self.hint,
                       fixable=Fixable.MANUAL if self.status == FAIL else Fixable.NONE, source=SOURCE,
                       evidence=list(self.evidence))


def skipped(name: str, blocker: str) -> StageResult:
    return StageResult(name, SKIP, 0.0, {}, T("smoke.skipped", stage=blocker))


def step_label(step: Optional[str]) -> Text:
    return T(f"smoke.step.{step}") if step in STEPS else T("smoke.step.start")


STEPS = ("import", "device", "compute", "load", "generate", "reference", "args", "tokenize", "ttft", "init",
         "all_reduce")


def _last_log_line(log: List[str]) -> str:
    for line in reversed(log):
        if line.strip():
            return line.strip()[:300]
    return ""


def failure(name: str, out: Outcome, explain: Explain, metrics: Dict[str, Any]) -> Optional[StageResult]:
    """The stage's failure when its script failed, hung, died or never started; else None."""
    log_text = "\n".join(out.log)
    failed = out.run.failed
    evidence = [line for line in out.log if line.strip()][-8:]
    if out.start_error:
        return StageResult(name, FAIL, out.seconds, metrics, T("smoke.cannot_start", error=out.start_error),
                           hint=T("smoke.hint.python"), observed=out.start_error)
    if failed:
        step = str(failed.get("step"))
        error = str(failed.get("error") or "")
        text = error + "\n" + "\n".join(failed.get("traceback") or []) + "\n" + log_text
        metrics = dict(metrics, failed_step=step, error=error)
        return StageResult(name, FAIL, out.seconds, metrics, T("smoke.failed", step=step_label(step), error=error),
                           hint=explain(text) or _step_hint(step, text), observed=error,
                           evidence=list(failed.get("traceback") or [])[-5:])
    if out.timed_out:
        running = out.run.running
        metrics = dict(metrics, failed_step=running, error="timeout")
        return StageResult(name, FAIL, out.seconds, metrics,
                           T("smoke.timeout", seconds=f"{out.timeout:g}", step=step_label(running)),
                           hint=explain(log_text) or T("smoke.hint.timeout"), observed="timeout", evidence=evidence)
    if out.returncode not in (0, None):
        running = out.run.running
        last = _last_log_line(out.log) or f"exit {out.returncode}"
        metrics = dict(metrics, failed_step=running, error=last)
        return StageResult(name, FAIL, out.seconds, metrics, T("smoke.died", step=step_label(running), last=last),
                           hint=explain(log_text) or T("smoke.hint.check"), observed=last, evidence=evidence)
    return None


def _step_hint(step: str, text: str) -> Text:
    low = text.lower()
    if step in ("load", "tokenize", "reference") and "tokenizer" in low:
        return T("smoke.hint.tokenizer")
    if step in ("load", "reference", "tokenize") and any(k in low for k in ("safetensor", "deserializ", "header", "unpickl",
                                                                           "corrupt", "invalid load key")):
        return T("smoke.hint.weights")
    if step == "args":
        return T("smoke.hint.args")
    return T("smoke.hint.check")


def compare_text(reference_name: str, cmp: Optional[golden.Comparison]) -> Text:
    if cmp is None:
        return T("smoke.compared.none")
    return T(f"smoke.compared.{reference_name}")


def wrong_output(name: str, seconds: float, metrics: Dict[str, Any], reference_name: str,
                 cmp: golden.Comparison) -> StageResult:
    bad = cmp.first_bad
    metrics = dict(metrics, comparison=cmp.to_json(), reference=reference_name)
    if cmp.problem or bad is None:
        return StageResult(name, FAIL, seconds, metrics,
                           T("smoke.output.uncomparable", reference=T(f"smoke.reference.{reference_name}"),
                             problem=cmp.problem or "?"), hint=T("smoke.hint.golden"))
    if bad.diverged_at is not None and not bad.tie:
        j = bad.diverged_at
        exp = bad.expected[j] if j < len(bad.expected) else "-"
        got = bad.got[j] if j < len(bad.got) else "-"
        title = T("smoke.output.tokens", reference=T(f"smoke.reference.{reference_name}"), prompt=bad.index + 1,
                  position=j + 1, expected=exp, got=got)
        observed = f"prompt {bad.index + 1}: {bad.got}"
    else:
        title = T("smoke.output.logprobs", reference=T(f"smoke.reference.{reference_name}"), prompt=bad.index + 1,
                  diff=f"{bad.max_logprob_diff:.3f}", tol=f"{golden.LOGPROB_TOL:g}")
        observed = f"max logprob difference {bad.max_logprob_diff:.3f}"
    return StageResult(name, FAIL, seconds, metrics, title, hint=T("smoke.hint.garbled"), observed=observed,
                       evidence=[f"expected {bad.expected}", f"got      {bad.got}"])


# ---------------------------------------------------------------------------------------------
# endpoint


def endpoint_result(seconds: float, figures: Dict[str, Any], slo_checks: List[Any],
                    climbing: List[Any]) -> StageResult:
    metrics = dict(figures)
    if slo_checks:
        metrics["slo"] = [c.to_json() for c in slo_checks]
    if figures.get("failed"):
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(figures["errors"].items()))
        first = next(iter(figures["first_errors"].values()), "")
        return StageResult("endpoint", FAIL, seconds, metrics,
                           T("smoke.endpoint.errors", failed=figures["failed"], total=figures["requests"], kinds=kinds,
                             first=first), hint=T("smoke.hint.endpoint"), observed=kinds)
    missed = [c for c in slo_checks if not c.ok]
    if missed:
        text = "; ".join(f"{c.objective.label()} {_ms(c.measured_ms)} > {_ms(c.objective.limit_ms)}" for c in missed)
        return StageResult("endpoint", FAIL, seconds, metrics, T("smoke.endpoint.slo", missed=text),
                           hint=T("smoke.hint.slo"), observed=text)
    ok_title = T("smoke.endpoint.ok", completed=figures["completed"], model=figures.get("model", "?"),
                 ttft=_ms(figures["ttft_ms"]["p50"]), tpot=_ms(figures["tpot_ms"]["p50"]),
                 otps=figures.get("output_throughput"))
    if climbing:
        names = ", ".join(f"{t.name} {t.first:g} -> {t.last:g} MiB" for t in climbing)
        return StageResult("endpoint", WARN, seconds, metrics, T("smoke.endpoint.climb", series=names),
                           hint=T("smoke.hint.climb"), observed=names)
    return StageResult("endpoint", OK, seconds, metrics, ok_title)


def endpoint_unreachable(seconds: float, url: str, error: str) -> StageResult:
    return StageResult("endpoint", FAIL, seconds, {"url": url, "error": error},
                       T("smoke.endpoint.unreachable", url=url, error=error), hint=T("smoke.hint.endpoint"),
                       observed=error)


def endpoint_warmup_failed(seconds: float, figures: Dict[str, Any]) -> StageResult:
    first = next(iter(figures["first_errors"].values()), "")
    return StageResult("endpoint", FAIL, seconds, figures, T("smoke.endpoint.warmup", first=first),
                       hint=T("smoke.hint.endpoint"), observed=first)


def _ms(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.0f} ms" if value >= 10 else f"{value:.1f} ms"


# ---------------------------------------------------------------------------------------------
# collective


def collective_result(seconds: float, device: str, ranks: List[RankState], rows: List[Dict[str, Any]],
                      timeout: float, logs: Dict[int, List[str]], explain: Explain, sizes: int) -> StageResult:
    n = len(ranks)
    metrics: Dict[str, Any] = {"ranks": n, "device": device, "backend": "hccl" if device == "npu" else "gloo",
                               "sizes": rows,
                               "busbw_max_gbps": max((r["busbw_gbps"] for r in rows), default=None)}
    wrong = [r for r in rows if r["wrong"]]
    finished = all(r.exit_code == 0 and not r.killed for r in ranks) and len(rows) == sizes
    if finished and not wrong:
        best = max(rows, key=lambda r: r["busbw_gbps"]) if rows else None
        return StageResult("collective", OK, seconds, metrics,
                           T("smoke.collective.ok", n=n, device=device,
                             busbw=f"{best['busbw_gbps']:.2f}" if best else "-",
                             size=human_bytes(best["bytes"]) if best else "-"))
    if wrong:
        return StageResult("collective", FAIL, seconds, metrics,
                           T("smoke.collective.wrong", size=human_bytes(wrong[0]["bytes"]), count=wrong[0]["wrong"]),
                           hint=T("smoke.hint.collective"), observed=f"{wrong[0]['wrong']} wrong elements")
    named = culprits(ranks)
    metrics["culprits"] = [{"rank": r.rank, "device": r.device, "where": r.where(), "error": r.error,
                            "hung": r.killed} for r in named]
    who = "; ".join(_who(r) for r in named)
    text = "\n".join(line for r in named for line in logs.get(r.rank, []))
    errors = "\n".join(r.error or "" for r in named)
    if any(r.killed for r in named):
        title = T("smoke.collective.hung", seconds=f"{timeout:g}", who=who)
    else:
        title = T("smoke.collective.failed", who=who)
    return StageResult("collective", FAIL, seconds, metrics, title,
                       hint=explain(errors + "\n" + text) or T("smoke.hint.collective"), observed=who,
                       evidence=[line for r in named for line in logs.get(r.rank, [])[-3:]])


def _who(r: RankState) -> str:
    state = "hung in" if r.killed else "failed in"
    tail = f": {r.error}" if r.error and not r.killed else ""
    return f"rank {r.rank} (device {r.device}) {state} {r.where()}{tail}"


def human_bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} B"
