"""The user's ``vllm serve`` command line (``--serve-args`` / ``--serve-args-file``).

A serve-args file may be a whole launch script as in the seeds: ``export`` lines, then
``vllm serve ... --kv-transfer-config '{...}'`` with the JSON spread over several lines. We split
it with :mod:`shlex` (quotes, backslash-newline continuations, ``;``/``&&`` separators), keep the
exports (MOONCAKE_CONFIG_PATH, ASCEND_BUFFER_POOL ... set there count for the checks) and judge
``--kv-transfer-config`` against what the INSTALLED vllm-ascend registers and reads.
"""
from __future__ import annotations

import difflib
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from doctor.parse import jsontext
from doctor.rules.mooncake_config import at_least, window_state
from doctor.rules.issues import FAIL, INFO, OK, WARN, Issue, issue

SOURCE = "facts/mooncake.md §5 (vllm-ascend --kv-transfer-config)"
ROLES = ("kv_producer", "kv_consumer", "kv_both")
# vLLM's KVTransferConfig fields (vllm/config/kv_transfer.py).
TOP_KEYS = ("kv_connector", "engine_id", "kv_buffer_device", "kv_buffer_size", "kv_role", "kv_rank",
            "kv_parallel_size", "kv_ip", "kv_port", "kv_connector_extra_config", "kv_connector_module_path",
            "kv_load_failure_policy", "enable_permute_local_kv")

P2P = ("MooncakeConnectorV1", "MooncakeHybridConnector")
LAYERWISE = ("MooncakeLayerwiseConnector",)
STORE = ("MooncakeConnectorStoreV1", "AscendStoreConnector")
HEAD = "0.26.0.dev0"  # keys seen only after v0.25.1rc1 (vllm-ascend main)

# Which extra-config keys each connector family reads, and which store backends exist from which
# vllm-ascend on: ServeContext.extra_keys / .backends, from matrices/mooncake.toml (scopes p2p,
# layerwise, store, store_backend).
Window = Tuple[Optional[str], Optional[str]]


def family(connector: Optional[str]) -> Optional[str]:
    if connector in P2P:
        return "p2p"
    if connector in LAYERWISE:
        return "layerwise"
    if connector in STORE:
        return "store"
    return None


@dataclass
class ServeCommand:
    argv: List[str] = field(default_factory=list)  # the vllm serve command (or just the options)
    exports: Dict[str, str] = field(default_factory=dict)
    kv_config: Optional[str] = None  # --kv-transfer-config text (last one wins, as in argparse)
    kv_config_count: int = 0
    kv_dotted: Dict[str, str] = field(default_factory=dict)  # --kv-transfer-config.kv_role=...
    options: Dict[str, str] = field(default_factory=dict)  # other --long options, last value
    error: Optional[str] = None

    @property
    def ranks(self) -> int:
        """Worker processes of this instance on one host (tp x pp x local dp)."""
        def num(*names: str) -> int:
            for n in names:
                v = self.options.get(n)
                if v and v.isdigit():
                    return max(int(v), 1)
            return 1
        return num("tensor-parallel-size", "tp") * num("pipeline-parallel-size", "pp") * \
            num("data-parallel-size-local", "dpl", "data-parallel-size", "dp")


_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_SHORT = {"-tp": "tp", "-pp": "pp", "-dp": "dp", "-dpl": "dpl"}


_SECRET_OPTION = re.compile(r"(--?[\w.-]*(?:key|token|secret|password|passwd|credential)[\w.-]*)(=|[ \t]+)(\"[^\"]*\"|'[^']*'|\S+)",
                           re.IGNORECASE)
_SECRET_ASSIGN = re.compile(r"\b([A-Za-z_]\w*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)\w*)=(\"[^\"]*\"|'[^']*'|\S+)",
                            re.IGNORECASE)


_SECRET_JSON = re.compile(r'("[\w.-]*(?:password|passwd|secret|token)[\w.-]*"\s*:\s*)"[^"]*"', re.IGNORECASE)


def redact(text: str) -> str:
    """The command line for a snapshot: values of --api-key, HF_TOKEN=..., "ssl_keyfile_password"
    and the like removed (the JSON stays valid)."""
    text = _SECRET_JSON.sub(lambda m: f'{m.group(1)}"<redacted>"', text)
    text = _SECRET_OPTION.sub(lambda m: f"{m.group(1)}{m.group(2)}<redacted>", text)
    return _SECRET_ASSIGN.sub(lambda m: f"{m.group(1)}=<redacted>", text)


