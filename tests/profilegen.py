"""Generated serving profiles: the decode-loop shapes the public fixtures lack (many steps, a
prefill joining, HCCL in tensor parallel, malloc in the loop, idle between requests, a slow rank),
written with the exact headers and event fields facts/profiling.md records for each torch_npu /
CANN release (sources: Ascend/pytorch prof_view/_csv_headers.py, _kernel_view_parser.py,
_trace_step_time_parser.py; Ascend/msprof op_summary_assembler.cpp; the real MSTT trace_view.json).

A small simulation: the host launches kernels one after another (each launch costs ``launch_us``
of host time and goes through the task queue: Enqueue on the main thread, Dequeue@ and the
AscendCL call on the queue thread, a HostToDevice flow to the kernel); the device runs each kernel
when it is launched and the previous one has finished. A step ends with a stream sync (vLLM
reads the sampled tokens) and some host work. The figures of a generated profile follow from its
parameters, and the tests compute them again from the written events.
"""
from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

BASE_US = 1735689600_000000  # 2025-01-01, an absolute µs origin like a real capture's

# kernel_details.csv base headers by torch_npu release (facts/profiling.md "Base header evolution")
KERNEL_BASE = {
    "5.0.rc3": "Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim",
    "7.3.0": "Device_id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim",
    "26.0.0": "Device_id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Num",
}
# Level1 keeps every op_summary column, renamed (real headers: the MSTT fixtures; 7.x/26.x by the rename map)
KERNEL_FULL = {
    "5.0.rc3": "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),"
               "Block Dim,Mix Block Dim,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
               "Output Formats,Context ID",
    "7.3.0": "Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),"
             "Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,"
             "Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID",
    "26.0.0": "Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),"
              "Duration(us),Wait Time(us),Block Num,Mix Block Num,HF32 Eligible,Input Shapes,Input Data Types,"
              "Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID",
}
OP_SUMMARY = ("Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
              "Task Duration(us),Task Wait Time(us),Block Num,Mix Block Num,HF32 Eligible,Input Shapes,Input Data Types,"
              "Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID")
PIPE_UTILIZATION = ("aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),aic_scalar_ratio,"
                    "aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,aic_fixpipe_time(us),"
                    "aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,"
                    "aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),"
                    "aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)")
STEP_TRACE = {
    "5.0.rc3": "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
               "Communication(Not Overlapped and Exclude Receive)",
    "6.0.rc2": "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
               "Communication(Not Overlapped and Exclude Receive),Preparing",
    "7.3.0": "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
             "Communication(Not Overlapped and Exclude Receive),Preparing",
    "26.0.0": "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
              "Communication(Not Overlapped and Exclude Receive),Preparing",
}
CANN_OF = {"5.0.rc3": "7.0.RC1", "6.0.rc2": "8.0.RC2", "7.3.0": "8.5.0", "26.0.0": "9.0.0"}
TORCH_NPU_OF = {"5.0.rc3": "2.1.0.post3", "6.0.rc2": "2.1.0.post6", "7.3.0": "2.7.1.post2", "26.0.0": "2.8.0"}
VERSIONS = ("5.0.rc3", "7.3.0", "26.0.0")

MAIN, QUEUE = 4101, 4102  # host threads
PY_PID, CANN_PID, HW_PID, OVERLAP_PID, COMM_PID = 4100, 41000002, 900, 4100000011, 4100000012
STREAM, COMM_STREAM = 2, 7


@dataclass
class Decode:
    steps: int = 30
    layers: int = 6
    batch: int = 16
    kernel_us: float = 12.0  # a decode kernel
    launch_us: float = 25.0  # host time per launch (framework op + aclnn call)
    step_host_us: float = 1500.0  # host work before the first launch of a step (schedule, prepare input)
    post_us: float = 300.0  # host work after the end-of-step sync (sampling, detokenize)
    prefill_steps: Tuple[int, ...] = ()
    prefill_tokens: int = 512
    prefill_factor: float = 8.0  # how much longer a prefill step's matmuls and attention run
    tp: int = 1
    comm_us: float = 0.0  # one allreduce after attention and one after the MLP, per layer
    malloc_steps: Tuple[int, ...] = ()
    malloc_us: float = 1200.0
    idle_before: Dict[int, float] = field(default_factory=dict)  # step -> µs the server waits for a request
    compute_scale: float = 1.0  # this rank's kernels run this much longer (a slow rank)
    wait_scale: float = 1.0  # the slowest rank's compute_scale: the others wait for it in allreduce
    scopes: str = "none"  # none | vllm | profiler_step
    pmu: Optional[str] = None  # None | PipeUtilization
    compute_bound: bool = False  # PMU ratios of a compute-bound run (else memory bound decode)
    level: str = "Level1"
    version: str = "7.3.0"
    task_queue: bool = True
    rank: int = 0


