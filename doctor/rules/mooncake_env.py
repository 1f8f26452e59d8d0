"""Environment variables Mooncake's Ascend direct transport reads (ascend_direct_transport.cpp,
transfer_executor_base.cpp; docs/sources/mooncake.md, environment). Pure: env mapping in, Issues out.
"""
from __future__ import annotations

import re
from typing import List, Mapping, Optional

from doctor.i18n import T
from doctor.versions import AscendVersion
from doctor.rules.mooncake_config import at_least
from doctor.rules.issues import FAIL, INFO, OK, WARN, Issue, issue

SOURCE = "docs/sources/mooncake.md#environment"
INT32_MAX = 2 ** 31 - 1
# Read only by the legacy USE_ASCEND (HCCL) transport: no effect on an ASCEND_DIRECT build.
LEGACY = ("ASCEND_TRANSPORT_PRINT", "ASCEND_TRANSPORT_MAX_REG_MEMORY_NUM", "ASCEND_TRANSPORT_EPOLL_WAIT_TIMEOUT",
          "Ascend_TCP_TIMEOUT", "Ascend_HCCL_SOCKET_TIMEOUT", "Ascend_TRANSPORT_MEM_TIMEOUT",
          "ASCEND_TRANSPORT_TRANSFER_MAX_RETRY_COUNT", "ASCEND_TRANSPORT_TRANSFER_TIMEOUT",
          "ASCEND_TRANSPORT_TRANSFER_ENABLE_FAST_RECOVERY")


def _cann_below(cann: Optional[str], floor: str) -> bool:
    if not cann:
        return False
    try:
        return AscendVersion(cann) < AscendVersion(floor)
    except Exception:  # an unparsable CANN version says nothing here
        return False


def check_env(env: Mapping[str, str], *, since: Mapping[str, str], vllm_ascend: Optional[str] = None,
              mooncake: Optional[str] = None, cann: Optional[str] = None, hardware: Optional[str] = None) -> List[Issue]:
    """``since``: the matrix's thresholds, name -> version (``doctor.rules.mooncake.env_knowledge``)."""
    out: List[Issue] = []
    pool = env.get("ASCEND_BUFFER_POOL")
    async_set = "ASCEND_USE_ASYNC_TRANSFER" in env
    if pool is not None:
        m = re.match(r"^\s*(\d+)\s*:\s*(\d+)\s*$", pool)
        if not m:
            out.append(issue(FAIL, T("mooncake.env.pool_format", pool=repr(pool)), T("mooncake.env.pool_format.hint"),
                             observed=pool, expected="count:sizeMB", source=SOURCE))
        elif (int(m.group(1)), int(m.group(2))) == (0, 0):
            out.append(issue(INFO, T("mooncake.env.pool_off"), observed=pool, source=SOURCE))
        elif int(m.group(1)) <= 0 or int(m.group(2)) <= 0:
            out.append(issue(FAIL, T("mooncake.env.pool_not_positive", pool=pool), T("mooncake.env.pool_not_positive.hint"),
                             observed=pool, expected="count:sizeMB, both > 0", source=SOURCE))
        elif async_set:
            out.append(issue(FAIL, T("mooncake.env.pool_and_async"), T("mooncake.env.pool_and_async.hint"),
                             observed=f"ASCEND_BUFFER_POOL={pool}, ASCEND_USE_ASYNC_TRANSFER={env['ASCEND_USE_ASYNC_TRANSFER']}",
                             source=SOURCE))
        else:
            out.append(issue(OK, T("mooncake.env.pool_ok", pool=pool, count=m.group(1), size=m.group(2)),
                             observed=pool, source=SOURCE))
            if at_least(vllm_ascend, since["mooncake_buffer_pool_undocumented"]):
                out.append(issue(INFO, T("mooncake.env.pool_dropped_from_docs"), observed=pool,
                                 source="https://github.com/vllm-project/vllm-ascend/pull/13834"))
    if async_set:
        async_value = env["ASCEND_USE_ASYNC_TRANSFER"]
        if async_value.strip().lower() in ("0", "false", "off", "no", ""):
            out.append(issue(WARN, T("mooncake.env.async_falsy", value=repr(async_value)), T("mooncake.env.async_unset_hint"),
                             observed=async_value, expected="unset", source=SOURCE))
        if _cann_below(cann, "8.5.0"):
            out.append(issue(WARN, T("mooncake.env.async_old_cann", cann=cann), T("mooncake.env.async_unset_hint"),
                             observed=cann, expected=">= 8.5.0", source=SOURCE))
    old_default = "3000" if mooncake and at_least(mooncake, "0.3.8") is False else "10000"
    for var in ("ASCEND_CONNECT_TIMEOUT", "ASCEND_TRANSFER_TIMEOUT"):
        value = env.get(var)
        if value is None:
            continue
        try:
            n = int(value.strip())
        except ValueError:
            n = None
        if n is None or n > INT32_MAX:
            out.append(issue(WARN, T("mooncake.env.timeout_not_int", var=var, value=repr(value), default=old_default),
                             T("mooncake.env.timeout_hint", var=var), observed=value, expected="integer ms", source=SOURCE))
        elif n <= 0:
            out.append(issue(WARN, T("mooncake.env.timeout_not_positive", var=var, value=value),
                             T("mooncake.env.timeout_hint", var=var), observed=value, expected="> 0", source=SOURCE))
        else:
            out.append(issue(OK, T("mooncake.env.timeout_ok", var=var, ms=n), observed=value, source=SOURCE))
    fabric = env.get("ASCEND_ENABLE_USE_FABRIC_MEM")
    if fabric is not None and fabric != "1":
        out.append(issue(INFO, T("mooncake.env.fabric_off", value=repr(fabric)), observed=fabric, expected="1 or unset",
                         source=SOURCE))
    elif fabric == "1" and hardware and hardware != "A3":
        out.append(issue(WARN, T("mooncake.env.fabric_not_a3", hardware=hardware), T("mooncake.env.fabric_not_a3.hint"),
                         observed=hardware, expected="A3", source=SOURCE))
    legacy = [v for v in LEGACY if v in env]
    if legacy:
        out.append(issue(INFO, T("mooncake.env.legacy", names=", ".join(legacy)), observed=", ".join(legacy), source=SOURCE))
    return out
