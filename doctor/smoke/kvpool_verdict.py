"""Did each tier of the KV pool deliver? (pure) Seed 003's three sends, judged by their TTFT and
by what the servers and the Mooncake master counted while they ran.

- TTFT1, dataset A to instance 1: cold (nothing of A is cached anywhere);
- TTFT2, A again to instance 1 after dataset B pushed it out of HBM: a local DRAM hit, served by
  the pool (vllm counts it as an external prefix cache hit, the master as Gets);
- TTFT3, A to instance 2 on another node: a cross-node hit through the pool.

A tier delivered when its TTFT p50 is clearly below the cold one (at most ``HIT_RATIO`` of it)
and the counters agree (at least ``HIT_SHARE`` of the prompt tokens were pool hits). When they
disagree the verdict says which way, since each disagreement has its own causes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from doctor.findings import FAIL, OK, WARN
from doctor.i18n import T, Text, join
from doctor.smoke.kvpool_calc import PoolConfig
from doctor.smoke.kvpool_report import inert
from doctor.smoke.kvpool_sweep import Agreement, Knee
from doctor.smoke.result import StageResult
from doctor.smoke.slo import Check

HIT_RATIO = 0.8    # a hit's TTFT p50 is at most 80 % of the cold one (seed 003: 32 % and 41 %)
HIT_SHARE = 0.5    # at least half of the prompt tokens came from the cache a counter names


@dataclass
class Phase:
    """One send of a data set to one instance, with what was counted meanwhile."""

    name: str                                  # cold, evict, local, remote
    url: str
    requests: int
    completed: int
    failed: int
    ttft_ms: Dict[str, Optional[float]]        # mean, p50, p90, p99
    prompt_tokens: int                         # from the usage reports
    counters: Optional[Dict[str, float]] = None   # the instance's counter growth (kvpool_calc.COUNTER_NAMES)
    master: Optional[Dict[str, Any]] = None       # the master's growth (keys, puts, gets)
    errors: Dict[str, int] = field(default_factory=dict)
    first_errors: Dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def share(self, key: str) -> Optional[float]:
        if self.counters is None or key not in self.counters or self.prompt_tokens <= 0:
            return None
        return round(max(0.0, self.counters[key]) / self.prompt_tokens, 3)

    def to_json(self) -> Dict[str, Any]:
        return {"url": self.url, "requests": self.requests, "completed": self.completed, "failed": self.failed,
                "prompt_tokens": self.prompt_tokens, "ttft_ms": self.ttft_ms, "counters": self.counters,
                "master": self.master, "hbm_hit_share": self.share("hbm_hits"),
                "pool_hit_share": self.share("pool_hits"), "errors": self.errors, "seconds": round(self.seconds, 3)}


@dataclass(frozen=True)
class Tier:
    name: str                      # local, remote
    state: str                     # delivered, missed, not_faster, hbm, unconfirmed, contradicts, not_measured
    ratio: Optional[float] = None  # hit TTFT p50 / cold TTFT p50
    pool_share: Optional[float] = None
    hbm_share: Optional[float] = None
    confirmed_by: str = ""         # "vllm counters", "master Gets", "" (TTFT only)

    @property
    def delivered(self) -> bool:
        return self.state == "delivered"

    def to_json(self) -> Dict[str, Any]:
        return {"state": self.state, "ttft_ratio": self.ratio, "pool_hit_share": self.pool_share,
                "hbm_hit_share": self.hbm_share, "confirmed_by": self.confirmed_by}


def _p50(phase: Optional[Phase]) -> Optional[float]:
    return phase.ttft_ms.get("p50") if phase else None


def judge_tier(name: str, cold: Phase, hit: Optional[Phase]) -> Tier:
    if hit is None:
        return Tier(name, "not_measured")
    c, h = _p50(cold), _p50(hit)
    ratio = round(h / c, 3) if c and h is not None else None
    faster = ratio is not None and ratio <= HIT_RATIO
    pool, hbm = hit.share("pool_hits"), hit.share("hbm_hits")
    gets = (hit.master or {}).get("gets")
    if pool is not None:  # vllm >= 0.11.1 counts the connector's hits
        if pool >= HIT_SHARE:
            return Tier(name, "delivered" if faster else "not_faster", ratio, pool, hbm, "vllm counters")
        if hbm is not None and hbm >= HIT_SHARE:
            return Tier(name, "hbm", ratio, pool, hbm, "vllm counters")
        return Tier(name, "contradicts" if faster else "missed", ratio, pool, hbm, "vllm counters")
    if hbm is not None and hbm >= HIT_SHARE:
        return Tier(name, "hbm", ratio, pool, hbm, "vllm counters")
    if not faster:
        return Tier(name, "missed", ratio, pool, hbm)
    if gets is None:
        return Tier(name, "unconfirmed", ratio, pool, hbm)
    return Tier(name, "delivered" if gets > 0 else "contradicts", ratio, pool, hbm, "master Gets")


@dataclass
class PoolFacts:
    """What the configuration says, for the causes."""

    config: Optional[PoolConfig] = None
    master_url: Optional[str] = None
    master_error: Optional[str] = None     # the master's metrics could not be read
    bytes_per_token: Optional[int] = None
    pool_bytes: Optional[int] = None
    master_capacity: Optional[float] = None
    config_problems: List[Text] = field(default_factory=list)  # the Mooncake config check's failures and warnings


def _gib(n: float) -> str:
    from doctor.parse.sizes import human

    return human(int(n))  # binary units, as the master prints them (98.23 GB)


def _config_check(facts: PoolFacts) -> List[Text]:
    if not facts.config_problems:
        return []
    return [T("smoke.kvpool.cause.config_check", path=inert(facts.config.path if facts.config else "?"),
              problems=join(facts.config_problems, "sep.semi"))]


def local_causes(cold: Phase, evict: Optional[Phase], facts: PoolFacts) -> List[Text]:
    out: List[Text] = _config_check(facts)
    puts = (cold.master or {}).get("puts")
    if facts.master_url and facts.master_error is None and puts is not None and puts <= 0:
        out.append(T("smoke.kvpool.cause.no_put", url=inert(facts.master_url)))
    if facts.master_error:
        out.append(T("smoke.kvpool.cause.master", url=inert(facts.master_url or "?"), error=inert(facts.master_error)))
    if facts.pool_bytes and facts.bytes_per_token:
        need = cold.prompt_tokens + (evict.prompt_tokens if evict else 0)
        holds = facts.pool_bytes / facts.bytes_per_token
        if holds < need:
            out.append(T("smoke.kvpool.cause.pool_small", pool=_gib(facts.pool_bytes), holds=f"{holds:,.0f}",
                         need=f"{need:,}"))
    out.append(T("smoke.kvpool.cause.local"))
    return out


def remote_causes(local: Optional[Phase], remote: Phase, facts: PoolFacts) -> List[Text]:
    out: List[Text] = _config_check(facts)
    cfg = facts.config
    if cfg and cfg.protocol and cfg.protocol.lower() != "ascend":
        out.append(T("smoke.kvpool.cause.tcp", protocol=inert(cfg.protocol), path=inert(cfg.path)))
    if cfg and cfg.use_ascend_direct is False:
        out.append(T("smoke.kvpool.cause.direct", path=inert(cfg.path)))
    if cfg and cfg.metadata_server and cfg.metadata_server != "P2PHANDSHAKE":
        out.append(T("smoke.kvpool.cause.metadata", server=inert(cfg.metadata_server)))
    gets = (remote.master or {}).get("gets")
    local_gets = ((local.master if local else None) or {}).get("gets")
    if gets is not None and gets <= 0 and (local_gets or 0) > 0:
        out.append(T("smoke.kvpool.cause.no_get"))
    out.append(T("smoke.kvpool.cause.remote"))
    return out


def _pct(ratio: Optional[float]) -> str:
    return "-" if ratio is None else f"{(ratio - 1) * 100:+.0f}%"


def _ms(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.0f} ms" if v >= 10 else f"{v:.1f} ms"


@dataclass
class Judgement:
    local: Tier
    remote: Tier
    knee_state: Optional[str] = None


def judge(phases: Dict[str, Phase], facts: PoolFacts, slo: List[Tuple[str, Check]], seconds: float,
          metrics: Dict[str, Any], knee: Optional[Knee] = None, agreement: Optional[Agreement] = None,
          timed_out: Optional[str] = None) -> StageResult:
    """The stage's result: the first problem that decides it is the title, its causes the hint."""
    cold = phases["cold"]
    if timed_out:
        return StageResult("kvpool", FAIL, seconds, metrics, T("smoke.kvpool.timeout", phase=T(f"smoke.kvpool.phase.{timed_out}")),
                           hint=T("smoke.kvpool.hint.timeout"), observed="timeout")
    for p in phases.values():
        if p.failed:
            kinds = ", ".join(f"{k} {v}" for k, v in sorted(p.errors.items()))
            first = inert(next(iter(p.first_errors.values()), ""))
            return StageResult("kvpool", FAIL, seconds, metrics,
                               T("smoke.kvpool.errors", phase=T(f"smoke.kvpool.phase.{p.name}"), failed=p.failed,
                                 total=p.requests, kinds=kinds, first=first),
                               hint=T("smoke.hint.endpoint"), observed=kinds)
    local = judge_tier("local", cold, phases.get("local"))
    remote = judge_tier("remote", cold, phases.get("remote"))
    metrics["tiers"] = {"local": local.to_json(), "remote": remote.to_json()}
    figures = dict(cold=_ms(_p50(cold)), local=_ms(_p50(phases.get("local"))), remote=_ms(_p50(phases.get("remote"))),
                   local_gain=_pct(local.ratio), remote_gain=_pct(remote.ratio))
    observed = f"TTFT p50 cold {figures['cold']}, local {figures['local']}, remote {figures['remote']}"
    evidence = [f"{name}: {_phase_line(p)}" for name, p in phases.items()]
    if knee is not None and agreement is not None:
        pred = (metrics.get("sweep") or {}).get("prediction") or {}
        by = {"counters": "the server's hit counters", "ttft": "TTFT alone", "both": "hit counters and TTFT"}
        evidence.append(f"sweep: knee {_knee_text(knee)} documents (told by {by.get(knee.by, knee.by)}), predicted "
                        f"{pred.get('docs_low', 0):.1f}-{pred.get('docs_high', 0):.1f}: {agreement.state}")
    if local.state == "missed":
        return StageResult("kvpool", FAIL, seconds, metrics, T("smoke.kvpool.no_local", **figures),
                           hint=_causes(local_causes(cold, phases.get("evict"), facts)), observed=observed,
                           evidence=evidence)
    if remote.state == "missed":
        return StageResult("kvpool", FAIL, seconds, metrics, T("smoke.kvpool.no_remote", **figures),
                           hint=_causes(remote_causes(phases.get("local"), phases["remote"], facts)),
                           observed=observed, evidence=evidence)
    missed = [(name, c) for name, c in slo if not c.ok]
    if missed:
        text = "; ".join(f"{name}: {c.objective.label()} {_ms(c.measured_ms)} > {_ms(c.objective.limit_ms)}"
                         for name, c in missed)
        return StageResult("kvpool", FAIL, seconds, metrics, T("smoke.kvpool.slo", missed=text), hint=T("smoke.hint.slo"),
                           observed=text, evidence=evidence)
    for tier in (local, remote):
        if tier.state in ("not_faster", "hbm", "unconfirmed", "contradicts"):
            return StageResult("kvpool", WARN, seconds, metrics,
                               T(f"smoke.kvpool.{tier.state}", tier=T(f"smoke.kvpool.tier.{tier.name}"), **figures,
                                 pool=_share(tier.pool_share), hbm=_share(tier.hbm_share)),
                               hint=_warn_hint(tier, facts), observed=observed, evidence=evidence)
    if agreement is not None and agreement.state in ("below", "above") and knee is not None:
        pred = metrics.get("sweep", {}).get("prediction") or {}
        return StageResult("kvpool", WARN, seconds, metrics,
                           T(f"smoke.kvpool.knee_{agreement.state}", measured=_knee_text(knee),
                             how=T("smoke.kvpool.knee_by.ttft" if knee.by == "ttft" else "smoke.kvpool.knee_by.counters"),
                             low=f"{pred.get('docs_low', 0):.0f}", high=f"{pred.get('docs_high', 0):.0f}"),
                           hint=_causes(_knee_causes(agreement.state, facts)), observed=_knee_text(knee),
                           evidence=evidence)
    key = "smoke.kvpool.ok" if remote.state == "delivered" else "smoke.kvpool.ok_local"
    return StageResult("kvpool", OK, seconds, metrics, T(key, **figures), evidence=evidence)


