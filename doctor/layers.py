"""The layers of the stack, in causal order, and which layers each one rests on."""
from __future__ import annotations

from typing import Dict, Tuple

LAYERS: Tuple[str, ...] = (
    "driver", "firmware", "cann", "devices", "python", "torch", "torch_npu",
    "vllm", "vllm_ascend", "mooncake", "env", "smoke",
)

# A failure in a layer can cause symptoms in the layers that rest on it (directly or not);
# this is what "blocked by" follows. Python and the driver are the two roots.
RESTS_ON: Dict[str, Tuple[str, ...]] = {
    "driver": (),
    "firmware": ("driver",),
    "cann": ("driver",),
    "devices": ("driver", "firmware"),
    "python": (),
    "torch": ("python",),
    "torch_npu": ("torch", "cann"),
    "vllm": ("torch", "python"),
    "vllm_ascend": ("vllm", "torch_npu", "cann"),
    "mooncake": ("vllm_ascend", "cann"),
    "env": ("cann",),
    "smoke": ("devices", "vllm_ascend", "env", "mooncake"),
}


def upstream(layer: str) -> Tuple[str, ...]:
    """All layers ``layer`` rests on, transitively, in causal order."""
    seen = set()
    stack = list(RESTS_ON.get(layer, ()))
    while stack:
        cur = stack.pop()
        if cur not in seen:
            seen.add(cur)
            stack.extend(RESTS_ON.get(cur, ()))
    return tuple(l for l in LAYERS if l in seen)


def order(layer: str) -> int:
    return LAYERS.index(layer) if layer in LAYERS else len(LAYERS)
