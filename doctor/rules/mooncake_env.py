"""Environment variables Mooncake's Ascend direct transport reads (ascend_direct_transport.cpp,
transfer_executor_base.cpp; facts/mooncake.md §5). Pure: env mapping in, Issues out.
"""
from __future__ import annotations

import re
from typing import List, Mapping, Optional

from doctor.versions import AscendVersion
from doctor.rules.mooncake_config import at_least
from doctor.rules.issues import FAIL, INFO, OK, WARN, Issue, issue

SOURCE = "facts/mooncake.md §5 (Mooncake ascend_direct transport environment)"
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


def check_env(env: Mapping[str, str], *, vllm_ascend: Optional[str] = None, mooncake: Optional[str] = None,
              cann: Optional[str] = None, hardware: Optional[str] = None) -> List[Issue]:
    out: List[Issue] = []
    pool = env.get("ASCEND_BUFFER_POOL")
    async_set = "ASCEND_USE_ASYNC_TRANSFER" in env
    if pool is not None:
        m = re.match(r"^\s*(\d+)\s*:\s*(\d+)\s*$", pool)
        if not m:
            out.append(issue(FAIL, f"ASCEND_BUFFER_POOL={pool!r} is not BUFFER_NUM:BUFFER_SIZE_MB (e.g. 4:8); Mooncake passes it to ADXL unchecked and the engine does not start",
                             f"ASCEND_BUFFER_POOL={pool!r} 不是 缓冲数:大小MB 格式（如 4:8）；Mooncake 原样传给 ADXL，引擎无法启动",
                             hint=("export ASCEND_BUFFER_POOL=4:8   (or unset it)", "export ASCEND_BUFFER_POOL=4:8（或 unset）"),
                             observed=pool, expected="count:sizeMB", source=SOURCE))
        elif (int(m.group(1)), int(m.group(2))) == (0, 0):
            out.append(issue(INFO, "ASCEND_BUFFER_POOL=0:0 disables the buffer pool", "ASCEND_BUFFER_POOL=0:0 表示关闭 buffer pool",
                             observed=pool, source=SOURCE))
        elif int(m.group(1)) <= 0 or int(m.group(2)) <= 0:
            out.append(issue(FAIL, f"ASCEND_BUFFER_POOL={pool}: both the buffer count and the size in MB must be positive",
                             f"ASCEND_BUFFER_POOL={pool}：缓冲个数和大小（MB）都必须为正整数",
                             hint=("export ASCEND_BUFFER_POOL=4:8", "export ASCEND_BUFFER_POOL=4:8"),
                             observed=pool, expected="count:sizeMB, both > 0", source=SOURCE))
        elif async_set:
            out.append(issue(FAIL, "ASCEND_BUFFER_POOL together with ASCEND_USE_ASYNC_TRANSFER: Mooncake logs "
                                   "'Buffer pool mode does not support async transfer.' and initialisation fails",
                             "ASCEND_BUFFER_POOL 与 ASCEND_USE_ASYNC_TRANSFER 同时设置：Mooncake 报 "
                             "'Buffer pool mode does not support async transfer.'，初始化失败",
                             hint=("unset ASCEND_USE_ASYNC_TRANSFER   (the connector's load_async is unrelated and may stay on)",
                                   "unset ASCEND_USE_ASYNC_TRANSFER（connector 的 load_async 与此无关，可保持开启）"),
                             observed=f"ASCEND_BUFFER_POOL={pool}, ASCEND_USE_ASYNC_TRANSFER={env['ASCEND_USE_ASYNC_TRANSFER']}",
                             source=SOURCE))
        else:
            out.append(issue(OK, f"ASCEND_BUFFER_POOL={pool}: {m.group(1)} buffers of {m.group(2)} MB",
                             f"ASCEND_BUFFER_POOL={pool}：{m.group(1)} 个 {m.group(2)} MB 的缓冲",
                             observed=pool, source=SOURCE))
            if at_least(vllm_ascend, "0.23.0"):
                out.append(issue(INFO, "vllm-ascend 0.23.0 docs dropped ASCEND_BUFFER_POOL in favour of ASCEND_ENABLE_USE_FABRIC_MEM=1 (A3) "
                                       "or HCCL_INTRA_ROCE_ENABLE=1 (A2/A3 RoCE); Mooncake still honours it",
                                 "vllm-ascend 0.23.0 文档已去掉 ASCEND_BUFFER_POOL，改用 ASCEND_ENABLE_USE_FABRIC_MEM=1（A3）"
                                 "或 HCCL_INTRA_ROCE_ENABLE=1（A2/A3 RoCE）；Mooncake 仍然支持该变量",
                                 observed=pool, source="https://github.com/vllm-project/vllm-ascend/pull/13834"))
    if async_set:
        value = env["ASCEND_USE_ASYNC_TRANSFER"]
        if value.strip().lower() in ("0", "false", "off", "no", ""):
            out.append(issue(WARN, f"ASCEND_USE_ASYNC_TRANSFER={value!r} still ENABLES async transfer: Mooncake only checks that the variable exists",
                             f"ASCEND_USE_ASYNC_TRANSFER={value!r} 仍会开启异步传输：Mooncake 只判断变量是否存在",
                             hint=("unset ASCEND_USE_ASYNC_TRANSFER", "unset ASCEND_USE_ASYNC_TRANSFER"),
                             observed=value, expected="unset", source=SOURCE))
        if _cann_below(cann, "8.5.0"):
            out.append(issue(WARN, f"ASCEND_USE_ASYNC_TRANSFER needs CANN >= 8.5; this host has {cann}",
                             f"ASCEND_USE_ASYNC_TRANSFER 需要 CANN >= 8.5；本机为 {cann}",
                             hint=("unset ASCEND_USE_ASYNC_TRANSFER", "unset ASCEND_USE_ASYNC_TRANSFER"),
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
            out.append(issue(WARN, f"{var}={value!r} is not an integer of milliseconds; Mooncake silently ignores it and uses {old_default} ms",
                             f"{var}={value!r} 不是毫秒整数；Mooncake 会静默忽略并使用 {old_default} ms",
                             hint=(f"export {var}=10000", f"export {var}=10000"), observed=value, expected="integer ms",
                             source=SOURCE))
        elif n <= 0:
            out.append(issue(WARN, f"{var}={value} must be a positive number of milliseconds",
                             f"{var}={value} 必须是正的毫秒数", hint=(f"export {var}=10000", f"export {var}=10000"),
                             observed=value, expected="> 0", source=SOURCE))
        else:
            out.append(issue(OK, f"{var}={n} ms", f"{var}={n} 毫秒", observed=value, source=SOURCE))
    fabric = env.get("ASCEND_ENABLE_USE_FABRIC_MEM")
    if fabric is not None and fabric != "1":
        out.append(issue(INFO, f"ASCEND_ENABLE_USE_FABRIC_MEM={fabric!r} leaves fabric memory off (only exactly \"1\" enables it)",
                         f"ASCEND_ENABLE_USE_FABRIC_MEM={fabric!r} 不会开启 fabric memory（只有 \"1\" 才开启）",
                         observed=fabric, expected="1 or unset", source=SOURCE))
    elif fabric == "1" and hardware and hardware != "A3":
        out.append(issue(WARN, f"ASCEND_ENABLE_USE_FABRIC_MEM=1 is for A3 (HCCS fabric memory); this host is {hardware}",
                         f"ASCEND_ENABLE_USE_FABRIC_MEM=1 仅适用于 A3（HCCS fabric memory）；本机为 {hardware}",
                         hint=("unset ASCEND_ENABLE_USE_FABRIC_MEM   (on A2 use HCCL_INTRA_ROCE_ENABLE=1)",
                               "unset ASCEND_ENABLE_USE_FABRIC_MEM（A2 请使用 HCCL_INTRA_ROCE_ENABLE=1）"),
                         observed=hardware, expected="A3", source=SOURCE))
    legacy = [v for v in LEGACY if v in env]
    if legacy:
        out.append(issue(INFO, f"{', '.join(legacy)}: read only by the legacy USE_ASCEND (HCCL) transport, no effect with ASCEND_DIRECT",
                         f"{', '.join(legacy)}：只有旧的 USE_ASCEND（HCCL）传输读取，对 ASCEND_DIRECT 无效",
                         observed=", ".join(legacy), source=SOURCE))
    return out