def _causes(items: List[Text]) -> Text:
    return T("smoke.kvpool.hint.causes", causes=join(items, "sep.semi"))


def _share(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.0%}"


def _phase_line(p: Phase) -> str:
    c = p.counters or {}
    parts = [f"{p.completed}/{p.requests} requests", f"{p.prompt_tokens:,} prompt tokens",
             f"TTFT p50 {_ms(p.ttft_ms.get('p50'))}"]
    if "hbm_hits" in c:
        parts.append(f"HBM hits {c['hbm_hits']:,.0f}")
    if "pool_hits" in c:
        parts.append(f"pool hits {c['pool_hits']:,.0f}")
    if p.master:
        parts.append("master " + ", ".join(f"{k} {v:+,.0f}" for k, v in p.master.items()
                                           if v is not None and k != "allocated"))
    return ", ".join(parts)


def _warn_hint(tier: Tier, facts: PoolFacts) -> Text:
    if tier.state == "not_faster":
        cfg = facts.config
        if cfg and cfg.protocol and cfg.protocol.lower() != "ascend":
            return _causes([T("smoke.kvpool.cause.tcp", protocol=inert(cfg.protocol), path=inert(cfg.path)),
                            T("smoke.kvpool.cause.slow")])
        return T("smoke.kvpool.cause.slow")
    if tier.state == "hbm":
        return T(f"smoke.kvpool.cause.hbm_{tier.name}")
    return T("smoke.kvpool.cause.unconfirmed")


def _knee_text(knee: Knee) -> str:
    if knee.last_fit is not None and knee.first_miss is not None:
        return f"{knee.last_fit}-{knee.first_miss}"
    if knee.first_miss is not None:
        return f"<{knee.first_miss}"
    return f">{knee.last_fit}"


def _knee_causes(state: str, facts: PoolFacts) -> List[Text]:
    out: List[Text] = []
    if state == "below" and facts.pool_bytes and facts.master_capacity is not None \
            and facts.master_capacity < facts.pool_bytes * 0.99:
        out.append(T("smoke.kvpool.cause.mounted", master=_gib(facts.master_capacity), configured=_gib(facts.pool_bytes)))
    out.append(T(f"smoke.kvpool.cause.knee_{state}"))
    return out
