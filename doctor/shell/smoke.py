"""Smoke inference: run a tiny transformer on the device, in a subprocess of the target interpreter.

The doctor never imports torch itself (it may be what is broken, and it costs seconds). The
script below runs in the target environment with a timeout and reports one JSON line per step:
import (torch, torch_npu), device (is_available, count, name), compute (a matmul checked against
the CPU) and decode (greedy decoding of 8 tokens with a seeded 2-layer transformer, checked
against the same model on the CPU).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Dict, List, Optional

from doctor.facts import CommandFact
from doctor.findings import FAIL, OK, SKIP, Finding, Verdict, judge, msg
from doctor.shell.host import Host

STEPS = ("import", "device", "compute", "decode")

SCRIPT = r'''
import json, sys, time
device = sys.argv[1]

def emit(step, ok, detail, start):
    print(json.dumps({"step": step, "ok": ok, "detail": detail, "ms": round((time.time() - start) * 1000, 1)}), flush=True)

def run(step, fn):
    start = time.time()
    try:
        detail = fn()
    except BaseException as e:
        emit(step, False, "%s: %s" % (type(e).__name__, e), start)
        sys.exit(0)
    emit(step, True, detail, start)

state = {}

def do_import():
    import torch
    state["torch"] = torch
    text = "torch " + torch.__version__
    if device == "npu":
        import torch_npu
        text += ", torch_npu " + torch_npu.__version__
    return text

def do_device():
    torch = state["torch"]
    if device == "npu":
        if not torch.npu.is_available():
            raise RuntimeError("torch.npu.is_available() is False")
        count = torch.npu.device_count()
        torch.npu.set_device(0)
        state["dev"] = torch.device("npu:0")
        return "%d NPU(s), %s" % (count, torch.npu.get_device_name(0))
    state["dev"] = torch.device("cpu")
    return "cpu (%d threads)" % torch.get_num_threads()

def sync():
    torch = state["torch"]
    if device == "npu":
        torch.npu.synchronize()

def do_compute():
    torch = state["torch"]
    g = torch.Generator().manual_seed(0)
    a = torch.randn(256, 256, generator=g)
    ref = a @ a.T
    out = (a.to(state["dev"]) @ a.to(state["dev"]).T).cpu()
    sync()
    err = (out - ref).abs().max().item()
    if not err < 1e-2 * ref.abs().max().item():
        raise AssertionError("matmul differs from the CPU result (max error %g)" % err)
    return "256x256 matmul matches the CPU (max error %.2e)" % err

def tiny_model(torch, dev):
    g = torch.Generator().manual_seed(1234)
    vocab, dim = 64, 32
    w = lambda *shape: (torch.randn(*shape, generator=g) * 0.2).to(dev)
    p = {"emb": w(vocab, dim), "head": w(dim, vocab), "layers": []}
    for _ in range(2):
        layer = dict((k, w(dim, dim)) for k in ("q", "k", "v", "o"))
        layer["up"], layer["down"] = w(dim, 4 * dim), w(4 * dim, dim)
        p["layers"].append(layer)
    def forward(tokens):
        x = p["emb"][tokens]
        n = tokens.shape[0]
        mask = torch.full((n, n), float("-inf"), device=dev).triu(1)
        for l in p["layers"]:
            h = torch.nn.functional.layer_norm(x, (dim,))
            q, k, v = h @ l["q"], h @ l["k"], h @ l["v"]
            att = torch.softmax(q @ k.T / dim ** 0.5 + mask, dim=-1)
            x = x + (att @ v) @ l["o"]
            h = torch.nn.functional.layer_norm(x, (dim,))
            x = x + torch.nn.functional.gelu(h @ l["up"]) @ l["down"]
        return torch.nn.functional.layer_norm(x, (dim,)) @ p["head"]
    return forward

def decode(torch, dev, steps=8):
    forward = tiny_model(torch, dev)
    tokens = torch.tensor([1, 2, 3], device=dev)
    for _ in range(steps):
        nxt = forward(tokens)[-1].argmax().reshape(1)
        tokens = torch.cat([tokens, nxt])
    sync()
    return tokens.cpu().tolist()

def do_decode():
    torch = state["torch"]
    with torch.no_grad():
        start = time.time()
        got = decode(torch, state["dev"])
        took = time.time() - start
        want = decode(torch, torch.device("cpu"))
    if got != want:
        raise AssertionError("greedy decode on %s gave %s, the CPU gave %s" % (device, got, want))
    return "8 tokens decoded, same as the CPU (%.1f tokens/s)" % (8 / max(took, 1e-6))

for step, fn in (("import", do_import), ("device", do_device), ("compute", do_compute), ("decode", do_decode)):
    run(step, fn)
'''

TITLES = {
    "import": msg("import torch{npu}", "导入 torch{npu}"),
    "device": msg("the device answers", "设备可用"),
    "compute": msg("a matmul on the device matches the CPU", "设备上的矩阵乘与 CPU 结果一致"),
    "decode": msg("a tiny transformer decodes on the device like on the CPU", "微型 transformer 在设备上的解码结果与 CPU 一致"),
}


@dataclass
class SmokeResult:
    device: str
    command: CommandFact
    steps: List[Dict]
    verdict: Verdict


def smoke_env(env: Dict[str, str], device: str) -> Dict[str, str]:
    out = dict(env)
    if device == "cpu":
        # torch autoloads torch_npu through its device-backend entry point; on a machine without
        # a driver that import fails before the CPU is ever used.
        out["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    return out


def run_smoke(host: Host, python: str, device: str = "npu", timeout: float = 300.0) -> SmokeResult:
    cmd = host.run([python, "-c", SCRIPT, device], timeout=timeout, env=smoke_env(host.env, device),
                   map_executable=False)
    steps = []
    for line in cmd.stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and item.get("step") in STEPS:
            steps.append(item)
    return SmokeResult(device=device, command=cmd, steps=steps, verdict=judge(findings(steps, cmd, device, timeout)))


def findings(steps: List[Dict], cmd: CommandFact, device: str, timeout: float) -> List[Finding]:
    """One finding per step; a failed, crashed or hung step explains itself and skips the rest."""
    done = {s["step"]: s for s in steps}
    npu = ", torch_npu" if device == "npu" else ""
    out: List[Finding] = []
    broken: Optional[str] = None
    for step in STEPS:
        fid = f"smoke.{step}"
        title = TITLES[step]
        if broken:
            out.append(Finding(fid, SKIP, msg(f"not run: {broken} failed", f"未运行：{broken} 失败")))
            continue
        item = done.get(step)
        if item and item.get("ok"):
            out.append(Finding(fid, OK, msg(item["detail"], item["detail"]), observed=f"{item.get('ms', 0)} ms"))
            continue
        broken = fid
        if item:
            detail = str(item.get("detail", ""))
        elif cmd.timed_out:
            detail = f"no answer within {timeout:g}s"
        elif cmd.error:
            detail = cmd.error
        else:
            tail = (cmd.stderr or "").strip().splitlines()[-1:] or [f"exit {cmd.returncode}"]
            detail = f"the interpreter died: {tail[0]}"
        out.append(Finding(fid, FAIL,
                           msg(title.en.format(npu=npu) + f" failed: {detail}", title.zh.format(npu=npu) + f"失败：{detail}"),
                           observed=detail, hint=_hint(detail + "\n" + (cmd.stderr or "")), fixable="manual",
                           evidence=(cmd.stderr or "").strip().splitlines()[-5:]))
    return out


def _hint(text: str):
    """The cause and fix of the first known error signature in the failure text."""
    from doctor.usecases.explain import match_log
    from doctor.matrix import load_matrix

    try:
        signatures = load_matrix().signatures
    except Exception:  # a broken overlay must not hide the smoke result
        return None
    en = [m for m in match_log(text, signatures, "en") if not m.benign]
    zh = [m for m in match_log(text, signatures, "zh") if not m.benign]
    if not en:
        return msg("run ascend-doctor check for the cause", "运行 ascend-doctor check 查找原因")
    return msg(f"{en[0].cause} Fix: {en[0].fix}", f"{zh[0].cause} 修复：{zh[0].fix}")
