"""Stand-in for vllm's offline API on top of transformers (tests only).

Knobs for the tests (environment): STANDIN_VLLM_GRAPH_FAIL=1 makes graph mode (not
enforce_eager) fail at start-up the way an ACL graph capture error does; STANDIN_VLLM_GARBLE=1
shifts every generated token (garbled output).
"""
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, TypedDict

__version__ = "0.11.0"


class TokensPrompt(TypedDict):
    prompt_token_ids: List[int]


@dataclass
class SamplingParams:
    temperature: float = 1.0
    max_tokens: Optional[int] = 16
    logprobs: Optional[int] = None


@dataclass
class Logprob:
    logprob: float
    rank: Optional[int] = None
    decoded_token: Optional[str] = None


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: List[int]
    cumulative_logprob: Optional[float]
    logprobs: Optional[List[Dict[int, Logprob]]]


@dataclass
class RequestOutput:
    request_id: str
    prompt_token_ids: List[int]
    outputs: List[CompletionOutput] = field(default_factory=list)


class LLM:
    def __init__(self, model: str, **kwargs):
        import torch
        from transformers import AutoModelForCausalLM

        self.eager = bool(kwargs.get("enforce_eager"))
        started = time.monotonic()
        self.model = AutoModelForCausalLM.from_pretrained(model, local_files_only=True).eval()
        self.torch = torch
        print(f"INFO [stand-in] Model loading took 0.00 GiB and {time.monotonic() - started:.1f} seconds", flush=True)
        if not self.eager:
            if os.environ.get("STANDIN_VLLM_GRAPH_FAIL"):
                print("[ERROR] RUNTIME(1234) graph capture failed, error code 107027", file=sys.stderr, flush=True)
                raise RuntimeError("ACL stream synchronize failed, error code is 107027")
            print("INFO [stand-in] Graph capturing finished in 1 secs, took 0.01 GiB", flush=True)

    def generate(self, prompts, sampling_params=None, use_tqdm=True):
        torch = self.torch
        params = sampling_params or SamplingParams()
        out = []
        for i, prompt in enumerate(prompts):
            ids = list(prompt["prompt_token_ids"])
            tokens, logprobs = [], []
            with torch.no_grad():
                for _ in range(params.max_tokens or 16):
                    logits = self.model(input_ids=torch.tensor([ids + tokens])).logits[0, -1].float()
                    lp = torch.log_softmax(logits, -1)
                    k = max(1, params.logprobs or 1)
                    values, idx = torch.topk(lp, k)
                    tok = int(idx[0])
                    if os.environ.get("STANDIN_VLLM_GARBLE"):
                        tok = (tok + 7) % lp.shape[0]
                    tokens.append(tok)
                    if params.logprobs is not None:
                        entry = {int(t): Logprob(float(v), r + 1) for r, (t, v) in enumerate(zip(idx.tolist(), values.tolist()))}
                        entry.setdefault(tok, Logprob(float(lp[tok])))
                        logprobs.append(entry)
            out.append(RequestOutput(str(i), ids, [CompletionOutput(0, "", tokens, None,
                                                                     logprobs if params.logprobs is not None else None)]))
        return out
