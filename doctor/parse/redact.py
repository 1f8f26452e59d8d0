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

import re
from typing import Any, Dict, Mapping

REDACTED = "<redacted>"

# Names of variables and keys that hold secrets (matched case-insensitively).
_SECRET_NAME = re.compile(
    r"(TOKEN|SECRET|PASSW(?:OR)?D|PASSPHRASE|CREDENTIAL|KEY|COOKIE|(?:^|[_.-])PAT(?:$|[_.-])|(?:^|[_.-])AUTH(?:$|[_.-])"
    r"|AUTHORIZATION|(?:^|[_.-])PWD(?:$|[_.-])|DSN)",
    re.IGNORECASE)
# Names that match the pattern but hold no secret (paths and switches users need to see).
_NOT_SECRET = re.compile(r"^(PWD|OLDPWD|KEYTIMEOUT|.*_KEY_PATH|.*_KEY_FILE|.*_TOKEN_PATH|.*_TOKEN_FILE|SSH_AUTH_SOCK)$",
                         re.IGNORECASE)

_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]{1,20}://)(?P<user>[^\s/@:'\"<>]*)(?::(?P<pw>[^\s/@'\"<>]*))?@")
_AUTH_SCHEME = re.compile(r"\b(Bearer|Basic|Token|Digest)(\s+|%20)(?!<redacted>)[A-Za-z0-9._~+/=:-]{6,}", re.IGNORECASE)
_QUERY_SECRET = re.compile(
    r"([?&;](?:access_?token|token|api_?key|key|secret|password|passwd|sig|signature|auth)=)[^&#\s'\"]+", re.IGNORECASE)
_TOKEN_SHAPES = re.compile(
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
_JSON_PAIR = re.compile(r'("' + _KEY_WORDS + r'"\s*:\s*)("(?:[^"\\\n]|\\.)*"|[^,}\]\s][^,}\]\n]*)', re.IGNORECASE)
_ASSIGN_LINE = re.compile(r"^(\s*(?:export\s+)?" + _KEY_WORDS + r"\s*[:=]\s*)(?!<redacted>)(\S.*?)\s*$",
                          re.IGNORECASE | re.MULTILINE)
_NETRC = re.compile(r"(\b(?:password|passwd|account)\s+)(?![:=])(?!<redacted>)(\S+)", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name)) and not _NOT_SECRET.match(name)


def value(text: str) -> str:
    """Credentials removed from a free text by their shape (URLs, auth schemes, tokens)."""
    if not text or not isinstance(text, str):
        return text
    out = _URL_USERINFO.sub(_userinfo, text)
    out = _AUTH_SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", out)
    out = _QUERY_SECRET.sub(lambda m: m.group(1) + REDACTED, out)
    return _TOKEN_SHAPES.sub(REDACTED, out)


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
    out = _JSON_PAIR.sub(lambda m: m.group(1) + (f'"{REDACTED}"' if m.group(2).startswith('"') else REDACTED), text)
    out = _ASSIGN_LINE.sub(lambda m: m.group(1) + REDACTED, out)
    out = _NETRC.sub(lambda m: m.group(1) + REDACTED, out)
    return value(out)


def deep(obj: Any) -> Any:
    """Every string in a JSON-able tree through :func:`value` (the snapshot's last pass)."""
    if isinstance(obj, str):
        return value(obj)
    if isinstance(obj, list):
        return [deep(v) for v in obj]
    if isinstance(obj, dict):
        return {k: deep(v) for k, v in obj.items()}
    return obj
