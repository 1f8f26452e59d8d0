"""The user's ``vllm serve`` command line (``--serve-args`` / ``--serve-args-file``).

A serve-args file may be a whole launch script as in the seeds: ``export`` lines, then
``vllm serve ... --kv-transfer-config '{...}'`` with the JSON spread over several lines. We split
it with :mod:`shlex` (quotes, backslash-newline continuations, ``;``/``&&`` separators), keep the
exports (MOONCAKE_CONFIG_PATH, ASCEND_BUFFER_POOL ... set there count for the checks) and judge
``--kv-transfer-config`` against what the INSTALLED vllm-ascend registers and reads.
"""
from __future__ import annotations

import re
import shlex
from doctor.record import field, record
from typing import Any, Dict, List, Mapping, Optional, Tuple

from doctor.i18n import T, Text, join
from doctor.parse import jsontext
from doctor.rules.mooncake_config import at_least, window_state
from doctor.rules.issues import FAIL, INFO, OK, WARN, Issue, issue
from doctor.lazyre import lazy

MOONCAKE_DOC = "docs/sources/mooncake.md"
SOURCE = f"{MOONCAKE_DOC}#serve-args"
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


@record
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


_ASSIGN = lazy(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
_VAR = lazy(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_SHORT = {"-tp": "tp", "-pp": "pp", "-dp": "dp", "-dpl": "dpl"}


_SECRET_OPTION = lazy(r"(--?[\w.-]*(?:key|token|secret|password|passwd|credential)[\w.-]*)(=|[ \t]+)(\"[^\"]*\"|'[^']*'|\S+)",
                           re.IGNORECASE)
_ASSIGNMENT = lazy(r"\b([A-Za-z_]\w*)=(?!<redacted>)(\"[^\"]*\"|'[^']*'|\S+)")
_JSON_KEY = lazy(r'(?<!\\)"([\w.-]+)"\s*:[ \t]*')
# The same JSON inside a double-quoted shell word: \"api_key\": \"value\" (a string value; an
# object value under a secret key stays, its own keys are judged one by one)
_ESCAPED_JSON_STRING = lazy(r'(\\"([\w.-]+)\\"\s*:\s*\\")((?:[^"\\]|\\(?!"))*)(\\")')


def redact(text: str) -> str:
    """The command line for a snapshot: values of --api-key, HF_TOKEN=..., "ssl_keyfile_password"
    and the like removed (the JSON stays valid)."""
    from doctor.parse.redact import is_secret_key, is_secret_name, json_values

    text = json_values(text, is_secret_key, _JSON_KEY)  # "api_key": ..., "auth": {...}
    text = _ESCAPED_JSON_STRING.sub(lambda m: f"{m.group(1)}<redacted>{m.group(4)}" if is_secret_key(m.group(2))
                                    else m.group(0), text)
    # by the option's word parts: --hf-token goes, --max-num-batched-tokens stays (the tuning rules read it)
    text = _SECRET_OPTION.sub(lambda m: f"{m.group(1)}{m.group(2)}<redacted>" if is_secret_key(m.group(1)) else m.group(0),
                              text)
    # NAME=value as the environment would redact it (DB_PASS, SSHPASS, HF_TOKEN; not PWD)
    return _ASSIGNMENT.sub(lambda m: f"{m.group(1)}=<redacted>" if is_secret_name(m.group(1)) else m.group(0), text)


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
    while chosen:
        m = _ASSIGN.match(chosen[0])
        if m is None:
            break
        chosen.pop(0)
        out.exports[m.group(1)] = _expand(m.group(2), running)
    out.argv = chosen
    _read_options(out, chosen)
    return out


def _read_options(out: ServeCommand, argv: List[str]) -> None:
    i = 0
    while i < len(argv):
        word = argv[i]
        name: Optional[str] = None
        value: Optional[str] = None  # None: the option was given without a value
        if word in _SHORT:
            name = _SHORT[word]
        elif word.startswith("--"):
            name, eq, rest = word[2:].partition("=")
            if eq:
                value = rest
        if name is None:
            i += 1
            continue
        if value is None and i + 1 < len(argv) and not (argv[i + 1].startswith("-") and not argv[i + 1].lstrip("-").isdigit()):
            value = argv[i + 1]
            i += 1
        i += 1
        key = name.replace("_", "-")
        if key == "kv-transfer-config":
            out.kv_config, out.kv_config_count = value, out.kv_config_count + 1
        elif key.startswith("kv-transfer-config."):
            out.kv_dotted[name.split(".", 1)[1]] = "true" if value is None else value
        else:
            out.options[key] = "true" if value is None else value


@record
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
        return [issue(FAIL, T("mooncake.serve_args.unparsable", error=cmd.error), T("mooncake.serve_args.unparsable.hint"),
                      source=SOURCE)]
    data, res = kv_config(cmd)
    out: List[Issue] = []
    if data is None and res is None:
        return [issue(INFO, T("mooncake.serve_args.no_kv_config"), source=SOURCE)]
    if cmd.kv_config_count > 1:
        out.append(issue(WARN, T("mooncake.serve_args.repeated", count=cmd.kv_config_count), source=SOURCE))
    if res is not None and not res.ok:
        evidence = [res.excerpt] + [f"{s.where()}: {s.kind.replace('_', ' ')} {s.text}" for s in res.spots]
        out.append(issue(FAIL, T("mooncake.serve_args.not_json", where=res.describe()), T("mooncake.serve_args.not_json.hint"),
                         observed=f"line {res.line}, column {res.col}", expected="JSON object",
                         evidence=tuple(evidence), source=SOURCE))
        if data is None:
            return out
    if data is None:
        out.append(issue(FAIL, T("mooncake.serve_args.not_object"),
                         observed=type(res.value).__name__ if res else None, source=SOURCE))
        return out
    out.extend(_check_object(data, ctx, cmd.options))
    if not any(i.status in (FAIL, WARN) for i in out):
        out.insert(0, issue(OK, T("mooncake.serve_args.valid", connector=data.get("kv_connector"), role=data.get("kv_role"),
                                  version=ctx.vllm_ascend or T("mooncake.version_unknown")),
                            observed=str(data.get("kv_connector")), source=SOURCE))
    return out


def _check_object(data: Dict[str, Any], ctx: ServeContext, options: Optional[Mapping[str, str]] = None) -> List[Issue]:
    out: List[Issue] = []
    va = ctx.vllm_ascend
    name = data.get("kv_connector")
    unknown_top = [k for k in data if k not in TOP_KEYS]
    if unknown_top:
        out.append(issue(WARN, T("mooncake.serve_args.unknown_fields", fields=", ".join(unknown_top)),
                         T("mooncake.serve_args.unknown_fields.hint"), observed=", ".join(unknown_top), source=SOURCE))
    if not name:
        out.append(issue(FAIL, T("mooncake.serve_args.no_connector"), T("mooncake.serve_args.no_connector.hint"), source=SOURCE))
    else:
        out.extend(_connector_issues(str(name), data, ctx))
    role = data.get("kv_role")
    if role is None and name:
        out.append(issue(FAIL, T("mooncake.serve_args.no_role"), T("mooncake.serve_args.no_role.hint", roles=list(ROLES)),
                         expected=" | ".join(ROLES), source=SOURCE))
    elif role is not None and role not in ROLES:
        out.append(issue(FAIL, T("mooncake.serve_args.bad_role", role=repr(role), roles=list(ROLES)),
                         T("mooncake.serve_args.bad_role.hint"),
                         observed=str(role), expected=" | ".join(ROLES), source=SOURCE))
    elif role == "kv_both" and family(name) in ("p2p", "layerwise"):
        out.append(issue(WARN, T("mooncake.serve_args.pd_role", name=name),
                         observed=str(role), expected="kv_producer | kv_consumer", source=SOURCE))
    policy = data.get("kv_load_failure_policy")
    if policy is not None and policy not in ("fail", "recompute"):
        out.append(issue(FAIL, T("mooncake.serve_args.bad_policy", policy=repr(policy)), observed=str(policy), source=SOURCE))
    extra = data.get("kv_connector_extra_config", {})
    if not isinstance(extra, dict):
        out.append(issue(FAIL, T("mooncake.serve_args.extra_not_object"), observed=type(extra).__name__, source=SOURCE))
        extra = {}
    fam = family(name)
    if fam:
        out.extend(_extra_issues(fam, str(name), extra, va, ctx.extra_keys.get(fam, {})))
    if fam == "p2p" or (fam == "layerwise" and at_least(va, ctx.extra_keys.get("layerwise", {}).get("prefill", (None, None))[1]) is False):
        out.extend(_prefill_decode(str(name), extra, role, options or {}))
    if fam == "store":
        out.extend(_store_issues(str(name), extra, ctx))
    elif fam in ("p2p", "layerwise") and ctx.env.get("MOONCAKE_CONFIG_PATH"):
        out.append(issue(INFO, T("mooncake.serve_args.config_unused", name=name), source=f"{MOONCAKE_DOC}#config"))
    return out


def _connector_issues(name: str, data: Dict[str, Any], ctx: ServeContext) -> List[Issue]:
    out: List[Issue] = []
    module = data.get("kv_connector_module_path")
    if module:
        if ctx.modules and module.startswith("vllm_ascend.") and module not in ctx.modules:
            moved = [m for m in ctx.modules if m.rsplit(".", 1)[-1] == module.rsplit(".", 1)[-1]]
            if moved:
                title = T("mooncake.serve_args.module_moved", module=module, version=ctx.vllm_ascend, moved=moved[0])
                hint = T("mooncake.serve_args.module_moved.hint", moved=moved[0])
            else:
                title = T("mooncake.serve_args.module_missing", module=module, version=ctx.vllm_ascend)
                hint = T("mooncake.serve_args.module_missing.hint")
            out.append(issue(FAIL, title, hint, observed=module, expected=moved[0] if moved else None, source=SOURCE))
        return out
    if not ctx.connectors:
        out.append(issue(INFO, T("mooncake.serve_args.registry_unread", name=name), source=SOURCE))
        return out
    if name in ctx.connectors:
        return out
    if name in ctx.vllm_connectors:
        ours = ", ".join(sorted(c for c in ctx.connectors if "Mooncake" in c or "Store" in c))
        out.append(issue(WARN, T("mooncake.serve_args.upstream_connector", name=name),
                         T("mooncake.serve_args.upstream_connector.hint", version=ctx.vllm_ascend, ours=ours),
                         observed=name, source=SOURCE))
        return out
    import difflib  # here: ~2 ms with heapq, for a connector name nobody knows

    close = difflib.get_close_matches(name, list(ctx.connectors), n=1, cutoff=0.6)
    title = T("mooncake.serve_args.unregistered_close", name=repr(name), version=ctx.vllm_ascend, close=close[0]) if close \
        else T("mooncake.serve_args.unregistered", name=repr(name), version=ctx.vllm_ascend)
    out.append(issue(FAIL, title, T("mooncake.serve_args.unregistered.hint", registered=", ".join(sorted(ctx.connectors))),
                     observed=name, expected=close[0] if close else None, source=SOURCE))
    return out


def _extra_issues(fam: str, name: str, extra: Dict[str, Any], va: Optional[str],
                  table: Mapping[str, Window]) -> List[Issue]:
    out: List[Issue] = []
    ignored: List[Text] = []
    names: List[str] = []
    unknown: List[str] = []
    for key in extra:
        if key not in table:
            unknown.append(key)
            continue
        state = window_state(table[key], va)
        if state == "not_yet":
            ignored.append(T("mooncake.serve_args.key.not_yet_head", key=key) if table[key][0] == HEAD
                           else T("mooncake.config.key.not_yet", key=key, first=table[key][0]))
            names.append(key)
        elif state == "no_longer":
            ignored.append(T("mooncake.config.key.no_longer", key=key, last=table[key][1]))
            names.append(key)
    if fam == "store" and "mooncake_rpc_port" in extra and window_state(table["lookup_rpc_port"], va) == "read":
        out.append(issue(INFO, T("mooncake.serve_args.rpc_port_deprecated"), T("mooncake.serve_args.rpc_port_deprecated.hint"),
                         observed="mooncake_rpc_port", expected="lookup_rpc_port", source=SOURCE))
    if unknown:
        known = ", ".join(k for k in table if window_state(table[k], va) == "read")
        out.append(issue(WARN, T("mooncake.serve_args.extra_unknown", name=name, keys=", ".join(unknown)),
                         T("mooncake.serve_args.extra_unknown.hint", name=name, known=known),
                         observed=", ".join(unknown), source=SOURCE))
    if ignored:
        out.append(issue(INFO, T("mooncake.serve_args.extra_ignored", version=va, keys=join(ignored, "sep.semi")),
                         observed=", ".join(names), source=SOURCE))
    return out


# The side of a prefill/decode pair each role is (kv_both is neither: both sides are the others').
SIDE_OF_ROLE = {"kv_producer": "prefill", "kv_consumer": "decode"}


def _own_size(options: Mapping[str, str], *names: str) -> Optional[str]:
    """This instance's size from its command line: vLLM's default 1 when not given, None when
    given as something that is not a number (a shell variable)."""
    for n in names:
        v = options.get(n)
        if v is not None:
            return v if v.isdigit() else None
    return "1"


def _pd_sizes(side: str, role: Any, options: Mapping[str, str]) -> Dict[str, Any]:
    """What to write for ``side``: the command's own sizes when ``side`` is this instance's
    role, else named placeholders (only the other instance's command knows them; never a guess
    from the visible devices)."""
    own = SIDE_OF_ROLE.get(str(role)) == side
    out: Dict[str, Any] = {}
    for key, names in (("tp", ("tensor-parallel-size", "tp")), ("dp", ("data-parallel-size", "dp"))):
        value = _own_size(options, *names) if own else None
        out[key] = value if value is not None else T("mooncake.serve_args.pd_placeholder", side=side, key=f"{key}_size")
    return out


def _prefill_decode(name: str, extra: Dict[str, Any], role: Any = None,
                    options: Optional[Mapping[str, str]] = None) -> List[Issue]:
    out: List[Issue] = []
    sizes: Dict[str, Dict[str, Any]] = {}
    for side in ("prefill", "decode"):
        cfg = extra.get(side)
        missing = [k for k in ("tp_size", "dp_size") if not isinstance(cfg, dict) or k not in cfg]
        if missing:
            out.append(issue(FAIL, T("mooncake.serve_args.pd_sizes_missing", name=name, side=side, missing=", ".join(missing)),
                             T("mooncake.serve_args.pd_sizes_missing.hint", side=side, **_pd_sizes(side, role, options or {})),
                             expected=f"{side}.tp_size, {side}.dp_size", source=SOURCE))
        elif isinstance(cfg, dict):
            sizes[side] = cfg
    if "prefill" in sizes and "decode" in sizes:
        p, d = sizes["prefill"].get("tp_size"), sizes["decode"].get("tp_size")
        if isinstance(p, int) and isinstance(d, int) and p < d:
            out.append(issue(FAIL, T("mooncake.serve_args.pd_tp", p=p, d=d), observed=f"prefill {p} < decode {d}", source=SOURCE))
        if sizes["decode"].get("pp_size", 1) != 1:
            out.append(issue(FAIL, T("mooncake.serve_args.pd_pp", pp=sizes["decode"].get("pp_size")), source=SOURCE))
    return out


def _store_issues(name: str, extra: Dict[str, Any], ctx: ServeContext) -> List[Issue]:
    out: List[Issue] = []
    va = ctx.vllm_ascend
    backend = extra.get("backend", "mooncake")
    backend_window = ctx.extra_keys.get("store", {}).get("backend", (None, None))
    if "backend" in extra and window_state(backend_window, va) == "read":
        known = [b for b, since in ctx.backends.items() if since is None or at_least(va, since) is not False]
        if str(backend).lower() not in known:
            out.append(issue(FAIL, T("mooncake.serve_args.bad_backend", backend=repr(backend), version=va, known=", ".join(known)),
                             observed=str(backend), expected=" | ".join(known), source=SOURCE))
            return out
    if str(backend).lower() != "mooncake" and window_state(backend_window, va) == "read":
        return out
    if not ctx.env.get("MOONCAKE_CONFIG_PATH"):
        out.append(issue(FAIL, T("mooncake.serve_args.no_config_path", name=name), T("mooncake.serve_args.no_config_path.hint"),
                         expected="MOONCAKE_CONFIG_PATH", source=SOURCE))
    if not ctx.mooncake_installed:
        out.append(issue(FAIL, T("mooncake.serve_args.not_installed", name=name), source=SOURCE))
    if extra.get("use_layerwise") is True and extra.get("load_async") is True:
        out.append(issue(INFO, T("mooncake.serve_args.layerwise_async"), source=SOURCE))
    if ctx.env.get("PYTHONHASHSEED") is None:
        out.append(issue(INFO, T("mooncake.serve_args.hash_seed"), T("mooncake.serve_args.hash_seed.hint"),
                         source=f"{MOONCAKE_DOC}#serve-args"))
    return out
