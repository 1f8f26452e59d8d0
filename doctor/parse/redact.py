"""Secrets out of everything the doctor records (snapshots are attached to bug reports).

Three rules, applied together (docs/snapshot.md):

1. by name: an environment variable or config key whose name says it holds a secret
   (``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*KEY*``, ``*CREDENTIAL*``, ``GITHUB_PAT``,
   ``AUTH``, ``redis_password``, ``auth_token``, ``access_key``...) loses its whole value;
2. by value: wherever it appears, a credential inside a URL (``https://user:pw@host``,
   ``etcd://user:pw@host``), an ``Authorization`` scheme with its token (``Bearer ...``,
   ``Basic ...``), a secret query parameter (``?token=...``) and the well-known token shapes
   (GitHub, GitLab, Hugging Face, Slack, AWS access key ids, OpenAI-style ``sk-``, PyPI, npm,
   JWTs) are replaced;
3. inside config files (Mooncake JSON, pip.conf, .netrc, YAML/INI/env files) by key:
   ``"password": "..."``, ``password = ...``, ``password: ...`` and netrc's ``password ...``.

Pure string functions; the text keeps its shape (only secret values change) so line numbers
in findings about a config file stay right.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Dict, List, Mapping
from doctor.lazyre import lazy

REDACTED = "<redacted>"

# Names of variables and keys that hold secrets (matched case-insensitively).
_SECRET_NAME = lazy(
    r"(TOKEN|SECRET|PASSW(?:OR)?D|PASSPHRASE|CREDENTIAL|KEY|COOKIE|(?:^|[_.-])PAT(?:$|[_.-])|(?:^|[_.-])AUTH(?:$|[_.-])"
    r"|AUTHORIZATION|(?:^|[_.-])PWD(?:$|[_.-])|(?:^|[_.-])PASS(?:$|[_.-])|(?<!BY)PASS$|DSN)",
    re.IGNORECASE)
# Names that match the pattern but hold no secret (paths and switches users need to see).
_NOT_SECRET = lazy(r"^(PWD|OLDPWD|KEYTIMEOUT|.*_KEY_PATH|.*_KEY_FILE|.*_TOKEN_PATH|.*_TOKEN_FILE|SSH_AUTH_SOCK)$",
                         re.IGNORECASE)

# The password runs to the last @ before the host (https://user:pa@ss@host: all of "pa@ss").
_URL_USERINFO = lazy(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]{1,20}://)(?P<user>[^\s/@:'\"<>]*)(?::(?P<pw>[^\s/'\"<>]*))?@")
_AUTH_SCHEME = lazy(r"\b(Bearer|Basic|Token|Digest)(\s+|%20)(?!<redacted>)[A-Za-z0-9._~+/=:-]{6,}", re.IGNORECASE)
# A query parameter whose name says secret: ?token=, ?sig=, X-Amz-Signature, X-Amz-Credential...
_QUERY_SECRET = lazy(
    r"([?&;](?:[\w.-]*(?:token|key|secret|passw|credential|signature)[\w.-]*|sig|auth|pwd|pass)=)[^&#\s'\"]+",
    re.IGNORECASE)
# A command-line option inside a value (A='--password=x', ARGS='--hf-token x'): is_secret_key decides.
_OPTION = lazy(r"(?<![\w-])(--?([A-Za-z][\w.-]*))(=|[ \t]+)(?!<redacted>)(\"[^\"]*\"|'[^']*'|[^\s'\"-][^\s'\"]*)")
# Word parts that make a key, option or parameter name secret (is_secret_key).
_SECRET_PART = {"password", "passwd", "passphrase", "secret", "secrets", "token", "credential", "credentials",
                "cookie", "apikey", "signature"}
_SECRET_LAST = {"pass", "pwd", "auth"}  # only as the last part: "pass_config" is vLLM's compiler passes
_KEY_OWNER = {"api", "access", "secret", "private", "auth", "signing", "encryption", "client"}
_TOKEN_SHAPES = lazy(
    r"\b("
    r"gh[pousr]_[A-Za-z0-9]{30,}"  # GitHub tokens
    r"|github_pat_[A-Za-z0-9_]{22,}"  # GitHub fine-grained PATs
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key ids
    r"|sk-(?:proj-)?[A-Za-z0-9_-]{20,}"  # OpenAI-style API keys
    r"|pypi-[A-Za-z0-9_-]{50,}"  # PyPI upload tokens
    r"|npm_[A-Za-z0-9]{36}"  # npm
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API keys
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # JWTs
    r")")
_KEY_WORDS = (r"[\w.-]*(?:pass(?:word|wd|phrase)?|pwd|secret|token|auth|credential|access_?key|secret_?key|api_?key"
              r"|private_?key|cookie)[\w.-]*")
_JSON_KEY = lazy(r'(?<!\\)"(' + _KEY_WORDS + r')"\s*:[ \t]*', re.IGNORECASE)
_JSON_STRING = lazy(r'"(?:[^"\\\n]|\\.)*"')
_JSON_SCALAR = lazy(r'[^,}\]\s][^,}\]\n]*')
_ASSIGN_LINE = lazy(r"^(\s*(?:export\s+)?" + _KEY_WORDS + r"\s*[:=]\s*)(?!<redacted>)(\S.*?)\s*$",
                          re.IGNORECASE | re.MULTILINE)
_NETRC = lazy(r"(\b(?:password|passwd|account)\s+)(?![:=])(?!<redacted>)(\S+)", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name)) and not _NOT_SECRET.match(name)


def is_secret_key(name: str) -> bool:
    """A JSON key or an option name that holds a secret, judged by its word parts
    (``api_key``, ``--hf-token``, ``ssl_keyfile_password``, ``auth``), so that
    ``max_num_batched_tokens`` or ``tokenizer_mode`` keep their values."""
    parts = [p for p in re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()) if p]
    if not parts:
        return False
    return (any(p in _SECRET_PART for p in parts) or parts[-1] in _SECRET_LAST
            or any(p == "key" and i > 0 and parts[i - 1] in _KEY_OWNER for i, p in enumerate(parts)))


def value(text: str) -> str:
    """Credentials removed from a free text by their shape (URLs, auth schemes, tokens)."""
    if not text or not isinstance(text, str):
        return text
    out = _URL_USERINFO.sub(_userinfo, text)
    out = _AUTH_SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", out)
    out = _QUERY_SECRET.sub(lambda m: m.group(1) + REDACTED, out)
    out = _OPTION.sub(lambda m: m.group(1) + m.group(3) + REDACTED if is_secret_key(m.group(2)) else m.group(0), out)
    return _TOKEN_SHAPES.sub(REDACTED, out)


# NAME=value in a shell command or a Dockerfile step (ENV, ARG, RUN A=b cmd, export A=b)
_ASSIGNMENT = lazy(r"(?<![\w./-])([A-Za-z_][A-Za-z0-9_]*)=(?!<redacted>)(\"[^\"]*\"|'[^']*'|[^\s'\"]+)")
# the older ENV/ARG form without "=": ``ENV API_KEY abc``
_ENV_WORD = lazy(r"^((?:ENV|ARG)\s+([A-Za-z_][A-Za-z0-9_]*)\s+)(?!<redacted>)(\S.*)$", re.IGNORECASE)
_NETRC_WORD = lazy(r"(\b(?:password|passwd)\s+)(?![:=])(?!<redacted>)([^\s'\"]+)", re.IGNORECASE)


def step(text: str) -> str:
    """A Dockerfile step or a shell command line (image history, a RUN line): what
    :func:`value` removes, and the values of assignments whose name says secret (``ENV
    API_KEY=x``, ``ARG HF_TOKEN x``, ``PASSWORD=x make``) and of netrc ``password`` words."""
    if not text or not isinstance(text, str):
        return text
    out = _ENV_WORD.sub(lambda m: m.group(1) + REDACTED if is_secret_name(m.group(2)) else m.group(0), text)
    out = _ASSIGNMENT.sub(lambda m: f"{m.group(1)}={REDACTED}" if is_secret_name(m.group(1)) else m.group(0), out)
    out = _NETRC_WORD.sub(lambda m: m.group(1) + REDACTED, out)
    return value(out)


def _userinfo(m: "re.Match[str]") -> str:
    if m.group("pw") is not None:  # user:password@ -> user:<redacted>@
        if m.group("pw") == REDACTED:
            return m.group(0)
        return f"{m.group('scheme')}{m.group('user')}:{REDACTED}@"
    if not m.group("user") or m.group("user") in (REDACTED, "git"):
        return m.group(0)
    return f"{m.group('scheme')}{REDACTED}@"  # a token as the user name (https://TOKEN@host)


def env(variables: Mapping[str, str]) -> Dict[str, str]:
    """Environment variables: secret names lose their value, every other value loses the
    credentials it carries (PIP_INDEX_URL=https://user:pw@mirror/simple)."""
    return {k: (REDACTED if is_secret_name(k) else value(v)) for k, v in variables.items()}


def config_text(text: str) -> str:
    """A config file's text (JSON, INI/pip.conf, YAML, env, .netrc) with secret values
    replaced by key and by value; everything else is kept byte for byte."""
    if not text:
        return text
    out = json_values(text)
    out = _ASSIGN_LINE.sub(lambda m: m.group(1) + REDACTED, out)
    out = _NETRC.sub(lambda m: m.group(1) + REDACTED, out)
    return value(out)


def json_values(text: str, secret: Callable[[str], bool] = lambda key: True, key: "re.Pattern[str]" = _JSON_KEY) -> str:
    """Every value of a secret key (``"auth": {...}``, ``"password": 12``) in JSON text becomes the
    string ``"<redacted>"`` followed by the line breaks the value held, so valid JSON stays valid
    with the same line numbers; a value that is not valid JSON becomes a bare ``<redacted>``, so
    a broken file stays broken (the check judges the redacted text). ``secret(name)`` narrows the
    keys ``key`` finds."""
    out: List[str] = []
    pos = 0
    for m in key.finditer(text):
        start = m.end()
        if start < pos or not secret(m.group(1)):
            continue  # inside a value already redacted
        end = _json_value_end(text, start)
        if end <= start or text[start:end] in (f'"{REDACTED}"', REDACTED):
            continue
        try:
            json.loads(text[start:end])
            new = f'"{REDACTED}"'
        except (ValueError, RecursionError):
            new = REDACTED
        out += [text[pos:start], new, "\n" * text.count("\n", start, end)]
        pos = end
    return "".join(out) + text[pos:]


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _json_value_end(text: str, i: int) -> int:
    """Where the JSON value at ``i`` ends: a string, an object or array (strings in it skipped), or
    a bare word up to the next comma or bracket. An unclosed object ends with its line."""
    if text.startswith('"', i):
        m = _JSON_STRING.match(text, i)
        return m.end() if m else _line_end(text, i)
    if not text.startswith(("{", "["), i):
        m = _JSON_SCALAR.match(text, i)
        return i + len(m.group(0).rstrip()) if m else i
    depth, j = 0, i
    while j < len(text):
        c = text[j]
        if c == '"':
            m = _JSON_STRING.match(text, j)
            j = m.end() if m else j + 1
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return _line_end(text, i)


def deep(obj: Any) -> Any:
    """Every string in a JSON-able tree through :func:`value` (the snapshot's last pass)."""
    if isinstance(obj, str):
        return value(obj)
    if isinstance(obj, list):
        return [deep(v) for v in obj]
    if isinstance(obj, dict):
        return {k: deep(v) for k, v in obj.items()}
    return obj