def _expand(value: str, env: Mapping[str, str]) -> str:
    return _VAR.sub(lambda m: env.get(m.group(1) or m.group(2), m.group(0)), value)


def split_commands(text: str) -> List[List[str]]:
    """Shell-like words, one list per command (newline ; && || | separate commands)."""
    text = text.replace("\\\r\n", "").replace("\\\n", "")
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    commands: List[List[str]] = [[]]
    skipping = False
    for word in lexer:
        if word and set(word) <= set(";&|\n"):
            skipping = False
            if commands[-1]:
                commands.append([])
            continue
        if skipping:
            continue
        if word.startswith("#"):
            skipping = True  # a comment runs to the end of the line
            continue
        commands[-1].append(word)
    return [c for c in commands if c]


def _is_vllm(cmd: List[str]) -> bool:
    words = [w for w in cmd if not _ASSIGN.match(w)]
    for i, w in enumerate(words):
        base = w.rsplit("/", 1)[-1]
        if base == "vllm" and i + 1 < len(words) and words[i + 1] == "serve":
            return True
        if w in ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.cli.main"):
            return True
    return False


def parse_command(text: str, env: Optional[Mapping[str, str]] = None) -> ServeCommand:
    out = ServeCommand()
    running = dict(env or {})
    try:
        commands = split_commands(text)
    except ValueError as e:  # No closing quotation
        out.error = f"cannot split the command line: {e} (an unbalanced quote?)"
        return out
    chosen: Optional[List[str]] = None
    for cmd in commands:
        if cmd[0] == "export" or (all(_ASSIGN.match(w) for w in cmd)):
            for w in cmd[1:] if cmd[0] == "export" else cmd:
                m = _ASSIGN.match(w)
                if m:
                    running[m.group(1)] = out.exports[m.group(1)] = _expand(m.group(2), running)
            continue
        if _is_vllm(cmd):
            chosen = cmd
        elif chosen is None and any(w.startswith("--kv-transfer-config") or w.startswith("--kv_transfer_config") for w in cmd):
            chosen = cmd
    if chosen is None:
        flat = [w for c in commands for w in c]
        if flat and flat[0].startswith("-"):
            chosen = flat  # only the options were given
    if chosen is None:
        out.error = "no `vllm serve` command found" if commands else "empty command line"
        return out
    # VAR=value words in front of the command set its environment.
    while chosen and _ASSIGN.match(chosen[0]):
        m = _ASSIGN.match(chosen.pop(0))
        out.exports[m.group(1)] = _expand(m.group(2), running)
    out.argv = chosen
    _read_options(out, chosen)
    return out


def _read_options(out: ServeCommand, argv: List[str]) -> None:
    i = 0
    while i < len(argv):
        word = argv[i]
        name, value, has_value = None, None, False
        if word in _SHORT:
            name = _SHORT[word]
        elif word.startswith("--"):
            name, eq, rest = word[2:].partition("=")
            if eq:
                value, has_value = rest, True
        if name is None:
            i += 1
            continue
        if not has_value and i + 1 < len(argv) and not (argv[i + 1].startswith("-") and not argv[i + 1].lstrip("-").isdigit()):
            value, has_value = argv[i + 1], True
            i += 1
        i += 1
        key = name.replace("_", "-")
        if key == "kv-transfer-config":
            out.kv_config, out.kv_config_count = value, out.kv_config_count + 1
        elif key.startswith("kv-transfer-config."):
            out.kv_dotted[name.split(".", 1)[1]] = value if has_value else "true"
        else:
            out.options[key] = value if has_value else "true"


@dataclass
class ServeContext:
    vllm_ascend: Optional[str] = None
    connectors: Dict[str, str] = field(default_factory=dict)  # installed vllm-ascend registry
    modules: List[str] = field(default_factory=list)  # vllm_ascend.distributed.* module names
    vllm_connectors: Dict[str, str] = field(default_factory=dict)  # upstream vLLM registry
    env: Mapping[str, str] = field(default_factory=dict)  # host env + the exports of the file
    mooncake_installed: bool = True
    extra_keys: Mapping[str, Mapping[str, Window]] = field(default_factory=dict)  # family -> key windows
    backends: Mapping[str, Optional[str]] = field(default_factory=dict)  # store backend -> first vllm-ascend


