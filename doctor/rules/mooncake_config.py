"""The Mooncake JSON that vllm-ascend's KV-pool backend reads from MOONCAKE_CONFIG_PATH.

Pure: text + the installed vllm-ascend version + a few environment values + the host's memory
in, Issues out. What each version reads comes from vllm-ascend's ``MooncakeStoreConfig``
(config_data.py in v0.11, kvpool/backend/mooncake_backend.py in v0.12-v0.13,
kv_transfer/kv_pool/ascend_store/backend/mooncake_backend.py from v0.14); see
docs/sources/mooncake.md (config).
"""
from __future__ import annotations

from doctor.record import record
from typing import Any, Dict, List, Mapping, Optional, Tuple

from doctor.i18n import T, Text, join
from doctor.versions import pep440
from doctor.parse import jsontext
from doctor.rules.issues import FAIL, INFO, OK, WARN, Fixable, Issue, issue
from doctor.parse.sizes import GIB, human, parse_size
from doctor.lazyre import lazy

MOONCAKE_DOC = "docs/sources/mooncake.md"
SOURCE = f"{MOONCAKE_DOC}#config"
VA_V011 = "https://github.com/vllm-project/vllm-ascend/blob/v0.11.0"
VALIDATE = "python -m json.tool \"$MOONCAKE_CONFIG_PATH\""

# Which vllm-ascend reads which key: ConfigContext.keys, from matrices/mooncake.toml (scope "config").
Window = Tuple[Optional[str], Optional[str]]
# Parsed by v0.11-v0.12.0rc1 but never used: the address always comes from get_ip() (the
# catalogue's mooncake.config.key.unused says so).
UNUSED = ("local_hostname",)
# Shown in a doc example (v0.12.0rc1 kv_pool.md) but never parsed by any version.
MISLEADING = {"alloc_in_same_node": "prefer_alloc_in_same_node"}

PLACEHOLDER = lazy(r"(?i)^[x.]+$|[<>]|your")
HOST_PORT = lazy(r"^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.\-]+):(\d{1,5})$")


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


@record
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

    def __post_init__(self) -> None:
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
        out.append(issue(FAIL, T("mooncake.config.not_json", path=ctx.path, where=res.describe()),
                         T("mooncake.config.not_json.hint", spots=len(res.spots) or 1, validate=VALIDATE),
                         observed=f"line {res.line}, column {res.col}", expected="strict JSON", evidence=tuple(evidence),
                         source=SOURCE))
        data = res.lenient
        if data is None:
            return out
    if not isinstance(data, dict):
        out.append(issue(FAIL, T("mooncake.config.not_object", path=ctx.path, type=type(data).__name__),
                         observed=type(data).__name__, expected="object", source=SOURCE))
        return out
    out.extend(check_data(data, ctx, strict_ok=res.ok))
    return out


P2P_HINT = T("mooncake.config.p2phandshake_hint")


