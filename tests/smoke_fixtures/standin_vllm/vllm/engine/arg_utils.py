import argparse
import dataclasses
from dataclasses import dataclass
from typing import Optional


@dataclass
class EngineArgs:
    model: str = "facebook/opt-125m"
    tokenizer: Optional[str] = None
    dtype: str = "auto"
    seed: Optional[int] = 0
    max_model_len: Optional[int] = None
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float = 0.9
    block_size: Optional[int] = None
    enable_prefix_caching: Optional[bool] = None
    enforce_eager: bool = False
    max_num_seqs: Optional[int] = None

    @staticmethod
    def add_cli_args(parser):
        ints = {"seed", "max_model_len", "tensor_parallel_size", "block_size", "max_num_seqs"}
        for f in dataclasses.fields(EngineArgs):
            flag = "--" + f.name.replace("_", "-")
            if f.name == "enforce_eager":
                parser.add_argument(flag, action="store_true", default=f.default)
            elif f.name == "enable_prefix_caching":
                parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=None)
            else:
                kind = int if f.name in ints else float if f.name == "gpu_memory_utilization" else str
                parser.add_argument(flag, type=kind, default=f.default)
        return parser

    @classmethod
    def from_cli_args(cls, args):
        return cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(cls)})