def kv_config(cmd: ServeCommand) -> Tuple[Optional[Dict[str, Any]], Optional[jsontext.JsonResult]]:
    """The effective --kv-transfer-config object (JSON plus dotted overrides)."""
    if cmd.kv_config is None and not cmd.kv_dotted:
        return None, None
    res = jsontext.parse(cmd.kv_config) if cmd.kv_config is not None else None
    data: Optional[Dict[str, Any]] = None
    if res is None:
        data = {}
    elif res.ok and isinstance(res.value, dict):
        data = dict(res.value)
    elif not res.ok and isinstance(res.lenient, dict):
        data = dict(res.lenient)
    if data is not None:
        for k, v in cmd.kv_dotted.items():
            parsed = jsontext.parse(v)
            data[k] = parsed.value if parsed.ok else v
    return data, res


def check(cmd: ServeCommand, ctx: ServeContext) -> List[Issue]:
    if cmd.error:
        return [issue(FAIL, f"serve arguments: {cmd.error}", f"serve 参数：{cmd.error}",
                      hint=("pass the exact command, e.g. --serve-args-file launch.sh", "传入完整命令，例如 --serve-args-file launch.sh"),
                      source=SOURCE)]
    data, res = kv_config(cmd)
    out: List[Issue] = []
    if data is None and res is None:
        return [issue(INFO, "the vllm serve command has no --kv-transfer-config: no KV connector, Mooncake is not used by it",
                      "vllm serve 命令没有 --kv-transfer-config：未使用 KV connector，也不会用到 Mooncake", source=SOURCE)]
    if cmd.kv_config_count > 1:
        out.append(issue(WARN, f"--kv-transfer-config is given {cmd.kv_config_count} times; only the last one counts",
                         f"--kv-transfer-config 出现了 {cmd.kv_config_count} 次；只有最后一次生效", source=SOURCE))
    if res is not None and not res.ok:
        evidence = [res.excerpt] + [f"{s.where()}: {s.kind.replace('_', ' ')} {s.text}" for s in res.spots]
        out.append(issue(FAIL, f"--kv-transfer-config is not valid JSON ({res.describe()}); vLLM refuses to start",
                         f"--kv-transfer-config 不是合法 JSON（{res.describe_zh()}）；vLLM 无法启动",
                         hint=("put the JSON in single quotes in the shell: --kv-transfer-config '{\"kv_connector\": ..., \"kv_role\": \"kv_both\"}'",
                               "在 shell 中用单引号包住 JSON：--kv-transfer-config '{\"kv_connector\": ..., \"kv_role\": \"kv_both\"}'"),
                         observed=f"line {res.line}, column {res.col}", expected="JSON object",
                         evidence=tuple(evidence), source=SOURCE))
        if data is None:
            return out
    if data is None:
        out.append(issue(FAIL, "--kv-transfer-config must be a JSON object", "--kv-transfer-config 必须是 JSON 对象",
                         observed=type(res.value).__name__ if res else None, source=SOURCE))
        return out
    out.extend(_check_object(data, ctx))
    if not any(i.status in (FAIL, WARN) for i in out):
        out.insert(0, issue(OK, f"--kv-transfer-config: {data.get('kv_connector')} as {data.get('kv_role')} is valid for vllm-ascend "
                                f"{ctx.vllm_ascend or '(version unknown)'}",
                            f"--kv-transfer-config：{data.get('kv_connector')}（{data.get('kv_role')}）对 vllm-ascend "
                            f"{ctx.vllm_ascend or '（版本未知）'} 有效",
                            observed=str(data.get("kv_connector")), source=SOURCE))
    return out


