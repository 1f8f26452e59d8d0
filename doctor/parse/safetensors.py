"""The header of a safetensors file, read without loading any tensor.

Layout (https://github.com/huggingface/safetensors#format): 8 bytes little-endian header length N,
N bytes of JSON ``{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}``,
then the data. A complete file is exactly 8 + N + the largest end offset bytes long, so a
truncated download shows without hashing a byte of data.
"""
from __future__ import annotations

import struct
from doctor.parse import jsonshape
from doctor.record import field, record
from typing import List

MAX_HEADER = 100 * 1024 * 1024  # the format's own limit is 100 MB
# A tensor's entry is one object and two arrays, ~10 values ({"dtype", "shape": [..], "data_offsets":
# [b, e]}) nested 3 deep. The shards of the biggest published models hold a few thousand tensors
# (DeepSeek-V3: 91k tensors over 163 shards; a 70B shard: a few MB of header): 100k tensors is
# tens of times that, and parses in half a second. 100 MB of ``[],`` would be 35M lists (2.7 GB).
HEADER_SHAPE = jsonshape.Shape(depth=16, containers=300_000, values=1_500_000)


class HeaderError(ValueError):
    pass


@record
class Header:
    length: int  # N
    tensors: List[str] = field(default_factory=list)
    data_bytes: int = 0  # the largest end offset

    @property
    def file_size(self) -> int:
        return 8 + self.length + self.data_bytes


def header_length(first8: bytes) -> int:
    if len(first8) < 8:
        raise HeaderError("shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", first8[:8])
    if n > MAX_HEADER:
        raise HeaderError(f"header length {n} is larger than the format allows")
    return n


def parse_header(length: int, body: bytes) -> Header:
    if len(body) < length:
        raise HeaderError(f"truncated inside the header ({len(body)} of {length} bytes)")
    try:
        data = jsonshape.loads(body[:length], HEADER_SHAPE)
    except jsonshape.ShapeError:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise HeaderError(f"header is not JSON: {e}") from None
    if not isinstance(data, dict):
        raise HeaderError("header is not a JSON object")
    out = Header(length=length)
    for name, entry in data.items():
        if name == "__metadata__":
            continue
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(o, int) for o in offsets)):
            raise HeaderError(f"tensor {name!r} has no data_offsets")
        out.tensors.append(name)
        out.data_bytes = max(out.data_bytes, offsets[1])
    return out
