"""The vllm stage, run by the target interpreter (see smoke_common for the rules of these files).

The engine is built the way vllm's own offline benchmarks build it: the user's `vllm serve`
arguments go through vllm's parser (EngineArgs.add_cli_args, FlexibleArgumentParser,
EngineArgs.from_cli_args) and the engine is ``LLM(**dataclasses.asdict(engine_args))``, so
every argument means what it means to the user's own server. Arguments that only the HTTP
front end knows (--host, --port, ...) are reported and left out.

Steps: import, args, tokenize, load (engine start, including graph capture unless --enforce-eager),
ttft (one prompt, one token, after a warm-up request) and generate (greedy tokens with their
top logprobs for the fixed prompts, given as token ids so the reference starts from the same
ids). Every vllm name used here is listed in VLLM_API; tests check the list against the source
of the supported vllm releases.
"""
import argparse
import dataclasses
import json
import os
import time

from smoke_common import emit, read_prompts, step, tokenize

# module -> names imported from it; "Class.member" -> what the stage uses of it.
VLLM_API = {
    "imports": {
        "vllm": ["LLM", "SamplingParams", "__version__"],
        "vllm.engine.arg_utils": ["EngineArgs"],
    },
    "parser": ["vllm.utils.argparse_utils.FlexibleArgumentParser", "vllm.utils.FlexibleArgumentParser"],
    "calls": {
        "EngineArgs.add_cli_args": ["parser"],
        "EngineArgs.from_cli_args": ["args"],
        "EngineArgs": ["enforce_eager", "model"],
        "LLM.__init__": ["**kwargs"],
        "LLM.generate": ["prompts", "sampling_params", "use_tqdm"],
        "SamplingParams": ["temperature", "max_tokens", "logprobs"],
        "TokensPrompt": ["prompt_token_ids"],
        "RequestOutput": ["outputs"],
        "CompletionOutput": ["token_ids", "logprobs"],
        "Logprob": ["logprob"],
    },
}

state = {}


def do_import():
    import vllm
    state["vllm"] = vllm
    versions = {"vllm": vllm.__version__}
    try:
        from importlib.metadata import version
        versions["vllm_ascend"] = version("vllm_ascend")
    except Exception:  # noqa: BLE001 - not installed is a fact, not an error here
        pass
    return ", ".join("%s %s" % kv for kv in versions.items()), {"versions": versions}


def flexible_parser():
    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        from vllm.utils import FlexibleArgumentParser
    return FlexibleArgumentParser()


class ArgsRejected(Exception):
    pass


def do_args(args):
    from vllm.engine.arg_utils import EngineArgs
    parser = flexible_parser()

    def reject(message):
        raise ArgsRejected(message)
    parser.error = reject  # argparse would print usage and exit 2
    parser = EngineArgs.add_cli_args(parser) or parser
    user = json.loads(args.engine_args)
    known, unknown = parser.parse_known_args(["--model", args.model] + user)
    engine_args = EngineArgs.from_cli_args(known)
    if args.eager:
        engine_args.enforce_eager = True
    state["engine_args"] = engine_args
    eager = bool(getattr(engine_args, "enforce_eager", False))
    detail = "engine arguments accepted by vllm (%s)" % ("eager" if eager else "graph mode")
    return detail, {"enforce_eager": eager, "ignored": unknown, "model": engine_args.model}


def do_tokenize(args):
    state["ids"] = tokenize(args.model, read_prompts(args.prompts))
    return "%d prompts tokenized" % len(state["ids"]), {"prompt_tokens": [len(i) for i in state["ids"]]}


def do_load():
    from vllm import LLM
    state["llm"] = LLM(**dataclasses.asdict(state["engine_args"]))
    return "engine started", {}


def sampling(max_tokens, logprobs):
    from vllm import SamplingParams
    return SamplingParams(temperature=0.0, max_tokens=max_tokens, logprobs=logprobs)


def prompts_of(ids_list):
    return [{"prompt_token_ids": ids} for ids in ids_list]


def do_ttft():
    llm, first = state["llm"], state["ids"][:1]
    llm.generate(prompts_of(first), sampling(2, None), use_tqdm=False)  # warm-up, not measured
    start = time.monotonic()
    llm.generate(prompts_of(first), sampling(1, None), use_tqdm=False)
    took = time.monotonic() - start
    return "first token after %.0f ms (one prompt, warm engine)" % (took * 1000), {"ttft_s": round(took, 4)}


def do_generate(args):
    start = time.monotonic()
    results = state["llm"].generate(prompts_of(state["ids"]), sampling(args.tokens, args.top), use_tqdm=False)
    took = time.monotonic() - start
    outputs, produced = [], 0
    for ids, result in zip(state["ids"], results):
        completion = result.outputs[0]
        tops = []
        for position in completion.logprobs or []:
            pairs = sorted(((int(t), float(lp.logprob)) for t, lp in position.items()), key=lambda p: -p[1])
            tops.append([[t, round(v, 5)] for t, v in pairs[:args.top]])
        tokens = [int(t) for t in completion.token_ids]
        produced += len(tokens)
        outputs.append({"prompt": ids, "tokens": tokens, "top": tops})
    emit("outputs", run="vllm", outputs=outputs)
    rate = produced / took if took > 0 else None
    return ("%d tokens for %d prompts (%.1f tokens/s)" % (produced, len(outputs), rate or 0),
            {"tokens": produced, "seconds": round(took, 4), "tokens_per_s": round(rate, 2) if rate else None})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--engine-args", default="[]", help="JSON list of `vllm serve` arguments")
    parser.add_argument("--prompts", required=True, help="JSON file with the prompt texts")
    parser.add_argument("--eager", action="store_true")
    parser.add_argument("--tokens", type=int, default=8)
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args()
    emit("hello", stage="vllm", pid=os.getpid(), started=time.time())
    step("import", do_import)
    step("args", do_args, args)
    step("tokenize", do_tokenize, args)
    step("load", do_load)
    step("ttft", do_ttft)
    step("generate", do_generate, args)


if __name__ == "__main__":
    main()
