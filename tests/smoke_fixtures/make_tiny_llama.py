"""Write a tiny Llama-style model directory (config, safetensors weights, tokenizer files) with
transformers: 2 layers, hidden size 64, a character-level tokenizer. Run by the target
interpreter of the smoke tests: python make_tiny_llama.py OUT_DIR."""
import sys
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
from tokenizers import Tokenizer, models, pre_tokenizers, decoders
import torch
out = sys.argv[1]
torch.manual_seed(0)
words = ["<unk>", "<s>", "</s>"] + [chr(c) for c in range(32, 127)] + ["\n"]
vocab = {w: i for i, w in enumerate(words)}
tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
tok.decoder = decoders.Fuse()
fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
cfg = LlamaConfig(vocab_size=len(words), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, bos_token_id=1, eos_token_id=2)
model = LlamaForCausalLM(cfg)
model.save_pretrained(out, safe_serialization=True)
fast.save_pretrained(out)
