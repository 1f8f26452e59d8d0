"""The Mooncake JSON that vllm-ascend's KV-pool backend reads from MOONCAKE_CONFIG_PATH.

Pure: text + the installed vllm-ascend version + a few environment values + the host's memory
in, Issues out. What each version reads comes from vllm-ascend's ``MooncakeStoreConfig``
(config_data.py in v0.11, kvpool/backend/mooncake_backend.py in v0.12-v0.13,
kv_transfer/kv_pool/ascend_store/backend/mooncake_backend.py from v0.14); see
facts/mooncake.md section 4.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

from doctor.versions import pep440
from doctor.parse import jsontext
from doctor.rules.issues import FAIL, INFO, OK, WARN, Issue, issue
from doctor.parse.sizes import GIB, human, parse_size

SOURCE = "facts/mooncake.md §4 (vllm-ascend MooncakeStoreConfig)"
VALIDATE = "python -m json.tool \"$MOONCAKE_CONFIG_PATH\""

# Which vllm-ascend reads which key: ConfigContext.keys, from matrices/mooncake.toml (scope "config").
Window = Tuple[Optional[str], Optional[str]]
# Parsed by v0.11-v0.12.0rc1 but never used: the address always comes from get_ip().
UNUSED = {"local_hostname": "unused: the host IP comes from vLLM's get_ip(); set VLLM_HOST_IP to choose it"}
# Shown in a doc example (v0.12.0rc1 kv_pool.md) but never parsed by any version.
MISLEADING = {"alloc_in_same_node": "prefer_alloc_in_same_node"}

PLACEHOLDER = re.compile(r"(?i)^[x.]+$|[<>]|your")
HOST_PORT = re.compile(r"^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.\-]+):(\d{1,5})$")


def at_least(version: Optional[str], floor: Optional[str]) -> Optional[bool]:
    """version >= floor; None when the version is unknown."""
    if floor is None:
        return True
    v, f = pep440(version), pep440(floor)
    if v is None or f is None:
        return None
    return v >= f


def key_status(key: str, vllm_ascend: Optional[str], keys: Mapping[str, Window]) -> str:
    """read / not_yet / no_longer / unused / misleading / unknown (``keys``: the key windows)."""
    if key in UNUSED:
        return "unused"
    if key in MISLEADING:
        return "misleading"
    if key not in keys:
        return "unknown"
    return window_state(keys[key], vllm_ascend)


def window_state(window: Tuple[Optional[str], Optional[str]], vllm_ascend: Optional[str]) -> str:
    """Whether a key with a (first, last) vllm-ascend window is read by this version:
    read / not_yet / no_longer (an unknown version reads everything)."""
    first, last = window
    if vllm_ascend is None:
        return "read"
    if first and at_least(vllm_ascend, first) is False:
        return "not_yet"
    if last and at_least(vllm_ascend, last):
        return "no_longer"
    return "read"


@dataclass
class ConfigContext:
    """What, besides the file, decides whether the config works."""

    vllm_ascend: Optional[str] = None
    mooncake: Optional[str] = None  # installed Mooncake version, when known
    env: Mapping[str, str] = None  # type: ignore[assignment]
    mem_total_kb: Optional[int] = None
    mem_available_kb: Optional[int] = None
    ranks: int = 1  # processes on this host that each register a segment
    path: str = "$MOONCAKE_CONFIG_PATH"
    keys: Mapping[str, Window] = None  # type: ignore[assignment]  # key windows (the matrix's)
    ssd_offload_since: Optional[str] = None  # the Mooncake that first has SSD offload (the matrix's)
    since: Mapping[str, str] = None  # type: ignore[assignment]  # the matrix's thresholds, name -> version

    def __post_init__(self):
        if self.env is None:
            self.env = {}
        if self.keys is None:
            self.keys = {}
        if self.since is None:
            self.since = {}


def check_text(text: str, ctx: ConfigContext) -> List[Issue]:
    """Parse strictly, then validate the content (the lenient reading when strict fails)."""
    res = jsontext.parse(text)
    out: List[Issue] = []
    data = res.value
    if not res.ok:
        evidence = [res.excerpt] + [f"{s.where()}: {s.kind.replace('_', ' ')} {s.text}" for s in res.spots]
        out.append(issue(
            FAIL,
            f"{ctx.path} is not valid JSON ({res.describe()}); vllm-ascend's json.load raises JSONDecodeError",
            f"{ctx.path} 不是合法 JSON（{res.describe_zh()}）；vllm-ascend 的 json.load 会抛出 JSONDecodeError",
            hint=(f"remove what strict JSON rejects ({len(res.spots) or 1} spot(s) listed), then check: {VALIDATE}",
                  f"删除严格 JSON 不接受的内容（共 {len(res.spots) or 1} 处，见下），再检查：{VALIDATE}"),
            observed=f"line {res.line}, column {res.col}", expected="strict JSON", evidence=tuple(evidence),
            source=SOURCE))
        data = res.lenient
        if data is None:
            return out
    if not isinstance(data, dict):
        out.append(issue(FAIL, f"{ctx.path} must hold a JSON object, not {type(data).__name__}",
                         f"{ctx.path} 必须是一个 JSON 对象，而不是 {type(data).__name__}",
                         observed=type(data).__name__, expected="object", source=SOURCE))
        return out
    out.extend(check_data(data, ctx, strict_ok=res.ok))
    return out


def check_data(data: Dict[str, Any], ctx: ConfigContext, strict_ok: bool = True) -> List[Issue]:
    va = ctx.vllm_ascend
    out: List[Issue] = []
    suffix_en = "" if strict_ok else " (read as if the JSON errors were fixed)"
    suffix_zh = "" if strict_ok else "（按修正 JSON 错误后的内容判断）"

    # -- protocol ----------------------------------------------------------------------------
    v11 = at_least(va, ctx.since.get("mooncake_store_backend_reader")) is False
    protocol = data.get("protocol")
    if protocol is None:
        if v11:
            out.append(issue(WARN, "\"protocol\" is not set: vllm-ascend 0.11 then uses \"tcp\", not the Ascend transport" + suffix_en,
                             "未设置 \"protocol\"：vllm-ascend 0.11 此时默认使用 \"tcp\"，而不是 Ascend 传输" + suffix_zh,
                             hint=('add "protocol": "ascend"', '添加 "protocol": "ascend"'),
                             observed="unset (tcp)", expected="ascend", source=SOURCE))
    elif protocol != "ascend":
        if v11:
            out.append(issue(WARN, f"\"protocol\": {protocol!r} does not use the NPU transport (vllm-ascend docs use \"ascend\")" + suffix_en,
                             f"\"protocol\": {protocol!r} 不使用 NPU 传输（vllm-ascend 文档使用 \"ascend\"）" + suffix_zh,
                             hint=('"protocol": "ascend"', '"protocol": "ascend"'),
                             observed=str(protocol), expected="ascend", source=SOURCE))
        else:
            raised = ("NotImplementedError: MooncakeBackend does not support protocol "
                      f"{protocol!r}" if at_least(va, ctx.since.get("mooncake_protocol_not_implemented")) is not False else
                      "the backend only sets up the store for \"ascend\" and fails")
            out.append(issue(FAIL, f"\"protocol\": {protocol!r}: {raised}" + suffix_en,
                             f"\"protocol\": {protocol!r}：vllm-ascend 只支持 \"ascend\"（{raised}）" + suffix_zh,
                             hint=('"protocol": "ascend"  (lower case)', '"protocol": "ascend"（小写）'),
                             observed=str(protocol), expected="ascend", source=SOURCE))
    if v11 and (protocol or "tcp") == "ascend" and data.get("use_ascend_direct") is not True:
        out.append(issue(
            WARN,
            "vllm-ascend 0.11 with \"protocol\": \"ascend\" but without \"use_ascend_direct\": true registers the "
            "legacy HCCL hostname (ip:port:npu_N), which an ASCEND_DIRECT build of Mooncake does not accept" + suffix_en,
            "vllm-ascend 0.11 使用 \"protocol\": \"ascend\" 但未设置 \"use_ascend_direct\": true 时会注册旧的 HCCL 主机名"
            "（ip:port:npu_N），ASCEND_DIRECT 版本的 Mooncake 不接受" + suffix_zh,
            hint=('add "use_ascend_direct": true  (read by vllm-ascend 0.11.x only)',
                  '添加 "use_ascend_direct": true（仅 vllm-ascend 0.11.x 读取）'),
            observed=repr(data.get("use_ascend_direct")), expected="true",
            source="vllm-ascend v0.11.0 vllm_ascend/distributed/mooncake/config_data.py, mooncake_store.py"))

    # -- metadata server -------------------------------------------------------------------------
    meta = data.get("metadata_server")
    if meta is None:
        out.append(issue(FAIL, "\"metadata_server\" is missing (it has no default; store.setup() gets None)" + suffix_en,
                         "缺少 \"metadata_server\"（没有默认值；store.setup() 会收到 None）" + suffix_zh,
                         hint=('"metadata_server": "P2PHANDSHAKE"', '"metadata_server": "P2PHANDSHAKE"'),
                         expected="P2PHANDSHAKE", source=SOURCE))
    elif not isinstance(meta, str):
        out.append(issue(FAIL, f"\"metadata_server\" must be a string, not {type(meta).__name__}",
                         f"\"metadata_server\" 必须是字符串，而不是 {type(meta).__name__}",
                         hint=('"metadata_server": "P2PHANDSHAKE"', '"metadata_server": "P2PHANDSHAKE"'),
                         observed=repr(meta), expected="P2PHANDSHAKE", source=SOURCE))
    elif meta != "P2PHANDSHAKE":
        out.append(_metadata_issue(meta))

    # -- master ------------------------------------------------------------------------------------
    out.extend(_master_issues(data, ctx))

    # -- sizes -------------------------------------------------------------------------------------
    out.extend(_size_issues(data, ctx))

    # -- the rest ----------------------------------------------------------------------------------
    device = data.get("device_name")
    if isinstance(device, str) and device:
        out.append(issue(INFO, f"\"device_name\": {device!r} is passed to Mooncake as RDMA devices; for \"ascend\" the docs leave it \"\"",
                         f"\"device_name\": {device!r} 会作为 RDMA 设备传给 Mooncake；\"ascend\" 协议下文档要求留空 \"\"",
                         hint=('"device_name": ""', '"device_name": ""'), observed=device, expected='""', source=SOURCE))
    out.extend(_ssd_issues(data, ctx))
    for key in ("preferred_segment", "prefer_alloc_in_same_node"):
        if key in data and not isinstance(data[key], bool) and key_status(key, va, ctx.keys) == "read":
            out.append(issue(WARN, f"\"{key}\" should be true or false, not {data[key]!r}",
                             f"\"{key}\" 应为 true 或 false，而不是 {data[key]!r}",
                             observed=repr(data[key]), expected="true/false", source=SOURCE))
    out.extend(_key_issues(data, va, ctx.keys))
    if not any(i.status in (FAIL, WARN) for i in out):
        out.insert(0, issue(OK, f"{ctx.path} is valid for vllm-ascend {va or '(version unknown)'}: "
                                f"protocol {data.get('protocol', 'ascend')}, metadata {meta}, master {data.get('master_server_address')}",
                            f"{ctx.path} 对 vllm-ascend {va or '（版本未知）'} 有效：protocol {data.get('protocol', 'ascend')}，"
                            f"metadata {meta}，master {data.get('master_server_address')}",
                            observed="valid", source=SOURCE))
    return out


def _metadata_issue(meta: str) -> Issue:
    low = meta.lower()
    if low == "p2phandshake":
        return issue(FAIL, f"\"metadata_server\": {meta!r}: Mooncake compares exactly \"P2PHANDSHAKE\"; any other spelling is read as an etcd address",
                     f"\"metadata_server\": {meta!r}：Mooncake 严格比较 \"P2PHANDSHAKE\"；其他写法会被当作 etcd 地址",
                     hint=('"metadata_server": "P2PHANDSHAKE"', '"metadata_server": "P2PHANDSHAKE"'),
                     observed=meta, expected="P2PHANDSHAKE", source=SOURCE)
    if low.startswith(("http://", "https://")):
        return issue(INFO, f"\"metadata_server\": {meta} (HTTP metadata server: mooncake_master needs --enable_http_metadata_server=true); vllm-ascend docs use P2PHANDSHAKE",
                     f"\"metadata_server\": {meta}（HTTP 元数据服务：mooncake_master 需开启 --enable_http_metadata_server=true）；vllm-ascend 文档使用 P2PHANDSHAKE",
                     observed=meta, expected="P2PHANDSHAKE", source=SOURCE)
    if low.startswith(("etcd://", "redis://")) or HOST_PORT.match(meta):
        return issue(INFO, f"\"metadata_server\": {meta} needs a Mooncake built with etcd/redis support (the NPU wheel has etcd); vllm-ascend docs use P2PHANDSHAKE",
                     f"\"metadata_server\": {meta} 需要支持 etcd/redis 的 Mooncake（NPU wheel 含 etcd）；vllm-ascend 文档使用 P2PHANDSHAKE",
                     observed=meta, expected="P2PHANDSHAKE", source=SOURCE)
    return issue(FAIL, f"\"metadata_server\": {meta!r} is neither P2PHANDSHAKE nor a URL (http://, etcd://, redis://, host:port)",
                 f"\"metadata_server\": {meta!r} 既不是 P2PHANDSHAKE 也不是 URL（http://、etcd://、redis://、host:port）",
                 hint=('"metadata_server": "P2PHANDSHAKE"', '"metadata_server": "P2PHANDSHAKE"'),
                 observed=meta, expected="P2PHANDSHAKE", source=SOURCE)


def check_host_port(value: Any) -> Optional[Tuple[str, str]]:
    """None when value is a usable host:port, else (en, zh) saying why not."""
    if not isinstance(value, str):
        return (f"must be a \"host:port\" string, not {type(value).__name__}", f"必须是 \"host:port\" 字符串，而不是 {type(value).__name__}")
    host_part = value.strip().rsplit(":", 1)[0]
    if PLACEHOLDER.search(host_part):
        return ("is a placeholder from the docs: put the master's IP there", "是文档中的占位符：请填写 master 的 IP")
    if "://" in value:
        return ("is a URL; the master takes a plain host:port (its RPC port, 50051 by default, 50088 in vllm-ascend docs)",
                "是 URL；master 地址应为 host:port（RPC 端口，默认 50051，vllm-ascend 文档用 50088）")
    m = HOST_PORT.match(value.strip())
    if not m:
        return ("is not host:port", "不是 host:port 格式")
    if not 0 < int(m.group(2)) < 65536:
        return (f"port {m.group(2)} is out of range", f"端口 {m.group(2)} 超出范围")
    return None


def _master_issues(data: Dict[str, Any], ctx: ConfigContext) -> List[Issue]:
    out: List[Issue] = []
    env_master = ctx.env.get("MOONCAKE_MASTER")
    honours_env = at_least(ctx.vllm_ascend, ctx.since.get("mooncake_env_overrides")) is not False
    addr = data.get("master_server_address")
    if env_master and honours_env:
        out.append(issue(INFO, f"MOONCAKE_MASTER={env_master} overrides \"master_server_address\" ({addr})",
                         f"MOONCAKE_MASTER={env_master} 覆盖了 \"master_server_address\"（{addr}）",
                         observed=env_master, source=SOURCE))
        bad = check_host_port(env_master)
        if bad:
            out.append(issue(FAIL, f"MOONCAKE_MASTER={env_master} {bad[0]}", f"MOONCAKE_MASTER={env_master} {bad[1]}",
                             hint=("export MOONCAKE_MASTER=<master ip>:50088", "export MOONCAKE_MASTER=<master ip>:50088"),
                             observed=env_master, expected="host:port", source=SOURCE))
        return out
    if env_master:
        out.append(issue(INFO, f"MOONCAKE_MASTER={env_master} is ignored by vllm-ascend {ctx.vllm_ascend} (read from 0.20.2rc1 on)",
                         f"vllm-ascend {ctx.vllm_ascend} 不读取 MOONCAKE_MASTER={env_master}（0.20.2rc1 起才读取）",
                         observed=env_master, source=SOURCE))
    if addr is None:
        out.append(issue(FAIL, "\"master_server_address\" is missing (no default: the store cannot reach mooncake_master)",
                         "缺少 \"master_server_address\"（没有默认值：store 无法连接 mooncake_master）",
                         hint=('"master_server_address": "<master ip>:50088"', '"master_server_address": "<master ip>:50088"'),
                         expected="host:port", source=SOURCE))
        return out
    bad = check_host_port(addr)
    if bad:
        out.append(issue(FAIL, f"\"master_server_address\": {addr!r} {bad[0]}", f"\"master_server_address\": {addr!r} {bad[1]}",
                         hint=('"master_server_address": "<master ip>:50088"  (the port of mooncake_master --port/--rpc_port)',
                               '"master_server_address": "<master ip>:50088"（mooncake_master 的 --port/--rpc_port 端口）'),
                         observed=str(addr), expected="host:port", source=SOURCE))
    return out


def _size_issues(data: Dict[str, Any], ctx: ConfigContext) -> List[Issue]:
    va = ctx.vllm_ascend
    out: List[Issue] = []
    strings = at_least(va, ctx.since.get("mooncake_store_backend_reader")) is not False
    env_size = ctx.env.get("MOONCAKE_GLOBAL_SEGMENT_SIZE")
    honours_env = at_least(va, ctx.since.get("mooncake_env_overrides")) is not False
    default = 1073741824 if at_least(va, ctx.since.get("mooncake_segment_default_1gib")) is not False else 3355443200
    if env_size and honours_env:
        raw, origin = env_size, "MOONCAKE_GLOBAL_SEGMENT_SIZE"
        out.append(issue(INFO, f"MOONCAKE_GLOBAL_SEGMENT_SIZE={env_size} overrides \"global_segment_size\" ({data.get('global_segment_size')})",
                         f"MOONCAKE_GLOBAL_SEGMENT_SIZE={env_size} 覆盖了 \"global_segment_size\"（{data.get('global_segment_size')}）",
                         observed=env_size, source=SOURCE))
    else:
        if env_size:
            out.append(issue(INFO, f"MOONCAKE_GLOBAL_SEGMENT_SIZE={env_size} is ignored by vllm-ascend {va} (read from 0.20.2rc1 on)",
                             f"vllm-ascend {va} 不读取 MOONCAKE_GLOBAL_SEGMENT_SIZE={env_size}（0.20.2rc1 起才读取）",
                             observed=env_size, source=SOURCE))
        raw, origin = data.get("global_segment_size", default), "\"global_segment_size\""
    fabric = ctx.env.get("ASCEND_ENABLE_USE_FABRIC_MEM") == "1"
    size = parse_size(raw, strings_accepted=strings)
    hint = ('"global_segment_size": "64GB"  (an integer of bytes, or a number with GB/MB/KB/B)',
            '"global_segment_size": "64GB"（字节数整数，或带 GB/MB/KB/B 单位的数字）') if strings else \
           ('"global_segment_size": 68719476736  (bytes; vllm-ascend 0.11 does not parse units)',
            '"global_segment_size": 68719476736（字节数；vllm-ascend 0.11 不解析单位）')
    if size.error:
        out.append(issue(FAIL, f"{origin} = {raw!r}: {size.error}", f"{origin} = {raw!r}：{size.error}",
                         hint=hint, observed=repr(raw), expected="positive size", source=SOURCE))
        return out
    n = size.value or 0
    if n <= 0:
        out.append(issue(FAIL, f"{origin} = {raw!r} is not a positive size", f"{origin} = {raw!r} 不是正数",
                         hint=hint, observed=repr(raw), expected="> 0", source=SOURCE))
        return out
    if fabric and n % GIB:
        out.append(issue(FAIL, f"{origin} = {human(n)} is not a multiple of 1 GB, which ASCEND_ENABLE_USE_FABRIC_MEM=1 requires",
                         f"{origin} = {human(n)} 不是 1 GB 的整数倍，ASCEND_ENABLE_USE_FABRIC_MEM=1 要求 1 GB 对齐",
                         hint=('round it to whole GB, e.g. "64GB"', '取整到 GB，例如 "64GB"'),
                         observed=str(n), expected="multiple of 1073741824", source="facts/mooncake.md §5 (fabric memory)"))
    if ctx.mem_total_kb:
        total = ctx.mem_total_kb * 1024
        avail = (ctx.mem_available_kb or ctx.mem_total_kb) * 1024
        need = n * max(ctx.ranks, 1)
        ranks = f"{ctx.ranks} ranks × {human(n)} = {human(need)}" if ctx.ranks > 1 else human(n)
        ranks_zh = f"{ctx.ranks} 个 rank × {human(n)} = {human(need)}" if ctx.ranks > 1 else human(n)
        if n > total or need > total:
            out.append(issue(FAIL, f"{origin}: {ranks} of segments does not fit in this host's {human(total)} of memory",
                             f"{origin}：{ranks_zh} 的 segment 超出本机内存 {human(total)}",
                             hint=(f"lower it below {human(total // max(ctx.ranks, 1) * 8 // 10)} per rank",
                                   f"每个 rank 调低到 {human(total // max(ctx.ranks, 1) * 8 // 10)} 以下"),
                             observed=human(need), expected=f"< {human(total)}", source=SOURCE))
        elif need > avail:
            out.append(issue(WARN, f"{origin}: {ranks} of segments is more than the {human(avail)} available now (of {human(total)})",
                             f"{origin}：{ranks_zh} 的 segment 超过当前可用内存 {human(avail)}（共 {human(total)}）",
                             hint=("lower global_segment_size or free memory before starting vLLM",
                                   "调小 global_segment_size，或在启动 vLLM 前释放内存"),
                             observed=human(need), expected=f"< {human(avail)}", source=SOURCE))
    lb = data.get("local_buffer_size")
    if lb is not None:
        lsize = parse_size(lb, strings_accepted=strings)
        if lsize.error or (lsize.value or 0) <= 0:
            out.append(issue(FAIL, f"\"local_buffer_size\" = {lb!r}: {lsize.error or 'not a positive size'}",
                             f"\"local_buffer_size\" = {lb!r}：{lsize.error or '不是正数'}",
                             hint=hint, observed=repr(lb), expected="positive size", source=SOURCE))
        elif fabric:
            out.append(issue(INFO, "\"local_buffer_size\" is ignored with ASCEND_ENABLE_USE_FABRIC_MEM=1 (vllm-ascend passes 0)",
                             "ASCEND_ENABLE_USE_FABRIC_MEM=1 时忽略 \"local_buffer_size\"（vllm-ascend 传 0）",
                             observed=repr(lb), source=SOURCE))
    return out


def _ssd_issues(data: Dict[str, Any], ctx: ConfigContext) -> List[Issue]:
    if "enable_ssd_offload" not in data or key_status("enable_ssd_offload", ctx.vllm_ascend, ctx.keys) != "read":
        return []
    raw = data["enable_ssd_offload"]
    out: List[Issue] = []
    if isinstance(raw, str):
        # bool("false") is True: the string turns offload on.
        out.append(issue(WARN, f"\"enable_ssd_offload\": {raw!r} is a string; vllm-ascend applies bool() to it, so it means {bool(raw)}",
                         f"\"enable_ssd_offload\": {raw!r} 是字符串；vllm-ascend 对其取 bool()，结果为 {bool(raw)}",
                         hint=('"enable_ssd_offload": false  (no quotes)', '"enable_ssd_offload": false（不要加引号）'),
                         observed=repr(raw), expected="true/false", source=SOURCE))
    if not bool(raw):
        return out
    path = data.get("ssd_offload_path", "")
    if not path:
        out.append(issue(FAIL, "enable_ssd_offload is true but ssd_offload_path is empty (ValueError at start-up)",
                         "enable_ssd_offload 为 true 但 ssd_offload_path 为空（启动时 ValueError）",
                         hint=('"ssd_offload_path": "/nvme/mooncake_offload"', '"ssd_offload_path": "/nvme/mooncake_offload"'),
                         source=SOURCE))
    elif not isinstance(path, str) or not path.startswith("/"):
        out.append(issue(FAIL, f"ssd_offload_path must be an absolute path, got: {path!r}",
                         f"ssd_offload_path 必须是绝对路径，实际为：{path!r}",
                         hint=('"ssd_offload_path": "/nvme/mooncake_offload"', '"ssd_offload_path": "/nvme/mooncake_offload"'),
                         observed=repr(path), expected="absolute path", source=SOURCE))
    elif ".." in path.split("/"):
        out.append(issue(FAIL, f"ssd_offload_path {path} contains '..', which Mooncake rejects",
                         f"ssd_offload_path {path} 含有 '..'，Mooncake 会拒绝", observed=path, source=SOURCE))
    need = ctx.ssd_offload_since
    if ctx.mooncake and need and at_least(ctx.mooncake, need) is False:
        out.append(issue(FAIL, f"enable_ssd_offload needs Mooncake >= {need}; {ctx.mooncake} is installed (RuntimeError at start-up)",
                         f"enable_ssd_offload 需要 Mooncake >= {need}；当前为 {ctx.mooncake}（启动时 RuntimeError）",
                         hint=("pip install mooncake-transfer-engine-npu==0.3.11.post1, or set \"enable_ssd_offload\": false",
                               "pip install mooncake-transfer-engine-npu==0.3.11.post1，或设置 \"enable_ssd_offload\": false"),
                         observed=ctx.mooncake, expected=f">= {need}", fixable="auto", source=SOURCE))
    return out


def _key_issues(data: Dict[str, Any], va: Optional[str], keys: Mapping[str, Window]) -> List[Issue]:
    out: List[Issue] = []
    ignored, unknown = [], []
    for key in data:
        status = key_status(key, va, keys)
        if status == "unused":
            ignored.append(f"{key} ({UNUSED[key]})")
        elif status == "not_yet":
            ignored.append(f"{key} (read from vllm-ascend {keys[key][0]} on)")
        elif status == "no_longer":
            ignored.append(f"{key} (no longer read since vllm-ascend {keys[key][1]})")
        elif status == "misleading":
            out.append(issue(WARN, f"\"{key}\" is read by no vllm-ascend version (it appeared in a doc example); the key is \"{MISLEADING[key]}\"",
                             f"没有任何 vllm-ascend 版本读取 \"{key}\"（出自文档示例）；正确的键是 \"{MISLEADING[key]}\"",
                             hint=(f"rename it to \"{MISLEADING[key]}\" (read from vllm-ascend 0.20.2rc1 on)",
                                   f"改名为 \"{MISLEADING[key]}\"（vllm-ascend 0.20.2rc1 起读取）"),
                             observed=key, expected=MISLEADING[key], source=SOURCE))
        elif status == "unknown":
            unknown.append(key)
    if unknown:
        close = {k: _closest(k, keys) for k in unknown}
        out.append(issue(WARN, "unknown key(s) in the Mooncake config, nothing reads them: " + ", ".join(
                             f"{k}" + (f" (did you mean {close[k]}?)" if close[k] else "") for k in unknown),
                         "Mooncake 配置中有未知的键，不会被读取：" + "，".join(
                             f"{k}" + (f"（是否应为 {close[k]}？）" if close[k] else "") for k in unknown),
                         observed=", ".join(unknown), expected=", ".join(keys), source=SOURCE))
    if ignored:
        out.append(issue(INFO, f"key(s) ignored by vllm-ascend {va}: " + "; ".join(ignored),
                         f"vllm-ascend {va} 会忽略这些键：" + "；".join(ignored),
                         observed=", ".join(i.split(" ")[0] for i in ignored), source=SOURCE))
    return out


def _closest(key: str, keys: Mapping[str, Window]) -> Optional[str]:
    import difflib

    match = difflib.get_close_matches(key, list(keys) + list(MISLEADING.values()), n=1, cutoff=0.75)
    return match[0] if match else None


def master_address(text: Optional[str]) -> Optional[str]:
    """master_server_address from a config text (strict, else lenient), for the network probe."""
    if not text:
        return None
    res = jsontext.parse(text)
    data = res.value if res.ok else res.lenient
    if isinstance(data, dict) and isinstance(data.get("master_server_address"), str):
        return data["master_server_address"]
    return None