def check_data(data: Dict[str, Any], ctx: ConfigContext, strict_ok: bool = True) -> List[Issue]:
    va = ctx.vllm_ascend
    out: List[Issue] = []
    lenient = "" if strict_ok else T("mooncake.config.lenient")

    # -- protocol ----------------------------------------------------------------------------
    v11 = at_least(va, ctx.since.get("mooncake_store_backend_reader")) is False
    protocol = data.get("protocol")
    if protocol is None:
        if v11:
            out.append(issue(WARN, T("mooncake.config.protocol_unset", lenient=lenient),
                             T("mooncake.config.protocol_unset.hint"),
                             observed="unset (tcp)", expected="ascend", source=SOURCE))
    elif protocol != "ascend":
        if v11:
            out.append(issue(WARN, T("mooncake.config.protocol_not_npu", protocol=repr(protocol), lenient=lenient),
                             T("mooncake.config.protocol_hint"), observed=str(protocol), expected="ascend", source=SOURCE))
        else:
            raised = ("NotImplementedError: MooncakeBackend does not support protocol "
                      f"{protocol!r}" if at_least(va, ctx.since.get("mooncake_protocol_not_implemented")) is not False else
                      T("mooncake.config.protocol_setup_fails"))
            out.append(issue(FAIL, T("mooncake.config.protocol_unsupported", protocol=repr(protocol), raised=raised,
                                     lenient=lenient),
                             T("mooncake.config.protocol_unsupported.hint"),
                             observed=str(protocol), expected="ascend", source=SOURCE))
    if v11 and (protocol or "tcp") == "ascend" and data.get("use_ascend_direct") is not True:
        out.append(issue(WARN, T("mooncake.config.legacy_hostname", lenient=lenient),
                         T("mooncake.config.legacy_hostname.hint"),
                         observed=repr(data.get("use_ascend_direct")), expected="true",
                         source=f"{VA_V011}/vllm_ascend/distributed/mooncake/config_data.py; "
                                f"{VA_V011}/vllm_ascend/distributed/mooncake/mooncake_store.py"))

    # -- metadata server -------------------------------------------------------------------------
    meta = data.get("metadata_server")
    if meta is None:
        out.append(issue(FAIL, T("mooncake.config.metadata_missing", lenient=lenient), P2P_HINT,
                         expected="P2PHANDSHAKE", source=SOURCE))
    elif not isinstance(meta, str):
        out.append(issue(FAIL, T("mooncake.config.metadata_type", type=type(meta).__name__), P2P_HINT,
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
        out.append(issue(INFO, T("mooncake.config.device_name", device=repr(device)), T("mooncake.config.device_name.hint"),
                         observed=device, expected='""', source=SOURCE))
    out.extend(_ssd_issues(data, ctx))
    for key in ("preferred_segment", "prefer_alloc_in_same_node"):
        if key in data and not isinstance(data[key], bool) and key_status(key, va, ctx.keys) == "read":
            out.append(issue(WARN, T("mooncake.config.not_bool", key=key, value=repr(data[key])),
                             observed=repr(data[key]), expected="true/false", source=SOURCE))
    out.extend(_key_issues(data, va, ctx.keys))
    if not any(i.status in (FAIL, WARN) for i in out):
        out.insert(0, issue(OK, T("mooncake.config.valid", path=ctx.path,
                                  version=va or T("mooncake.version_unknown"), protocol=data.get("protocol", "ascend"),
                                  meta=meta, master=data.get("master_server_address")),
                            observed="valid", source=SOURCE))
    return out


def _metadata_issue(meta: str) -> Issue:
    low = meta.lower()
    if low == "p2phandshake":
        return issue(FAIL, T("mooncake.config.metadata_spelling", meta=repr(meta)), P2P_HINT,
                     observed=meta, expected="P2PHANDSHAKE", source=SOURCE)
    if low.startswith(("http://", "https://")):
        return issue(INFO, T("mooncake.config.metadata_http", meta=meta), observed=meta, expected="P2PHANDSHAKE", source=SOURCE)
    if low.startswith(("etcd://", "redis://")) or HOST_PORT.match(meta):
        return issue(INFO, T("mooncake.config.metadata_etcd", meta=meta), observed=meta, expected="P2PHANDSHAKE", source=SOURCE)
    return issue(FAIL, T("mooncake.config.metadata_unknown", meta=repr(meta)), P2P_HINT,
                 observed=meta, expected="P2PHANDSHAKE", source=SOURCE)


def check_host_port(value: Any) -> Optional[Text]:
    """None when value is a usable host:port, else why not."""
    if not isinstance(value, str):
        return T("mooncake.config.address.type", type=type(value).__name__)
    host_part = value.strip().rsplit(":", 1)[0]
    if PLACEHOLDER.search(host_part):
        return T("mooncake.config.address.placeholder")
    if "://" in value:
        return T("mooncake.config.address.url")
    m = HOST_PORT.match(value.strip())
    if not m:
        return T("mooncake.config.address.not_host_port")
    if not 0 < int(m.group(2)) < 65536:
        return T("mooncake.config.address.port_range", port=m.group(2))
    return None


def _master_issues(data: Dict[str, Any], ctx: ConfigContext) -> List[Issue]:
    out: List[Issue] = []
    env_master = ctx.env.get("MOONCAKE_MASTER")
    honours_env = at_least(ctx.vllm_ascend, ctx.since.get("mooncake_env_overrides")) is not False
    addr = data.get("master_server_address")
    if env_master and honours_env:
        out.append(issue(INFO, T("mooncake.config.master_env", env=env_master, addr=addr), observed=env_master, source=SOURCE))
        bad = check_host_port(env_master)
        if bad:
            out.append(issue(FAIL, T("mooncake.config.master_env_bad", env=env_master, why=bad),
                             T("mooncake.config.master_env_bad.hint"),
                             observed=env_master, expected="host:port", source=SOURCE))
        return out
    if env_master:
        out.append(issue(INFO, T("mooncake.config.master_env_ignored", env=env_master, version=ctx.vllm_ascend),
                         observed=env_master, source=SOURCE))
    if addr is None:
        out.append(issue(FAIL, T("mooncake.config.master_missing"), T("mooncake.config.master_missing.hint"),
                         expected="host:port", source=SOURCE))
        return out
    bad = check_host_port(addr)
    if bad:
        out.append(issue(FAIL, T("mooncake.config.master_bad", addr=repr(addr), why=bad), T("mooncake.config.master_bad.hint"),
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
        out.append(issue(INFO, T("mooncake.config.size_env", env=env_size, size=data.get("global_segment_size")),
                         observed=env_size, source=SOURCE))
    else:
        if env_size:
            out.append(issue(INFO, T("mooncake.config.size_env_ignored", env=env_size, version=va),
                             observed=env_size, source=SOURCE))
        raw, origin = data.get("global_segment_size", default), "\"global_segment_size\""
    fabric = ctx.env.get("ASCEND_ENABLE_USE_FABRIC_MEM") == "1"
    size = parse_size(raw, strings_accepted=strings)
    hint = T("mooncake.config.size_hint_units") if strings else T("mooncake.config.size_hint_bytes")
    if size.error:
        out.append(issue(FAIL, T("mooncake.config.size_error", origin=origin, raw=repr(raw), error=size.error), hint,
                         observed=repr(raw), expected="positive size", source=SOURCE))
        return out
    n = size.value or 0
    if n <= 0:
        out.append(issue(FAIL, T("mooncake.config.size_not_positive", origin=origin, raw=repr(raw)), hint,
                         observed=repr(raw), expected="> 0", source=SOURCE))
        return out
    if fabric and n % GIB:
        out.append(issue(FAIL, T("mooncake.config.size_not_gb", origin=origin, size=human(n)),
                         T("mooncake.config.size_not_gb.hint"),
                         observed=str(n), expected="multiple of 1073741824", source=f"{MOONCAKE_DOC}#environment"))
    if ctx.mem_total_kb:
        total = ctx.mem_total_kb * 1024
        avail = (ctx.mem_available_kb or ctx.mem_total_kb) * 1024
        need = n * max(ctx.ranks, 1)
        ranks = T("mooncake.config.ranks", ranks=ctx.ranks, size=human(n), need=human(need)) if ctx.ranks > 1 else human(n)
        if n > total or need > total:
            out.append(issue(FAIL, T("mooncake.config.size_too_big", origin=origin, ranks=ranks, total=human(total)),
                             T("mooncake.config.size_too_big.hint", per_rank=human(total // max(ctx.ranks, 1) * 8 // 10)),
                             observed=human(need), expected=f"< {human(total)}", source=SOURCE))
        elif need > avail:
            out.append(issue(WARN, T("mooncake.config.size_over_available", origin=origin, ranks=ranks, avail=human(avail),
                                     total=human(total)),
                             T("mooncake.config.size_over_available.hint"),
                             observed=human(need), expected=f"< {human(avail)}", source=SOURCE))
    lb = data.get("local_buffer_size")
    if lb is not None:
        lsize = parse_size(lb, strings_accepted=strings)
        if lsize.error or (lsize.value or 0) <= 0:
            out.append(issue(FAIL, T("mooncake.config.local_buffer_bad", raw=repr(lb),
                                     error=lsize.error or T("mooncake.config.not_positive")), hint,
                             observed=repr(lb), expected="positive size", source=SOURCE))
        elif fabric:
            out.append(issue(INFO, T("mooncake.config.local_buffer_fabric"), observed=repr(lb), source=SOURCE))
    return out


def _ssd_issues(data: Dict[str, Any], ctx: ConfigContext) -> List[Issue]:
    if "enable_ssd_offload" not in data or key_status("enable_ssd_offload", ctx.vllm_ascend, ctx.keys) != "read":
        return []
    raw = data["enable_ssd_offload"]
    out: List[Issue] = []
    if isinstance(raw, str):
        # bool("false") is True: the string turns offload on.
        out.append(issue(WARN, T("mooncake.config.ssd_string", raw=repr(raw), value=bool(raw)),
                         T("mooncake.config.ssd_string.hint"), observed=repr(raw), expected="true/false", source=SOURCE))
    if not bool(raw):
        return out
    path = data.get("ssd_offload_path", "")
    if not path:
        out.append(issue(FAIL, T("mooncake.config.ssd_no_path"), T("mooncake.config.ssd_path_hint"), source=SOURCE))
    elif not isinstance(path, str) or not path.startswith("/"):
        out.append(issue(FAIL, T("mooncake.config.ssd_relative", path=repr(path)), T("mooncake.config.ssd_path_hint"),
                         observed=repr(path), expected="absolute path", source=SOURCE))
    elif ".." in path.split("/"):
        out.append(issue(FAIL, T("mooncake.config.ssd_dotdot", path=path), observed=path, source=SOURCE))
    need = ctx.ssd_offload_since
    if ctx.mooncake and need and at_least(ctx.mooncake, need) is False:
        out.append(issue(FAIL, T("mooncake.config.ssd_old_mooncake", version=ctx.mooncake, need=need),
                         T("mooncake.config.ssd_old_mooncake.hint"),
                         observed=ctx.mooncake, expected=f">= {need}", fixable=Fixable.AUTO, source=SOURCE))
    return out


def _key_issues(data: Dict[str, Any], va: Optional[str], keys: Mapping[str, Window]) -> List[Issue]:
    out: List[Issue] = []
    ignored: List[Text] = []
    names: List[str] = []
    unknown: List[str] = []
    for key in data:
        status = key_status(key, va, keys)
        if status == "unused":
            ignored.append(T("mooncake.config.key.unused", key=key))
        elif status == "not_yet":
            ignored.append(T("mooncake.config.key.not_yet", key=key, first=keys[key][0]))
        elif status == "no_longer":
            ignored.append(T("mooncake.config.key.no_longer", key=key, last=keys[key][1]))
        elif status == "misleading":
            out.append(issue(WARN, T("mooncake.config.key.misleading", key=key, right=MISLEADING[key]),
                             T("mooncake.config.key.misleading.hint", right=MISLEADING[key]),
                             observed=key, expected=MISLEADING[key], source=SOURCE))
        elif status == "unknown":
            unknown.append(key)
        if status in ("unused", "not_yet", "no_longer"):
            names.append(key)
    if unknown:
        listed = [T("mooncake.config.key.did_you_mean", key=k, close=c) if (c := _closest(k, keys)) else k for k in unknown]
        out.append(issue(WARN, T("mooncake.config.key.unknown", keys=join(listed, "sep.comma")),
                         observed=", ".join(unknown), expected=", ".join(keys), source=SOURCE))
    if ignored:
        out.append(issue(INFO, T("mooncake.config.key.ignored", version=va, keys=join(ignored, "sep.semi")),
                         observed=", ".join(names), source=SOURCE))
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