def _check_object(data: Dict[str, Any], ctx: ServeContext) -> List[Issue]:
    out: List[Issue] = []
    va = ctx.vllm_ascend
    name = data.get("kv_connector")
    unknown_top = [k for k in data if k not in TOP_KEYS]
    if unknown_top:
        out.append(issue(WARN, f"unknown --kv-transfer-config field(s): {', '.join(unknown_top)} (vLLM's KVTransferConfig has no such field)",
                         f"--kv-transfer-config 中有未知字段：{', '.join(unknown_top)}（vLLM 的 KVTransferConfig 没有这些字段）",
                         hint=("connector options go inside \"kv_connector_extra_config\"", "connector 的参数应放在 \"kv_connector_extra_config\" 中"),
                         observed=", ".join(unknown_top), source=SOURCE))
    if not name:
        out.append(issue(FAIL, "--kv-transfer-config has no \"kv_connector\"", "--kv-transfer-config 缺少 \"kv_connector\"",
                         hint=('"kv_connector": "MooncakeConnectorStoreV1"', '"kv_connector": "MooncakeConnectorStoreV1"'),
                         source=SOURCE))
    else:
        out.extend(_connector_issues(str(name), data, ctx))
    role = data.get("kv_role")
    if role is None and name:
        out.append(issue(FAIL, "\"kv_role\" is missing: vLLM requires it when kv_connector is set",
                         "缺少 \"kv_role\"：设置 kv_connector 时 vLLM 要求同时设置 kv_role",
                         hint=(f'"kv_role": one of {", ".join(ROLES)}', f'"kv_role"：{"、".join(ROLES)} 之一'),
                         expected=" | ".join(ROLES), source=SOURCE))
    elif role is not None and role not in ROLES:
        out.append(issue(FAIL, f"\"kv_role\": {role!r} is not one of {', '.join(ROLES)}",
                         f"\"kv_role\": {role!r} 不是 {'、'.join(ROLES)} 之一",
                         hint=('"kv_role": "kv_both"  (KV pool) or kv_producer / kv_consumer (prefill / decode)',
                               '"kv_role": "kv_both"（KV 池）或 kv_producer / kv_consumer（prefill / decode）'),
                         observed=str(role), expected=" | ".join(ROLES), source=SOURCE))
    elif role == "kv_both" and family(name) in ("p2p", "layerwise"):
        out.append(issue(WARN, f"{name} is a prefill/decode disaggregation connector: the prefill instance is kv_producer, the decode instance kv_consumer",
                         f"{name} 是 PD 分离 connector：prefill 实例应为 kv_producer，decode 实例为 kv_consumer",
                         observed=str(role), expected="kv_producer | kv_consumer", source=SOURCE))
    policy = data.get("kv_load_failure_policy")
    if policy is not None and policy not in ("fail", "recompute"):
        out.append(issue(FAIL, f"\"kv_load_failure_policy\": {policy!r} is not fail or recompute",
                         f"\"kv_load_failure_policy\": {policy!r} 不是 fail 或 recompute", observed=str(policy), source=SOURCE))
    extra = data.get("kv_connector_extra_config", {})
    if not isinstance(extra, dict):
        out.append(issue(FAIL, "\"kv_connector_extra_config\" must be a JSON object", "\"kv_connector_extra_config\" 必须是 JSON 对象",
                         observed=type(extra).__name__, source=SOURCE))
        extra = {}
    fam = family(name)
    if fam:
        out.extend(_extra_issues(fam, str(name), extra, va, ctx.extra_keys.get(fam, {})))
    if fam == "p2p" or (fam == "layerwise" and at_least(va, ctx.extra_keys.get("layerwise", {}).get("prefill", (None, None))[1]) is False):
        out.extend(_prefill_decode(str(name), extra))
    if fam == "store":
        out.extend(_store_issues(str(name), extra, ctx))
    elif fam in ("p2p", "layerwise") and ctx.env.get("MOONCAKE_CONFIG_PATH"):
        out.append(issue(INFO, f"{name} does not read MOONCAKE_CONFIG_PATH (only the KV-pool connector does); it starts the transfer engine with P2PHANDSHAKE/ascend itself",
                         f"{name} 不读取 MOONCAKE_CONFIG_PATH（只有 KV 池 connector 读取）；它直接以 P2PHANDSHAKE/ascend 启动传输引擎",
                         source="facts/mooncake.md §4"))
    return out