@dataclass
class Kernel:
    name: str
    type: str
    core: str
    start: float
    dur: float
    wait: float
    step: int
    shapes: str
    launch: Optional[float]
    comm: bool = False


@dataclass
class Generated:
    events: List[dict]
    kernels: List[Kernel]
    steps: List[Tuple[float, float]]  # host step windows (relative µs)
    params: Decode


def _major(p: "Decode") -> int:
    return int(p.version.split(".")[0])


def _ts(rel: float) -> str:
    """An Ascend trace timestamp: a string of µs with ns decimals."""
    whole = int(rel // 1)
    return f"{BASE_US + whole}.{int(round((rel - whole) * 1000)):03d}"


def _meta(pid: int, name: str, labels: str, threads: Sequence[Tuple[int, str]]) -> List[dict]:
    out = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}},
           {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": labels}}]
    out += [{"ph": "M", "name": "thread_name", "pid": pid, "tid": t, "args": {"name": n}} for t, n in threads]
    return out


def layer_ops(p: Decode, prefill: bool) -> List[Tuple[str, str, str, float, str, bool]]:
    """(name, type, core, duration, shapes, is_comm) of one transformer layer."""
    tokens = p.batch + (p.prefill_tokens if prefill else 0)
    f = p.prefill_factor if prefill else 1.0
    k = p.kernel_us * p.compute_scale
    h = 4096 // p.tp
    attention = ("PromptFlashAttention", "PromptFlashAttentionScore") if prefill else \
        ("IncreFlashAttention", "IncreFlashAttention")
    ops = [
        ("aclnnRmsNorm_RmsNormAiCore_RmsNorm", "RmsNorm", "AI_VECTOR_CORE", k * 0.5, f"{tokens},4096;4096", False),
        ("aclnnMatmul_MatMulCommon_MatMulV2", "MatMulV2", "AI_CORE", k * f, f"{tokens},4096;4096,{h * 3}", False),
        ("aclnnApplyRotaryPosEmb_RotaryAiCore", "ApplyRotaryPosEmb", "AI_VECTOR_CORE", k * 0.4, f"{tokens},{h}", False),
        ("aclnn" + attention[0] + "_" + attention[1], attention[1], "MIX_AIC", k * 1.5 * f, f"{tokens},{h};1024,128,{h}", False),
        ("aclnnMatmul_MatMulCommon_MatMulV2", "MatMulV2", "AI_CORE", k * f, f"{tokens},{h};{h},4096", False),
    ]
    if p.tp > 1:
        ops.append(("hcom_allReduce_", "hcom_allReduce_", "HCCL", p.comm_us, "", True))
    ops += [
        ("aclnnRmsNorm_RmsNormAiCore_RmsNorm", "RmsNorm", "AI_VECTOR_CORE", k * 0.5, f"{tokens},4096;4096", False),
        ("aclnnMatmul_MatMulCommon_MatMulV2", "MatMulV2", "AI_CORE", k * 2 * f, f"{tokens},4096;4096,{22016 // p.tp}", False),
        ("aclnnSwiGlu_SwiGluAiCore_SwiGlu", "SwiGlu", "AI_VECTOR_CORE", k * 0.6, f"{tokens},{22016 // p.tp}", False),
        ("aclnnMatmul_MatMulCommon_MatMulV2", "MatMulV2", "AI_CORE", k * 2 * f, f"{tokens},{11008 // p.tp};{11008 // p.tp},4096", False),
    ]
    if p.tp > 1:
        ops.append(("hcom_allReduce_", "hcom_allReduce_", "HCCL", p.comm_us, "", True))
    return ops


def simulate(p: Decode) -> Generated:
    ev: List[dict] = []
    level1 = p.level != "Level0"
    ev += _meta(PY_PID, "Python", "CPU", [(MAIN, f"Thread {MAIN}"), (QUEUE, f"Thread {QUEUE}")])
    ev += _meta(HW_PID, "Ascend Hardware", "NPU", [(STREAM, f"Stream {STREAM}")])
    if level1:
        ev += _meta(CANN_PID, "CANN", "CPU", [(MAIN, f"Thread {MAIN}"), (QUEUE, f"Thread {QUEUE}")])
    if p.tp > 1:
        ev += _meta(COMM_PID, "Communication", "NPU", [(0, "Group 127.0.0.1%enp61s0f0_60000_0_1 Communication"),
                                                       (1, "Plane 0")])
    kernels: List[Kernel] = []
    steps: List[Tuple[float, float]] = []
    h = 100.0  # host clock
    d = 0.0  # the device is free from
    flow = 0
    task_id = 0
    comm_n = 0

    def x(pid: int, tid: int, name: str, start: float, dur: float, cat: Optional[str] = "cpu_op",
          args: Optional[dict] = None) -> None:
        e = {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": _ts(start), "dur": round(dur, 3)}
        if cat:
            e["cat"] = cat
        if args is not None:
            e["args"] = args
        ev.append(e)

    for s in range(p.steps):
        if s in p.idle_before:
            h += p.idle_before[s]  # nothing happens: the server waits for a request
        step_start = h
        prefill = s in p.prefill_steps
        if p.scopes == "vllm":
            x(PY_PID, MAIN, "prepare input", h, p.step_host_us * 0.9, "user_annotation")
        # the host prepares the step: framework ops that launch nothing (schedule, input tensors)
        for k in range(int(p.step_host_us // 200)):
            x(PY_PID, MAIN, "aten::copy_" if k % 2 else "aten::index_select", h + 200 * k, 60.0)
        h += p.step_host_us
        if s in p.malloc_steps:
            x(CANN_PID, MAIN, "AscendCL@aclMallocMemInner", h, p.malloc_us, None,
              {"Thread Id": MAIN, "Mode": "ACL_RTS", "level": "acl", "id": "aclMallocMemInner", "item_id": "0",
               "connection_id": 0})
            h += p.malloc_us
        forward_start = h
        ops = [("aclnnEmbedding_GatherV2AiCore_GatherV2", "GatherV2", "AI_VECTOR_CORE", p.kernel_us * 0.5,
                f"{p.batch + (p.prefill_tokens if prefill else 0)};151936,4096", False)]
        for _ in range(p.layers):
            ops += layer_ops(p, prefill)
        ops.append(("aclnnArgMax_ArgMaxV2AiCore_ArgMaxV2", "ArgMaxV2", "AI_VECTOR_CORE", p.kernel_us * 0.4,
                    f"{p.batch},151936", False))
        for name, typ, core, dur, shapes, comm in ops:
            if comm:
                comm_n += 1
                # the collective starts when this rank's compute is done and ends when the slowest rank's is
                start = d
                wait = (p.wait_scale - p.compute_scale) * p.kernel_us * 6
                dur = p.comm_us + max(0.0, wait)
                opname = f"hcom_allReduce__{comm_n % 1000}_{comm_n}_1"
                x(COMM_PID, 0, opname, start, dur, None, {"connection_id": comm_n})
                x(COMM_PID, 1, "Memcpy", start + dur * 0.1, dur * 0.3, None, {"notify_id": comm_n})
                kernels.append(Kernel(opname, "hcom_allReduce_", "HCCL" if _major(p) < 7 else "COMMUNICATION",
                                      start, dur, 0.0, s, "", None, comm=True))
                d = start + dur
                continue
            # the framework op on the main thread: aten op, Enqueue into the task queue
            op_dur = p.launch_us * 0.6
            x(PY_PID, MAIN, "aten::" + typ.lower(), h, op_dur)
            dq = h + op_dur * 0.5
            if p.task_queue:
                x(PY_PID, MAIN, "Enqueue", h + op_dur * 0.4, 1.5, "enqueue", {"correlation_id": flow})
                x(PY_PID, QUEUE, "Dequeue@" + name.split("_")[0], dq, p.launch_us * 0.35, "dequeue",
                  {"correlation_id": flow})
            api_tid = QUEUE if p.task_queue else MAIN
            api_start, api_dur = dq + 0.2, p.launch_us * 0.3
            launched = api_start + api_dur - 0.5
            start = max(d, launched + 2.0)
            task_id += 1
            kernels.append(Kernel(name, typ, core, start, dur, max(0.0, start - d), s, shapes,
                                  launched if level1 else None))
            if level1:
                x(CANN_PID, api_tid, "AscendCL@" + name.split("_")[0], api_start, api_dur, None,
                  {"Thread Id": api_tid, "Mode": "ACL_OP", "level": "acl", "id": name.split("_")[0],
                   "item_id": "0", "connection_id": flow})
                fid = str((task_id << 32) | 0xFFFFFFFF)
                ev.append({"name": f"HostToDevice{fid}", "ph": "s", "cat": "HostToDevice", "id": fid, "pid": CANN_PID,
                           "tid": api_tid, "ts": _ts(launched)})
                ev.append({"name": f"HostToDevice{fid}", "ph": "f", "id": fid, "ts": _ts(start), "cat": "HostToDevice",
                           "pid": HW_PID, "tid": STREAM, "bp": "e"})
            x(HW_PID, STREAM, name, start, dur, None,
              {"Model Id": 4294967295, "Task Type": core, "Stream Id": STREAM, "Task Id": task_id, "Batch Id": 0,
               "Subtask Id": 4294967295, "connection_id": flow})
            flow += 1
            d = start + dur
            h += p.launch_us
        if p.scopes == "vllm":
            x(PY_PID, MAIN, "forward", forward_start, h - forward_start, "user_annotation")
        # the end of the step: the host waits for the sampled tokens
        sync_start = h
        h = max(h, d) + 5.0
        if level1:
            x(CANN_PID, MAIN, "AscendCL@aclrtSynchronizeStream", sync_start, h - sync_start, None,
              {"Thread Id": MAIN, "Mode": "ACL_RTS", "level": "acl", "id": "aclrtSynchronizeStream", "item_id": "0",
               "connection_id": 0})
        if p.scopes == "vllm":
            x(PY_PID, MAIN, "sample_token", h, p.post_us * 0.5, "user_annotation")
        h += p.post_us
        if p.scopes == "profiler_step":
            x(PY_PID, MAIN, f"ProfilerStep#{s + 1}", step_start, h - step_start)
        steps.append((step_start, h))
    return Generated(ev, kernels, steps, p)


# -- files -----------------------------------------------------------------------------------


def _cells(k: Kernel, p: Decode, header: List[str], task: int) -> List[str]:
    tab = "\t" if _major(p) >= 7 else ""
    start = f"{BASE_US + int(k.start)}.{int(round((k.start % 1) * 1000)):03d}{tab}"
    values = {
        "Step Id": str(k.step + 1) if p.scopes == "profiler_step" else "",
        "Device_id": str(p.rank), "Model ID": "4294967295", "Task ID": "N/A" if k.comm else str(task),
        "Stream ID": "N/A" if k.comm else str(STREAM), "Name": k.name, "Op Name": k.name, "Type": k.type,
        "OP Type": k.type, "OP State": "N/A" if k.comm else "dynamic", "Accelerator Core": k.core, "Task Type": k.core,
        "Start Time(us)": start, "Task Start Time(us)": start, "Duration(us)": f"{k.dur:.3f}",
        "Task Duration(us)": f"{k.dur:.3f}", "Wait Time(us)": f"{k.wait:.3f}", "Task Wait Time(us)": f"{k.wait:.3f}",
        "Block Dim": "24", "Block Num": "24", "Mix Block Dim": "0", "Mix Block Num": "0", "HF32 Eligible": "NO",
        "Input Shapes": f'"{k.shapes}"' if k.shapes else "N/A", "Input Data Types": "DT_BF16", "Input Formats": "ND",
        "Output Shapes": "N/A", "Output Data Types": "DT_BF16", "Output Formats": "ND", "Context ID": "N/A",
    }
    if p.pmu == "PipeUtilization":
        attention = "Attention" in k.type
        mm = k.type.startswith("MatMul")
        prefill = "Prompt" in k.type or (mm and k.shapes.split(",")[0].isdigit() and int(k.shapes.split(",")[0]) > 256)
        if p.compute_bound or prefill:
            mac, mte2, vec = (0.82, 0.35, 0.1) if mm or attention else (0.0, 0.3, 0.7)
        else:
            mac, mte2, vec = (0.25, 0.92, 0.05) if mm or attention else (0.0, 0.85, 0.3)
        cube = "AI_CORE" in k.core or "AIC" in k.core
        values.update({
            "aicore_time(us)": f"{k.dur * 0.95:.3f}", "aic_total_cycles": str(int(k.dur * 1800)),
            "aic_mac_time(us)": f"{k.dur * mac:.3f}", "aic_mac_ratio": f"{mac if cube else 0:.3f}",
            "aic_scalar_time(us)": "1.0", "aic_scalar_ratio": "0.05", "aic_mte1_time(us)": "1.0", "aic_mte1_ratio": "0.1",
            "aic_mte2_time(us)": f"{k.dur * mte2:.3f}", "aic_mte2_ratio": f"{mte2 if cube else 0:.3f}",
            "aic_fixpipe_time(us)": "0.5", "aic_fixpipe_ratio": "0.02", "aic_icache_miss_rate": "0.001",
            "aiv_time(us)": f"{k.dur:.3f}", "aiv_total_cycles": str(int(k.dur * 1800)),
            "aiv_vec_time(us)": f"{k.dur * vec:.3f}", "aiv_vec_ratio": f"{0 if cube else vec:.3f}",
            "aiv_scalar_time(us)": "1.0", "aiv_scalar_ratio": "0.05", "aiv_mte2_time(us)": f"{k.dur * mte2:.3f}",
            "aiv_mte2_ratio": f"{0 if cube else mte2:.3f}", "aiv_mte3_time(us)": "1.0", "aiv_mte3_ratio": "0.1",
            "aiv_icache_miss_rate": "0.001", "cube_utilization(%)": f"{mac * 100:.3f}" if cube else "0",
        })
    return [values.get(h, "N/A") if not k.comm or h in ("Name", "Op Name", "Type", "OP Type", "Accelerator Core",
                                                          "Task Type", "Start Time(us)", "Task Start Time(us)",
                                                          "Duration(us)", "Task Duration(us)", "Wait Time(us)",
                                                          "Task Wait Time(us)", "Step Id", "Device_id", "Model ID",
                                                          "Task ID", "Stream ID") else "N/A" for h in header]


def kernel_header(p: Decode, msprof: bool = False) -> List[str]:
    if msprof:
        text = OP_SUMMARY
    elif p.level == "Level0":
        text = KERNEL_BASE[p.version] + ",Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types," \
                                        "Output Formats"
    else:
        text = KERNEL_FULL[p.version]
        if p.scopes != "profiler_step":
            text = text.split(",", 1)[1]  # Step Id only when a ProfilerStep range exists
    if p.pmu == "PipeUtilization" and p.level != "Level0":
        text += "," + PIPE_UTILIZATION
    return text.split(",")


def kernel_csv(g: Generated, msprof: bool = False) -> str:
    header = kernel_header(g.params, msprof)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    for n, k in enumerate(sorted(g.kernels, key=lambda k: k.start)):
        w.writerow(_cells(k, g.params, header, n))
    # csv doubles the quotes of a quoted shape: torch_npu's """a,b;c""" exactly
    return out.getvalue()


def step_trace_csv(g: Generated) -> str:
    """One row for the whole window (vllm-ascend never calls profiler.step())."""
    p = g.params
    comp = sum(k.dur for k in g.kernels if not k.comm)
    comm = sum(k.dur for k in g.kernels if k.comm)
    wall = g.steps[-1][1] - g.steps[0][0]
    header = STEP_TRACE.get(p.version, STEP_TRACE["7.3.0"])
    row = {"Device_id": str(p.rank), "Step": "", "Computing": f"{comp:.3f}", "Communication(Not Overlapped)": f"{comm:.3f}",
           "Overlapped": "0", "Communication": f"{comm:.3f}", "Free": f"{wall - comp - comm:.3f}", "Stage": f"{wall:.3f}",
           "Bubble": "0", "Communication(Not Overlapped and Exclude Receive)": f"{comm:.3f}", "Preparing": "50"}
    return header + "\n" + ",".join(row[h] for h in header.split(",")) + "\n"


# memory_record.csv (PTA _memory_view_parser.py HEADERS_RECORD; 5.0.rc3 without Total Active / Stream Ptr)
MEMORY_RECORD = {
    "5.0.rc3": "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Device Type",
    "7.3.0": "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type",
}


def memory_record_csv(g: Generated, reserved_mb: float = 20480.0, per_malloc_mb: float = 512.0) -> str:
    """The framework's reserved memory over the capture: a sample at each step start and one after
    each device allocation of the trace (the caching allocator growing by ``per_malloc_mb``); a GE
    series beside it, flat, as real files interleave components."""
    header = MEMORY_RECORD["5.0.rc3" if g.params.version == "5.0.rc3" else "7.3.0"].split(",")
    mallocs = sorted(float(e["ts"]) - BASE_US + e["dur"] for e in g.events
                     if e.get("ph") == "X" and "Malloc" in e.get("name", ""))
    samples = sorted([(s, "step") for s, _ in g.steps] + [(m, "malloc") for m in mallocs])
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    reserved = reserved_mb
    for t, what in samples:
        if what == "malloc":
            reserved += per_malloc_mb
        for comp, value in (("PTA", reserved), ("GE", 128.0)):
            row = {"Component": comp, "Timestamp(us)": _ts(t) + "\t", "Total Allocated(MB)": f"{value * 0.8:.3f}",
                   "Total Reserved(MB)": f"{value:.3f}", "Total Active(MB)": f"{value * 0.8:.3f}",
                   "Stream Ptr": "187651234", "Device Type": "NPU:0"}
            w.writerow([row[h] for h in header])
    return out.getvalue()


def communication_json(steps: int, transit_ms: float, wait_ms: float, sync_ms: float = 0.0) -> dict:
    """communication.json of one rank (PTA _communication_parser.py; keys as in MSTT's
    cluster_communication.json): two all-reduces per step, with the group's "Total Op Info"."""
    def op(t: float, w: float, s: float) -> dict:
        return {"Communication Time Info": {"Start Timestamp(us)": 1735689600000000.0, "Elapse Time(ms)": t + w + s,
                                            "Transit Time(ms)": t, "Wait Time(ms)": w, "Synchronization Time(ms)": s,
                                            "Idle Time(ms)": 0.0, "Wait Time Ratio": round(w / (w + t), 4) if w + t else 0,
                                            "Synchronization Time Ratio": round(s / (s + t), 4) if s + t else 0},
                "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": 8.0, "Transit Time(ms)": t,
                                                          "Bandwidth(GB/s)": 8.0 / t if t else 0,
                                                          "Large Packet Ratio": 1.0, "Size Distribution": {"8.0": [1, t]}}}}
    doc = {}
    for n in range(steps):
        collective = {f"hcom_allReduce__{n}{k}_0_1@7366524846": op(transit_ms, wait_ms, sync_ms) for k in range(2)}
        collective["Total Op Info"] = op(2 * transit_ms, 2 * wait_ms, 2 * sync_ms)
        doc[f"step{n + 1}"] = {"collective": collective, "p2p": {}}
    return doc


def profiler_info(p: Decode) -> dict:
    return {
        "config": {
            "common_config": {"activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"], "schedule": {},
                              "record_shapes": True, "profile_memory": False, "with_stack": False, "with_flops": False,
                              "with_modules": False},
            "experimental_config": {"_profiler_level": p.level, "_aic_metrics":
                                    "ACL_AICORE_PIPE_UTILIZATION" if p.pmu else "ACL_AICORE_NONE",
                                    "_export_type": ["text"], "_l2_cache": False, "_data_simplification": True},
        },
        "start_info": {"syscnt_enable": True, "freq": 100000000, "start_cnt": 1, "start_monotonic": 1},
        "end_info": {"collectionTimeEnd": 1, "MonotonicTimeEnd": 1},
        "torch_npu_version": TORCH_NPU_OF.get(p.version, "2.7.1.post2"),
        "cann_version": CANN_OF.get(p.version, "8.5.0"),
        "rank_id": p.rank,
    }


def write_ascend_pt(parent: Path, p: Decode, name: Optional[str] = None, table: bool = True,
                    trace: bool = True) -> Path:
    """A torch_npu profiler directory: {worker}_{timestamp}_ascend_pt/ASCEND_PROFILER_OUTPUT/..."""
    texts = _texts(p)
    root = parent / (name or f"dp0_pp0_tp{p.rank}_dcp0_ep0_rank{p.rank}_20250101120000{p.rank:03d}_ascend_pt")
    out = root / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True, exist_ok=True)
    (root / f"profiler_info_{p.rank}.json").write_text(json.dumps(profiler_info(p)))
    (root / "profiler_metadata.json").write_text(json.dumps({"ENV_VARIABLES": {"ASCEND_LAUNCH_BLOCKING": "",
                                                                              "PYTORCH_NPU_ALLOC_CONF": ""}}))
    if trace:
        (out / "trace_view.json").write_text(texts[0])
    if table:
        (out / "kernel_details.csv").write_text(texts[1])
    (out / "step_trace_time.csv").write_text(texts[2])
    return root


