"""Shared by the smoke scripts that run inside the *target* interpreter.

These files are run by path (``python smoke_model.py ...``) with the user's interpreter, which
may be older than the doctor's (Python 3.9) and has none of the doctor's packages: they import
only the standard library at module level, and torch/transformers/vllm inside the steps.

Every result is one JSON line appended to the file named by ASCEND_DOCTOR_SMOKE_EVENTS, apart
from whatever the libraries print on stdout and stderr (without that variable: a line on stdout
starting with MARK).
"""
import json
import os
import sys
import time
import traceback

MARK = "@@ascend-doctor-smoke@@ "
EVENTS = os.environ.get("ASCEND_DOCTOR_SMOKE_EVENTS")


def emit(event, **fields):
    fields["event"] = event
    fields["t"] = time.time()
    line = json.dumps(fields, default=str)
    if EVENTS:
        with open(EVENTS, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    else:
        sys.stdout.write(MARK + line + "\n")
        sys.stdout.flush()


class StepFailed(Exception):
    pass


def step(name, fn, *args):
    """Run one step; report its result (or its error with the last traceback lines) and stop
    the script at the first failure with exit code 3."""
    start = time.monotonic()
    emit("begin", step=name)
    try:
        result = fn(*args)
    except BaseException as e:  # noqa: BLE001 - every failure is the report
        if isinstance(e, KeyboardInterrupt):
            raise
        tail = traceback.format_exc().strip().splitlines()[-12:]
        emit("step", step=name, ok=False, seconds=round(time.monotonic() - start, 4),
             error="%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else ""),
             traceback=tail)
        sys.exit(3)
    detail, metrics = result if isinstance(result, tuple) else (result, {})
    emit("step", step=name, ok=True, seconds=round(time.monotonic() - start, 4), detail=detail, metrics=metrics)
    return metrics


def import_torch(device):
    """torch (and torch_npu for the NPU); returns (torch, versions)."""
    import torch
    versions = {"torch": torch.__version__}
    if device == "npu":
        import torch_npu  # noqa: F401 - registers the npu device
        versions["torch_npu"] = torch_npu.__version__
    return torch, versions


def synchronize(torch, device):
    if device == "npu":
        torch.npu.synchronize()


def top_logprobs(torch, logits, k):
    """The k best (token, logprob) pairs of one position, computed in float32."""
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    values, indices = torch.topk(logprobs, k)
    return [[int(t), round(float(v), 5)] for t, v in zip(indices.tolist(), values.tolist())]


def greedy_hf(torch, model, prompt_ids, steps, k, dev, device):
    """Greedy decoding with a Hugging Face causal LM, one token at a time with the KV cache,
    from the raw logits (no generation_config processors: vllm's greedy does the same).
    Returns (tokens, top logprobs per position, seconds of the first step, seconds in all)."""
    ids = torch.tensor([prompt_ids], device=dev)
    past = None
    tokens, tops = [], []
    start = time.monotonic()
    first = 0.0
    with torch.no_grad():
        feed = ids
        for i in range(steps):
            out = model(input_ids=feed, past_key_values=past, use_cache=True)
            past = out.past_key_values
            top = top_logprobs(torch, out.logits[0, -1], k)
            synchronize(torch, device)
            if i == 0:
                first = time.monotonic() - start
            tok = top[0][0]
            tokens.append(tok)
            tops.append(top)
            feed = torch.tensor([[tok]], device=dev)
    return tokens, tops, first, time.monotonic() - start


def read_prompts(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def tokenize(model_path, texts):
    """Token ids of the fixed prompts with the model's own tokenizer (transformers), so the
    device run, the CPU reference and vllm all start from the same ids."""
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
    return [tok(text)["input_ids"] for text in texts]
