"""What to change, for the release the profile was taken on, each with its public source; and
what the profile cannot tell with how to collect what is missing.

The release is the vllm-ascend version the user names (``--release``), else the releases the
profile's torch_npu version belongs to (the matrix); advice whose settings differ across those
releases says for which releases each form applies.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from doctor.findings import Command
from doctor.i18n import T, Text
from doctor.profile.analyse import RankFigures
from doctor.profile.identify import Identity
from doctor.profile.verdict import COMMUNICATION, DEVICE, HOST, Verdict
from doctor.versions import pep440

VA = "https://github.com/vllm-project/vllm-ascend/blob"
SRC_GRAPH = f"{VA}/v0.12.0rc1/docs/source/user_guide/release_notes.md (FULL_DECODE_ONLY, added in v0.11.0rc1); " \
            "https://github.com/vllm-project/vllm-ascend/issues/9404"
SRC_TORCHAIR = f"{VA}/v0.9.1/docs/source/user_guide/feature_guide/graph_mode.md"
SRC_GRAPH_OLD = f"{VA}/v0.9.1/docs/source/user_guide/release_notes.md (graph mode on by default with V1 from v0.9.0rc1)"
SRC_TASK_QUEUE = "https://github.com/Ascend/pytorch/blob/master/docs/zh/api/environment_variable/op_execution/" \
                 f"TASK_QUEUE_ENABLE.md; {VA}/v0.25.1rc1/docs/source/developer_guide/performance_and_debug/" \
                 "optimization_and_tuning.md"
SRC_CPU_BINDING = f"{VA}/v0.25.1rc1/docs/source/user_guide/feature_guide/cpu_binding.md; " \
                  "https://github.com/vllm-project/vllm-ascend/issues/6966"
SRC_AFFINITY = f"{VA}/v0.9.1/docs/source/developer_guide/performance/optimization_and_tuning.md (CPU_AFFINITY_CONF)"
SRC_BATCH = "https://github.com/Ascend/msprof/blob/master/docs/zh/best_practices/dispatch_small_batch_performance.md"
MSTT = "https://gitcode.com/Ascend/mstt/blob/master/profiler/msprof_analyze/advisor"
SRC_SYNC = f"https://github.com/Ascend/msprof/blob/master/docs/zh/best_practices/sync_api_frequent_call.md; " \
           f"{MSTT}/rules/en/synchronize.yaml"
SRC_COMPILE = f"{MSTT}/README.md (Operator Dispatch: 20 aclopCompileAndExecute calls or more)"
SRC_ALLOC = f"{VA}/v0.14.0rc1/docs/source/faqs.md (expandable_segments); {MSTT}/rules/en/memory.yaml " \
            "(allocation calls of 10 ms or more)"
SRC_BLOCK = f"{VA}/v0.13.0/vllm_ascend/utils.py (refresh_block_size: 128 with prefix caching or chunked prefill)"
SRC_KV_INT8 = f"{VA}/v0.18.0rc1/docs/source/user_guide/release_notes.md (C8 INT8 KV cache)"
SRC_AIV = f"{VA}/v0.25.1rc1/docs/source/developer_guide/performance_and_debug/optimization_and_tuning.md " \
          "(HCCL_OP_EXPANSION_MODE=AIV)"
SRC_FLASHCOMM = f"{VA}/v0.22.1rc1/docs/source/faqs.md (FlashComm1 for TP >= 2 at high concurrency)"
SRC_TP = "https://docs.vllm.ai/en/latest/serving/parallelism_scaling.html"
SRC_CHUNKED = "https://docs.vllm.ai/en/latest/configuration/optimization.html (chunked prefill, max_num_batched_tokens)"
SRC_SLOW_RANK = f"{MSTT}/analyzer/cluster/slow_rank_analyzer.py ((max - min) / mean > 5 %)"
SRC_LEVEL = "https://github.com/Ascend/pytorch/blob/master/docs/en/developer_notes/ascend_pytorch_profiler_user_guide.md"
SRC_AIC = f"{VA}/v0.19.1rc1/vllm_ascend/worker/worker.py (aic_metrics PipeUtilization from v0.19.1rc1, PR #7728)"
SRC_SCOPES = "https://github.com/vllm-project/vllm/blob/main/vllm/v1/utils.py (record_function_or_nullcontext)"
SRC_PROFILER_CONFIG = f"{VA}/v0.25.1rc1/docs/source/developer_guide/performance_and_debug/service_profiling_guide.md"

FULL_DECODE_ONLY = "--compilation-config '{\"cudagraph_mode\":\"FULL_DECODE_ONLY\"}'"
TORCHAIR = "--additional-config '{\"torchair_graph_config\":{\"enabled\":true}}'"
CPU_BINDING = "--additional-config '{\"enable_cpu_binding\":true}'"


@dataclass(frozen=True)
class Advice:
    id: str
    text: Text
    source: str
    # a `vllm serve` option or an environment variable to set, always with its value (an option
    # whose value the profile cannot tell is named in the text instead: no bare `set: --opt`)
    setting: Optional[str] = None
    releases: Optional[str] = None  # the releases this form applies to
    commands: Tuple[Command, ...] = ()

    def to_json(self, lang: str) -> Dict[str, Any]:
        out: Dict[str, Any] = {"id": self.id, "text": self.text.text(lang), "source": self.source}
        if self.setting is not None:
            out["setting"] = self.setting
        if self.releases is not None:
            out["releases"] = self.releases
        if self.commands:
            out["commands"] = [c.to_json(lang) for c in self.commands]
        return out


@dataclass(frozen=True)
class Missing:
    id: str
    text: Text
    collect: Text
    source: str

    def to_json(self, lang: str) -> Dict[str, Any]:
        return {"id": self.id, "text": self.text.text(lang), "collect": self.collect.text(lang), "source": self.source}


class Releases:
    """The vllm-ascend releases the profile may come from: a question is answered only when
    they all agree."""

    def __init__(self, versions: Sequence[str]):
        self.versions = [v for v in (pep440(x) for x in versions) if v is not None]

    def at_least(self, version: str) -> Optional[bool]:
        v = pep440(version)
        if not self.versions or v is None:
            return None
        answers = {x >= v for x in self.versions}
        return answers.pop() if len(answers) == 1 else None

    def within(self, lo: str, hi: str) -> Optional[bool]:
        """Every release in [lo, hi) (True), none (False), or unknown/mixed (None)."""
        a, b = pep440(lo), pep440(hi)
        if not self.versions or a is None or b is None:
            return None
        answers = {a <= x < b for x in self.versions}
        return answers.pop() if len(answers) == 1 else None

    def label(self) -> Optional[str]:
        if not self.versions:
            return None
        lo, hi = min(self.versions), max(self.versions)
        return f"v{lo}" if lo == hi else f"v{lo} .. v{hi}"


def _graph(rel: Releases) -> List[Advice]:
    new = rel.at_least("0.11.0rc1")
    old = rel.at_least("0.9.0rc1")
    out: List[Advice] = []
    if new is not False:
        out.append(Advice("graph_mode", T("profile.advice.graph_full_decode"), SRC_GRAPH, FULL_DECODE_ONLY,
                          None if new else "v0.11.0rc1+"))
    if new is not True and old is not False:
        out.append(Advice("graph_mode_torchair", T("profile.advice.graph_torchair"), SRC_TORCHAIR, TORCHAIR,
                          None if (new is False and old) else "v0.9.0rc1 .. v0.11.x"))
    if old is False:
        out.append(Advice("graph_mode_upgrade", T("profile.advice.graph_upgrade"), SRC_GRAPH_OLD))
    return out


def _cpu_binding(rel: Releases) -> Advice:
    """enable_cpu_binding exists in v0.9.1rc2..v0.9.1 and from v0.11.0rc1 (ascend_config.py at those
    tags), opt-in until it became the default on ARM in v0.15.0rc1."""
    if rel.at_least("0.15.0rc1"):
        return Advice("cpu_binding", T("profile.advice.cpu_binding_default"), SRC_CPU_BINDING)
    new, old = rel.at_least("0.11.0rc1"), rel.within("0.9.1rc2", "0.9.2rc1")
    if new or old:
        return Advice("cpu_binding", T("profile.advice.cpu_binding_enable"), SRC_CPU_BINDING, CPU_BINDING)
    if new is False and old is False:
        return Advice("cpu_binding", T("profile.advice.cpu_affinity"), SRC_AFFINITY, "CPU_AFFINITY_CONF=1")
    return Advice("cpu_binding", T("profile.advice.cpu_binding_unknown"), SRC_CPU_BINDING, CPU_BINDING,
                  "v0.9.1rc2 .. v0.9.1, v0.11.0rc1 .. v0.14.x (on by default on ARM from v0.15.0rc1)")


def advise(f: RankFigures, verdict: Verdict, rel: Releases, slow_rank: Optional[str] = None) -> List[Advice]:
    out: List[Advice] = []
    s = verdict.shares
    t = f.totals
    if not s:
        return out
    host = verdict.bound == HOST or s.get("host_wait", 0.0) >= 0.15
    if host:
        out += _graph(rel)
        if f.task_queue is False:
            out.append(Advice("task_queue", T("profile.advice.task_queue_off"), SRC_TASK_QUEUE, "TASK_QUEUE_ENABLE=1"))
        elif f.task_queue:
            out.append(Advice("task_queue", T("profile.advice.task_queue_two"), SRC_TASK_QUEUE, "TASK_QUEUE_ENABLE=2"))
        out.append(_cpu_binding(rel))
        if s.get("device_busy", 1.0) < 0.5:
            out.append(Advice("max_num_seqs", T("profile.advice.batch_more"), SRC_BATCH))
    if t.idle.total > 0 and t.idle.sync >= 0.3 * t.idle.total and t.idle.sync >= 0.05 * t.wall:
        out.append(Advice("sync", T("profile.advice.sync", calls=t.sync_calls), SRC_SYNC))
    if t.kernels and t.sync_calls >= 0.5 * t.kernels:
        out.append(Advice("launch_blocking", T("profile.advice.launch_blocking"), SRC_SYNC, "ASCEND_LAUNCH_BLOCKING=0"))
    if t.compile_calls >= 20:
        out.append(Advice("jit_compile", T("profile.advice.jit_compile", calls=t.compile_calls), SRC_COMPILE))
    later = [x for x in f.steps[1:] if x.alloc_calls]
    if t.alloc_us >= 10_000 or len(later) >= 2:
        out.append(Advice("allocation", T("profile.advice.allocation", calls=t.alloc_calls,
                                          ms=round(t.alloc_us / 1000, 1), steps=len(later)),
                          SRC_ALLOC, "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True"))
    if verdict.bound == DEVICE and verdict.device_kind == "memory":
        out.append(Advice("block_size", T("profile.advice.block_size"), SRC_BLOCK, "--block-size 128"))
        out.append(Advice("kv_int8", T("profile.advice.kv_int8"), SRC_KV_INT8, None,
                          None if rel.at_least("0.18.0rc1") else "v0.18.0rc1+"))
        out.append(Advice("max_num_seqs", T("profile.advice.memory_batch"), SRC_BATCH))
    elif verdict.bound == DEVICE:
        out.append(Advice("device_compute", T("profile.advice.device_compute"), SRC_TP))
    if verdict.bound == COMMUNICATION or s.get("communication_exposed", 0.0) >= 0.1:
        out.append(Advice("hccl_aiv", T("profile.advice.hccl_aiv"), SRC_AIV, "HCCL_OP_EXPANSION_MODE=AIV"))
        if rel.at_least("0.11.0rc1") is not False:
            out.append(Advice("flashcomm", T("profile.advice.flashcomm"), SRC_FLASHCOMM, "VLLM_ASCEND_ENABLE_FLASHCOMM1=1",
                              None if rel.at_least("0.11.0rc1") else "v0.11.0rc1+"))
        out.append(Advice("tensor_parallel", T("profile.advice.tensor_parallel"), SRC_TP))
    if slow_rank is not None:
        out.append(Advice("slow_rank", T("profile.advice.slow_rank", rank=slow_rank), SRC_SLOW_RANK))
    if any(j.reason == "prefill" for j in f.jitter):
        out.append(Advice("chunked_prefill", T("profile.advice.chunked_prefill"), SRC_CHUNKED,
                          "--enable-chunked-prefill"))
    seen: set = set()
    unique = []
    for a in out:
        if (a.id, a.setting) not in seen:
            seen.add((a.id, a.setting))
            unique.append(a)
    return unique


def missing(f: RankFigures, ident: Identity, ranks: int, tp_seen: bool) -> List[Missing]:
    """What this profile cannot tell, and how to collect it."""
    rank = f.rank
    out: List[Missing] = []
    if not len(rank):
        out.append(Missing("device", T("profile.missing.device"), T("profile.collect.npu"), SRC_LEVEL))
        return out
    if rank.has_trace and not rank.has_flows:
        out.append(Missing("idle_cause", T("profile.missing.idle_cause"), T("profile.collect.level1"), SRC_LEVEL))
    elif not rank.has_trace:
        out.append(Missing("idle_cause", T("profile.missing.no_trace"), T("profile.collect.trace"), SRC_LEVEL))
    if not f.device_kind_measured:
        out.append(Missing("pmu", T("profile.missing.pmu"), T("profile.collect.aic_metrics"), SRC_AIC))
    if ident.profile_memory is not True and rank.has_trace:
        out.append(Missing("memory", T("profile.missing.memory"), T("profile.collect.profile_memory"),
                           SRC_PROFILER_CONFIG))
    if f.segmentation.method in ("anchor", "window"):
        out.append(Missing("steps", T("profile.missing.steps", method=f.segmentation.method),
                           T("profile.collect.scopes"), SRC_SCOPES))
    if tp_seen and ranks == 1:
        out.append(Missing("ranks", T("profile.missing.ranks"), T("profile.collect.ranks"), SRC_PROFILER_CONFIG))
    if rank.table is None and rank.has_trace:
        out.append(Missing("kernel_table", T("profile.missing.kernel_table"), T("profile.collect.kernel_table"),
                           SRC_LEVEL))
    out.append(Missing("affinity", T("profile.missing.affinity"), T("profile.collect.affinity"), SRC_LEVEL))
    return out