_TEXTS: Dict[str, Tuple[str, str, str]] = {}


def _texts(p: Decode) -> Tuple[str, str, str]:
    """The trace, kernel table and step table of ``p``, simulated once per process (the same
    scenario is written by many tests; a Decode's repr names every parameter)."""
    key = repr(p)
    if key not in _TEXTS:
        g = simulate(p)
        _TEXTS[key] = (json.dumps(g.events), kernel_csv(g), step_trace_csv(g))
    return _TEXTS[key]


def write_msprof(parent: Path, p: Decode) -> Path:
    """An msprof output: PROF_*/mindstudio_profiler_output/{msprof_*.json, op_summary_*.csv}."""
    g = simulate(replace(p, scopes="none"))
    out = parent / "PROF_000001_20250101120000123_ABCDEFGHIJKLMNOP" / "mindstudio_profiler_output"
    out.mkdir(parents=True, exist_ok=True)
    # msprof has no framework lane: only CANN and the device
    events = [e for e in g.events if e.get("pid") != PY_PID]
    (out / "msprof_20250101120000.json").write_text(json.dumps(events))
    (out / "op_summary_20250101120000.csv").write_text(kernel_csv(g, msprof=True))
    return out.parent


def write_raw(parent: Path) -> Path:
    """A torch_npu directory whose offline analysis has not run: FRAMEWORK/ and PROF_*/ only."""
    root = parent / "localhost_1234_20250101120000123_ascend_pt"
    (root / "FRAMEWORK").mkdir(parents=True)
    (root / "FRAMEWORK" / "torch.op_mark").write_bytes(b"\x00\x01")
    (root / "PROF_000001_20250101120000123_ABCDEFGHIJKLMNOP" / "device_0" / "data").mkdir(parents=True)
    (root / "profiler_info.json").write_text(json.dumps(profiler_info(Decode())))
    return root


# -- the scenarios the verdict tests use --------------------------------------------------------

HOST_BOUND = Decode()
DEVICE_BOUND = Decode(kernel_us=60.0, launch_us=4.0, step_host_us=150.0, post_us=60.0)
COMM_BOUND = Decode(kernel_us=10.0, launch_us=4.0, step_host_us=150.0, post_us=60.0, tp=2, comm_us=160.0)
BALANCED = Decode(kernel_us=13.0, launch_us=12.0, step_host_us=150.0, post_us=50.0, tp=2, comm_us=15.0)


def env_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else os.path.getsize(path)
