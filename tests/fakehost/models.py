"""Real model directories for the tuning layer's model checks, made with transformers.

A tiny Llama is saved with ``save_pretrained(max_shard_size=...)`` (sharded safetensors and their
index), with a real fast tokenizer, and with the Hugging Face download metadata that
``huggingface-cli download --local-dir`` leaves (written by huggingface_hub itself). It runs in
the shared CPU-torch virtualenv (fakehost.torchenv) with transformers added, and is cached under
the per-user test cache (fakehost.torchenv.shared_cache) under a name keyed by the script that
makes it and the venv it runs in, so every checkout and run makes it once.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .shared import exclusive
from .torchenv import DEFAULT, content_key, shared_cache, with_packages

MAKE = r'''
import hashlib, json, os, sys
from pathlib import Path
import torch
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
from tokenizers import Tokenizer, models, pre_tokenizers
from huggingface_hub._local_folder import write_download_metadata

out = Path(sys.argv[1])
torch.manual_seed(0)
config = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                     torch_dtype="bfloat16")
model = LlamaForCausalLM(config).to(torch.bfloat16)
model.save_pretrained(out, max_shard_size="60KB", safe_serialization=True)
vocab = {f"t{i}": i for i in range(254)}
vocab.update({"<unk>": 254, "<s>": 255})
tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>").save_pretrained(out)
for shard in sorted(out.glob("*.safetensors")):
    digest = hashlib.sha256(shard.read_bytes()).hexdigest()
    write_download_metadata(out, shard.name, commit_hash="0" * 40, etag=digest)
print(json.dumps(sorted(p.name for p in out.iterdir())))
'''


def transformers_python() -> Path:
    return with_packages(["transformers", "safetensors", "tokenizers", "huggingface_hub"],
                         ["transformers", "safetensors"])


def tiny_llama(dest: Path) -> Path:
    """A copy of the cached tiny sharded Llama at ``dest`` (made on first use)."""
    made = shared_cache() / f"tuning-llama-{content_key(MAKE, DEFAULT.name)}"
    with exclusive(made.parent / f"{made.name}.lock"):
        if not (made / "model.safetensors.index.json").exists():
            python = transformers_python()
            tmp = made.parent / f"{made.name}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            subprocess.run([str(python), "-c", MAKE, str(tmp)], check=True, capture_output=True, timeout=600)
            shutil.rmtree(made, ignore_errors=True)
            tmp.rename(made)
    shutil.copytree(made, dest, symlinks=True)
    return dest