def _connector_issues(name: str, data: Dict[str, Any], ctx: ServeContext) -> List[Issue]:
    out: List[Issue] = []
    module = data.get("kv_connector_module_path")
    if module:
        if ctx.modules and module.startswith("vllm_ascend.") and module not in ctx.modules:
            moved = [m for m in ctx.modules if m.rsplit(".", 1)[-1] == module.rsplit(".", 1)[-1]]
            out.append(issue(FAIL, f"kv_connector_module_path {module} does not exist in the installed vllm-ascend {ctx.vllm_ascend}"
                                   + (f" (it moved to {moved[0]})" if moved else ""),
                             f"已安装的 vllm-ascend {ctx.vllm_ascend} 中不存在 kv_connector_module_path {module}"
                             + (f"（已移动到 {moved[0]}）" if moved else ""),
                             hint=(f'"kv_connector_module_path": "{moved[0]}"' if moved else "remove kv_connector_module_path and use a registered name",
                                   f'"kv_connector_module_path": "{moved[0]}"' if moved else "删除 kv_connector_module_path，使用已注册的名称"),
                             observed=module, expected=moved[0] if moved else None, source=SOURCE))
        return out
    if not ctx.connectors:
        out.append(issue(INFO, f"kv_connector {name}: the installed vllm-ascend's connector registry could not be read, the name is not verified",
                         f"kv_connector {name}：无法读取已安装 vllm-ascend 的 connector 注册表，未校验该名称", source=SOURCE))
        return out
    if name in ctx.connectors:
        return out
    if name in ctx.vllm_connectors:
        out.append(issue(WARN, f"{name} is upstream vLLM's connector, not one of vllm-ascend's (it is not built for Ascend NPUs)",
                         f"{name} 是上游 vLLM 的 connector，不是 vllm-ascend 的（不适用于昇腾 NPU）",
                         hint=(f"use one of vllm-ascend {ctx.vllm_ascend}'s: {', '.join(sorted(c for c in ctx.connectors if 'Mooncake' in c or 'Store' in c))}",
                               f"使用 vllm-ascend {ctx.vllm_ascend} 提供的：{', '.join(sorted(c for c in ctx.connectors if 'Mooncake' in c or 'Store' in c))}"),
                         observed=name, source=SOURCE))
        return out
    close = difflib.get_close_matches(name, list(ctx.connectors), n=1, cutoff=0.6)
    out.append(issue(FAIL, f"kv_connector {name!r} is not registered by the installed vllm-ascend {ctx.vllm_ascend}"
                           + (f" (did you mean {close[0]}?)" if close else ""),
                     f"已安装的 vllm-ascend {ctx.vllm_ascend} 没有注册 kv_connector {name!r}"
                     + (f"（是否应为 {close[0]}？）" if close else ""),
                     hint=(f"registered: {', '.join(sorted(ctx.connectors))}", f"已注册：{', '.join(sorted(ctx.connectors))}"),
                     observed=name, expected=close[0] if close else None, source=SOURCE))
    return out


def _extra_issues(fam: str, name: str, extra: Dict[str, Any], va: Optional[str],
                  table: Mapping[str, Window]) -> List[Issue]:
    out: List[Issue] = []
    ignored, unknown = [], []
    for key in extra:
        if key not in table:
            unknown.append(key)
            continue
        state = window_state(table[key], va)
        if state == "not_yet":
            when = "vllm-ascend main (after 0.25.1rc1)" if table[key][0] == HEAD else f"vllm-ascend {table[key][0]}"
            ignored.append(f"{key} (read from {when} on)")
        elif state == "no_longer":
            ignored.append(f"{key} (no longer read since vllm-ascend {table[key][1]})")
    if fam == "store" and "mooncake_rpc_port" in extra and window_state(table["lookup_rpc_port"], va) == "read":
        out.append(issue(INFO, "mooncake_rpc_port is deprecated: vllm-ascend reads lookup_rpc_port first and logs a warning for the old name",
                         "mooncake_rpc_port 已废弃：vllm-ascend 优先读取 lookup_rpc_port，旧名称会打印告警",
                         hint=('rename it: "lookup_rpc_port": <a port unique per instance>', '改名为 "lookup_rpc_port": <每个实例唯一的端口>'),
                         observed="mooncake_rpc_port", expected="lookup_rpc_port", source=SOURCE))
    if unknown:
        out.append(issue(WARN, f"kv_connector_extra_config key(s) that {name} does not read: {', '.join(unknown)}",
                         f"{name} 不读取这些 kv_connector_extra_config 键：{', '.join(unknown)}",
                         hint=(f"known for {name}: {', '.join(k for k in table if window_state(table[k], va) == 'read')}",
                               f"{name} 支持的键：{', '.join(k for k in table if window_state(table[k], va) == 'read')}"),
                         observed=", ".join(unknown), source=SOURCE))
    if ignored:
        out.append(issue(INFO, f"kv_connector_extra_config key(s) ignored by vllm-ascend {va}: " + "; ".join(ignored),
                         f"vllm-ascend {va} 会忽略这些 kv_connector_extra_config 键：" + "；".join(ignored),
                         observed=", ".join(i.split(" ")[0] for i in ignored), source=SOURCE))
    return out


