"""The model stage, run by the target interpreter (see smoke_common for the rules of these files).

Steps: import (torch, torch_npu), device, compute (a matmul checked against the CPU), load (the
user's Hugging Face directory with transformers, or a seeded tiny transformer), generate
(greedy tokens and top logprobs on the device) and, with --reference, the same generation on the
CPU in float32. The doctor compares the outputs; this script only reports them.
"""
import argparse
import os
import time
import types

from smoke_common import emit, greedy_hf, import_torch, read_prompts, step, synchronize, tokenize

state = {}


def do_import(device):
    torch, versions = import_torch(device)
    state["torch"] = torch
    return ", ".join("%s %s" % kv for kv in versions.items()), {"versions": versions}


def do_device(device, device_id):
    torch = state["torch"]
    if device == "npu":
        if not torch.npu.is_available():
            raise RuntimeError("torch.npu.is_available() is False")
        count = torch.npu.device_count()
        torch.npu.set_device(device_id)
        state["dev"] = torch.device("npu:%d" % device_id)
        name = torch.npu.get_device_name(device_id)
        return "%d NPU(s), %s" % (count, name), {"devices": count, "name": name}
    state["dev"] = torch.device("cpu")
    return "cpu (%d threads)" % torch.get_num_threads(), {"threads": torch.get_num_threads()}


def do_compute(device):
    torch = state["torch"]
    g = torch.Generator().manual_seed(0)
    a = torch.randn(256, 256, generator=g)
    ref = a @ a.T
    out = (a.to(state["dev"]) @ a.to(state["dev"]).T).cpu()
    synchronize(torch, device)
    err = (out - ref).abs().max().item()
    if not err < 1e-2 * ref.abs().max().item():
        raise AssertionError("a 256x256 matmul differs from the CPU result (max error %g)" % err)
    return "256x256 matmul matches the CPU (max error %.2e)" % err, {"max_error": err}


class TinyModel:
    """A seeded 2-layer transformer: its weights come from a fixed seed, so a wrong kernel shows
    up as different tokens without any file on disk. Same call shape as a HF causal LM."""

    def __init__(self, torch, dev):
        self.torch, self.dev = torch, dev
        g = torch.Generator().manual_seed(1234)
        vocab, dim = 64, 32
        self.dim = dim

        def w(*shape):
            return (torch.randn(*shape, generator=g) * 0.2).to(dev)
        self.p = {"emb": w(vocab, dim), "head": w(dim, vocab), "layers": []}
        for _ in range(2):
            layer = dict((k, w(dim, dim)) for k in ("q", "k", "v", "o"))
            layer["up"], layer["down"] = w(dim, 4 * dim), w(4 * dim, dim)
            self.p["layers"].append(layer)

    def __call__(self, input_ids, past_key_values=None, use_cache=True):
        torch, p, dim = self.torch, self.p, self.dim
        tokens = input_ids[0] if past_key_values is None else torch.cat([past_key_values, input_ids[0]])
        x = p["emb"][tokens]
        n = tokens.shape[0]
        mask = torch.full((n, n), float("-inf"), device=self.dev).triu(1)
        F = torch.nn.functional
        for layer in p["layers"]:
            h = F.layer_norm(x, (dim,))
            q, k, v = h @ layer["q"], h @ layer["k"], h @ layer["v"]
            att = torch.softmax(q @ k.T / dim ** 0.5 + mask, dim=-1)
            x = x + (att @ v) @ layer["o"]
            h = F.layer_norm(x, (dim,))
            x = x + F.gelu(h @ layer["up"]) @ layer["down"]
        logits = F.layer_norm(x, (dim,)) @ p["head"]
        # what a Hugging Face model returns; the whole sequence stands in for a KV cache
        return types.SimpleNamespace(logits=logits.unsqueeze(0), past_key_values=tokens)


def load_hf(torch, path, dev, dtype_name):
    import transformers
    from transformers import AutoModelForCausalLM
    # transformers 4.56 renamed torch_dtype to dtype (the old name warns in 5.x)
    major_minor = tuple(int(x) for x in transformers.__version__.split(".")[:2] if x.isdigit())
    key = "dtype" if major_minor >= (4, 56) else "torch_dtype"
    kwargs = {"local_files_only": True, key: "auto" if dtype_name == "auto" else getattr(torch, dtype_name)}
    model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    return model.to(dev).eval()


def do_load(args):
    torch = state["torch"]
    if not args.model:
        state["model"] = TinyModel(torch, state["dev"])
        state["prompts"] = [[1, 2, 3], [7, 5, 3, 1], [60, 61, 62, 63, 0]]
        return "seeded tiny transformer (2 layers, no weights on disk)", {"model": "tiny", "parameters": 2 * 6 * 32 * 32}
    state["prompts"] = tokenize(args.model, read_prompts(args.prompts))
    model = load_hf(torch, args.model, state["dev"], args.dtype)
    synchronize(torch, args.device)
    state["model"] = model
    params = sum(p.numel() for p in model.parameters())
    dtype = str(next(model.parameters()).dtype).replace("torch.", "")
    return ("%s (%.1fM parameters, %s)" % (os.path.basename(os.path.normpath(args.model)), params / 1e6, dtype),
            {"model": args.model, "parameters": params, "dtype": dtype})


def generate(model, dev, device, tokens, k):
    torch = state["torch"]
    outputs, first, total, produced = [], 0.0, 0.0, 0
    for ids in state["prompts"]:
        toks, tops, t_first, t_all = greedy_hf(torch, model, ids, tokens, k, dev, device)
        outputs.append({"prompt": ids, "tokens": toks, "top": tops})
        first += t_first
        total += t_all
        produced += len(toks)
    return outputs, {"tokens": produced, "seconds": round(total, 4),
                     "tokens_per_s": round(produced / total, 2) if total > 0 else None,
                     "first_token_s": round(first / max(1, len(outputs)), 4)}


def do_generate(args):
    outputs, metrics = generate(state["model"], state["dev"], args.device, args.tokens, args.top)
    emit("outputs", run="device", outputs=outputs)
    return "%d tokens generated (%.1f tokens/s)" % (metrics["tokens"], metrics["tokens_per_s"] or 0), metrics


def do_reference(args):
    torch = state["torch"]
    cpu = torch.device("cpu")
    if args.model:
        model = load_hf(torch, args.model, cpu, "float32")
    else:
        model = TinyModel(torch, cpu)
    outputs, metrics = generate(model, cpu, "cpu", args.tokens, args.top)
    emit("outputs", run="reference", outputs=outputs)
    return "CPU reference: %d tokens" % metrics["tokens"], metrics


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="npu", choices=("npu", "cpu"))
    parser.add_argument("--device-id", type=int, default=0)
    parser.add_argument("--model")
    parser.add_argument("--prompts", help="JSON file with the prompt texts (with --model)")
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--tokens", type=int, default=8)
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument("--reference", action="store_true")
    parser.add_argument("--reference-only", action="store_true", help="only the CPU reference (for the vllm stage)")
    args = parser.parse_args()
    emit("hello", stage="model", pid=os.getpid(), started=time.time())
    if args.reference_only:
        step("import", do_import, "cpu")
        state["prompts"] = tokenize(args.model, read_prompts(args.prompts)) if args.model else [[1, 2, 3]]
        step("reference", do_reference, args)
        return
    step("import", do_import, args.device)
    step("device", do_device, args.device, args.device_id)
    step("compute", do_compute, args.device)
    step("load", do_load, args)
    step("generate", do_generate, args)
    if args.reference:
        step("reference", do_reference, args)


if __name__ == "__main__":
    main()
