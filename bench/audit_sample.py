"""Draw the facts-audit sample (docs/facts-audit.md): a reproducible random sample of matrix facts.

A fact is one (row, field) of a matrix file. The draw is stratified so the facts that decide verdicts
carry most of the weight; within a stratum rows and fields are drawn uniformly with a fixed seed.

    python bench/audit_sample.py            # the sample of docs/facts-audit.md (seed 25)
    python bench/audit_sample.py --seed 7   # another sample
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.9/3.10
    import tomli as tomllib

MATRICES = Path(__file__).resolve().parent.parent / "matrices"

# (stratum, file, array-of-tables, key field, candidate fact fields, how many to draw)
STRATA: list[tuple[str, str, str, str, tuple[str, ...], int]] = [
    ("vllm-ascend pairing", "vllm-ascend.toml", "release", "vllm_ascend",
     ("vllm", "torch", "torch_npu", "cann", "python", "requires_python"), 9),
    ("torch-npu pairing", "torch-npu.toml", "torch_npu", "version", ("torch", "cann", "python"), 6),
    ("CANN-driver", "cann-driver.toml", "cann", "cann", ("paired", "compatible"), 4),
    ("image contents", "images.toml", "image", "tag", ("base", "deviations"), 3),
    ("Mooncake key", "mooncake.toml", "mooncake_key", "key", ("since", "until"), 2),
    ("Mooncake threshold", "mooncake.toml", "threshold", "name", ("version",), 2),
    ("tuning var", "tuning.toml", "tuning_var", "name", ("default", "read_by"), 4),
    ("tuning fact", "tuning.toml", "tuning_fact", "id", ("releases", "value"), 3),
    ("tuning quant", "tuning.toml", "tuning_quant", "scheme", ("releases",), 1),
    ("tuning advice", "tuning.toml", "tuning_advice", "id", ("value", "releases"), 1),
    ("error code", "error-codes.toml", "code", "code", ("name", "meaning_en"), 5),
    ("signature cause", "signatures.toml", "signature", "id", ("cause_en",), 10),
]


def facts(file: str, table: str, key: str, fields: tuple[str, ...]) -> list[tuple[str, str, Any]]:
    """Every (row key, field, value) of the table whose field is present."""
    data = tomllib.loads((MATRICES / file).read_text(encoding="utf-8"))
    out: list[tuple[str, str, Any]] = []
    for row in data.get(table, []):
        for field in fields:
            if field in row:
                out.append((str(row[key]), field, row[field]))
    return out


def draw(seed: int) -> list[tuple[str, str, str, str, Any]]:
    rng = random.Random(seed)
    sample: list[tuple[str, str, str, str, Any]] = []
    for stratum, file, table, key, fields, n in STRATA:
        pool = facts(file, table, key, fields)
        for row_key, field, value in rng.sample(pool, min(n, len(pool))):
            sample.append((stratum, f"{file} [[{table}]]", row_key, field, value))
    return sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=25)
    args = parser.parse_args()
    for i, (stratum, where, row_key, field, value) in enumerate(draw(args.seed), 1):
        text = repr(value)
        if len(text) > 160:
            text = text[:157] + "..."
        print(f"{i:2d}. [{stratum}] {where} {row_key} .{field} = {text}")


if __name__ == "__main__":
    main()
