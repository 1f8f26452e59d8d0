"""The layers of the stack, in causal order, and which layers each one rests on."""
from __future__ import annotations

from typing import Dict, Tuple

LAYERS: Tuple[str, ...] = (
    "driver", "firmware", "cann", "devices", "hccn", "python", "torch", "torch_npu",
    "vllm", "vllm_ascend", "mooncake", "env", "tuning", "smoke",
)

# A failure in a layer can cause symptoms in the layers that rest on it (directly or not);
# this is what "blocked by" follows. Python and the driver are the two roots.
RESTS_ON: Dict[str, Tuple[str, ...]] = {
    "driver": (),
    "firmware": ("driver",),
    "cann": ("driver",),
    "devices": ("driver", "firmware"),
    "hccn": ("driver", "devices"),  # hccn_tool asks the driver about the NPU ports
    "python": (),
    "torch": ("python",),
    "torch_npu": ("torch", "cann"),
    "vllm": ("torch", "python"),
    "vllm_ascend": ("vllm", "torch_npu", "cann"),
    "mooncake": ("vllm_ascend", "cann"),
    "env": ("cann",),
    # host settings, the serving command and the model files: judged against the release
    "tuning": ("devices", "vllm_ascend"),
    "smoke": ("devices", "vllm_ascend", "env", "mooncake"),
}


# Findings whose cause lies elsewhere than their layer's: the env layer collects checks of the
# process environment that rest on different parts of the stack.
FINDING_RESTS_ON: Dict[str, Tuple[str, ...]] = {
    "env.pip_check": ("python",),
    "env.shadowed_dists": ("python",),
    "env.cwd_shadow": (),
    "env.vllm_version_override": ("vllm",),
    "env.vllm_target_device": (),
    # the host's own network, not the NPUs: nothing above it explains a wrong interface
    "hccn.hccl_if_ip": (),
    "hccn.socket_ifname": (),
    "hccn.dp_master": (),
    # host settings and model files stand on their own; device findings on the devices layer
    **{f"tuning.{t}": () for t in ("cpu_governor", "swappiness", "numa_balancing", "thp", "kernel", "virtual_machine",
                                   "shm", "nofile", "memlock", "hugepages", "model_config", "model_weights",
                                   "model_index", "model_checksums", "model_tokenizer")},
    **{f"tuning.{t}": ("devices",) for t in ("numa_affinity", "visible_devices", "parallel_size", "devices_busy",
                                             "k8s_devices")},
}


def upstream_of(finding_id: str) -> Tuple[str, ...]:
    """The layers a finding rests on, transitively, in causal order."""
    layer = finding_id.split(".", 1)[0]
    direct = FINDING_RESTS_ON.get(finding_id)
    if direct is None:
        return upstream(layer)
    seen = set(direct)
    for d in direct:
        seen.update(upstream(d))
    return tuple(name for name in LAYERS if name in seen)


def upstream(layer: str) -> Tuple[str, ...]:
    """All layers ``layer`` rests on, transitively, in causal order."""
    seen = set()
    stack = list(RESTS_ON.get(layer, ()))
    while stack:
        cur = stack.pop()
        if cur not in seen:
            seen.add(cur)
            stack.extend(RESTS_ON.get(cur, ()))
    return tuple(name for name in LAYERS if name in seen)


def order(layer: str) -> int:
    return LAYERS.index(layer) if layer in LAYERS else len(LAYERS)