def _prefill_decode(name: str, extra: Dict[str, Any]) -> List[Issue]:
    out: List[Issue] = []
    sizes: Dict[str, Dict[str, Any]] = {}
    for side in ("prefill", "decode"):
        cfg = extra.get(side)
        missing = [k for k in ("tp_size", "dp_size") if not isinstance(cfg, dict) or k not in cfg]
        if missing:
            out.append(issue(FAIL, f"{name} needs kv_connector_extra_config.{side}.{{tp_size, dp_size}}; missing {', '.join(missing)} "
                                   "(a bare AssertionError at start-up)",
                             f"{name} 需要 kv_connector_extra_config.{side}.{{tp_size, dp_size}}；缺少 {', '.join(missing)}"
                             "（启动时报 AssertionError）",
                             hint=(f'"{side}": {{"tp_size": 8, "dp_size": 1}}', f'"{side}": {{"tp_size": 8, "dp_size": 1}}'),
                             expected=f"{side}.tp_size, {side}.dp_size", source=SOURCE))
        elif isinstance(cfg, dict):
            sizes[side] = cfg
    if "prefill" in sizes and "decode" in sizes:
        p, d = sizes["prefill"].get("tp_size"), sizes["decode"].get("tp_size")
        if isinstance(p, int) and isinstance(d, int) and p < d:
            out.append(issue(FAIL, f"prefill_tp_size: {p} must be greater than or equal to the decode_tp_size: {d}",
                             f"prefill_tp_size（{p}）必须大于或等于 decode_tp_size（{d}）",
                             observed=f"prefill {p} < decode {d}", source=SOURCE))
        if sizes["decode"].get("pp_size", 1) != 1:
            out.append(issue(FAIL, f"decode pp size must be 1 (got {sizes['decode'].get('pp_size')})",
                             f"decode 的 pp_size 必须为 1（实际为 {sizes['decode'].get('pp_size')}）", source=SOURCE))
    return out


def _store_issues(name: str, extra: Dict[str, Any], ctx: ServeContext) -> List[Issue]:
    out: List[Issue] = []
    va = ctx.vllm_ascend
    backend = extra.get("backend", "mooncake")
    backend_window = ctx.extra_keys.get("store", {}).get("backend", (None, None))
    if "backend" in extra and window_state(backend_window, va) == "read":
        known = [b for b, since in ctx.backends.items() if since is None or at_least(va, since) is not False]
        if str(backend).lower() not in known:
            out.append(issue(FAIL, f"backend {backend!r}: Unsupported KV pool backend (vllm-ascend {va} has {', '.join(known)})",
                             f"backend {backend!r}：不支持的 KV 池后端（vllm-ascend {va} 支持 {', '.join(known)}）",
                             observed=str(backend), expected=" | ".join(known), source=SOURCE))
            return out
    if str(backend).lower() != "mooncake" and window_state(backend_window, va) == "read":
        return out
    if not ctx.env.get("MOONCAKE_CONFIG_PATH"):
        out.append(issue(FAIL, f"{name} with the mooncake backend reads MOONCAKE_CONFIG_PATH, which is not set "
                               "(\"The environment variable 'MOONCAKE_CONFIG_PATH' is not set.\")",
                         f"{name}（mooncake 后端）需要 MOONCAKE_CONFIG_PATH，但它未设置",
                         hint=("export MOONCAKE_CONFIG_PATH=/path/to/mooncake.json   (in the shell that starts vllm)",
                               "export MOONCAKE_CONFIG_PATH=/path/to/mooncake.json（在启动 vllm 的 shell 中）"),
                         expected="MOONCAKE_CONFIG_PATH", source=SOURCE))
    if not ctx.mooncake_installed:
        out.append(issue(FAIL, f"{name} imports mooncake, which is not installed for this interpreter ('Please install mooncake ...')",
                         f"{name} 需要导入 mooncake，但当前解释器没有安装 mooncake", source=SOURCE))
    if extra.get("use_layerwise") is True and extra.get("load_async") is True:
        out.append(issue(INFO, "load_async has no effect together with use_layerwise (the scheduler loads layer by layer)",
                         "use_layerwise 开启时 load_async 不生效（调度器逐层加载）", source=SOURCE))
    if ctx.env.get("PYTHONHASHSEED") is None:
        out.append(issue(INFO, "PYTHONHASHSEED is not set: vllm-ascend's KV-pool docs ask for the same value (export PYTHONHASHSEED=0) on every "
                               "instance, so block hashes match across instances",
                         "未设置 PYTHONHASHSEED：vllm-ascend KV 池文档要求所有实例设置相同的值（export PYTHONHASHSEED=0），"
                         "这样各实例的 block 哈希才一致",
                         hint=("export PYTHONHASHSEED=0", "export PYTHONHASHSEED=0"), source="facts/mooncake.md §5"))
    return out
