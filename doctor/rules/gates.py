"""Whether a layer has input, asked before its rules are imported: a check on a host that gives
the NPU network, tuning or model layer nothing to judge never loads those rules (nor the
parsers they import, ~15 ms). A gate is cheap and errs one way only: it may say yes for a host
where every rule of the module stays silent, never no where one would speak; the test that
holds it to that runs every gated module on every context whose gate says no
(tests/test_lazy_layers.py)."""
from __future__ import annotations

from typing import Callable, Dict, Tuple

from doctor.rules.base import Context

# the control plane of a multi-node launch (rules/hccn.py): any of these, set, is input
HCCN_ENV = ("HCCL_IF_IP", "HCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "VLLM_DP_MASTER_IP",
            "VLLM_DP_MASTER_PORT")
# variables the tuning rules judge whatever the release (rules/tuning.py: env_harmful, rejected)
TUNING_ENV = ("ASCEND_LAUNCH_BLOCKING", "TASK_QUEUE_ENABLE", "PYTORCH_NPU_ALLOC_CONF", "VLLM_USE_V1")


def _serve(ctx: Context) -> bool:
    t = ctx.facts.tuning
    return t is not None and t.serve is not None


def hccn(ctx: Context) -> bool:
    """hccn_tool ran (or pings were asked) on a runtime host, a serve command names the launch,
    or the environment (with the launch script's exports) sets a control-plane variable."""
    h = ctx.facts.hccn
    if h is not None and not ctx.build and (h.tool is not None or h.pings):
        return True
    m = ctx.facts.mooncake
    if m is not None and m.serve_args is not None:
        return True
    env = dict(ctx.facts.env)
    if m is not None:
        env.update(m.serve_env)
    return any(k in env for k in HCCN_ENV)


def tuning(ctx: Context) -> bool:
    """The host's settings at run time, a serve command or a model, a variable judged for every
    release, or a variable the release in use may ignore (a tuning variable of the matrix, or
    any VLLM_ASCEND_*)."""
    if not ctx.build or _serve(ctx) or ctx.facts.model is not None:
        return True
    env = ctx.facts.env
    if any(k in env for k in TUNING_ENV):
        return True
    version = ctx.release.vllm_ascend if ctx.release else ctx.facts.version_of("vllm-ascend")
    if version is None:
        return False
    names = {v.name for v in ctx.matrix.tuning_vars}
    return any(k in names or k.startswith("VLLM_ASCEND_") for k in env)


def serve(ctx: Context) -> bool:
    """The devices at run time, a serve command, a model."""
    return not ctx.build or _serve(ctx) or ctx.facts.model is not None


def model(ctx: Context) -> bool:
    return ctx.facts.model is not None


# rule module (doctor.rules.NAME) -> its gate; every other rule module always runs
GATES: Dict[str, Callable[[Context], bool]] = {"hccn": hccn, "tuning": tuning, "tuning_serve": serve,
                                               "tuning_model": model}


def wanted(ctx: Context, modules: Tuple[str, ...]) -> Tuple[str, ...]:
    """The modules among ``modules`` whose layer has input here, in their order."""
    return tuple(m for m in modules if m not in GATES or GATES[m](ctx))
