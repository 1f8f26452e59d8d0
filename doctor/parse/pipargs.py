"""pip's command line read as pip reads it (optparse): general options before the subcommand,
``--opt=value`` and ``--opt value``, short options with attached values and clusters (``-t/x``,
``-Ur f``), unambiguous prefixes of long options (``--tar`` is ``--target``) and ``--`` ending
the options. Pure: words in, tokens out.

The option tables are the union of pip 22.2 (the first with ``--report``) to 26.3, from pip's own
parsers (``cli/cmdoptions.py``); tests/test_guard.py checks them against the pip it runs. A name
maps to its canonical spelling (``--log-file`` -> ``--log``, ``-t`` -> ``--target``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

# general options (pip's general_group): canonical name -> takes a value
GENERAL: Dict[str, bool] = {
    "--help": False, "--debug": False, "--isolated": False, "--require-virtualenv": False, "--python": True,
    "--verbose": False, "--version": False, "--quiet": False, "--log": True, "--no-input": False,
    "--keyring-provider": True, "--proxy": True, "--no-proxy-env": False, "--retries": True, "--timeout": True,
    "--exists-action": True, "--trusted-host": True, "--cert": True, "--client-cert": True, "--cache-dir": True,
    "--no-cache-dir": False, "--disable-pip-version-check": False, "--no-color": False,
    "--no-python-version-warning": False, "--use-feature": True, "--use-deprecated": True, "--resume-retries": True,
}
INSTALL: Dict[str, bool] = {
    "--requirement": True, "--constraint": True, "--editable": True, "--index-url": True, "--extra-index-url": True,
    "--no-index": False, "--find-links": True, "--no-deps": False, "--pre": False, "--dry-run": False,
    "--target": True, "--platform": True, "--python-version": True, "--implementation": True, "--abi": True,
    "--user": False, "--no-user": False, "--root": True, "--prefix": True, "--src": True, "--upgrade": False,
    "--upgrade-strategy": True, "--force-reinstall": False, "--ignore-installed": False,
    "--ignore-requires-python": False, "--no-build-isolation": False, "--use-pep517": False, "--no-use-pep517": False,
    "--check-build-dependencies": False, "--break-system-packages": False, "--config-settings": True,
    "--global-option": True, "--install-option": True, "--compile": False, "--no-compile": False,
    "--no-warn-script-location": False, "--no-warn-conflicts": False, "--no-binary": True, "--only-binary": True,
    "--prefer-binary": False, "--require-hashes": False, "--no-require-hashes": False, "--progress-bar": True,
    "--root-user-action": True, "--report": True, "--no-clean": False, "--group": True, "--only-deps": False,
    "--build-constraint": True, "--all-releases": True, "--only-final": True, "--refresh-package": True,
    "--requirements-from-script": True, "--uploaded-prior-to": True,
}
UNINSTALL: Dict[str, bool] = {"--requirement": True, "--yes": False, "--root-user-action": True,
                              "--break-system-packages": False}
ALIASES = {  # spelling -> canonical name
    "-h": "--help", "-v": "--verbose", "-V": "--version", "-q": "--quiet", "--require-venv": "--require-virtualenv",
    "--log-file": "--log", "--local-log": "--log", "--default-timeout": "--timeout", "-r": "--requirement",
    "-c": "--constraint", "-e": "--editable", "-i": "--index-url", "--pypi-url": "--index-url", "-f": "--find-links",
    "--no-dependencies": "--no-deps", "-t": "--target", "-U": "--upgrade", "-I": "--ignore-installed",
    "-C": "--config-settings", "--source": "--src", "--source-dir": "--src", "--source-directory": "--src",
    "--only-dependencies": "--only-deps", "-y": "--yes",
}


class PipArgsError(ValueError):
    """pip would refuse these words (ambiguous or missing option value)."""


@dataclass
class Token:
    """One option (or a cluster of short options) or one positional word, as written."""

    words: List[str]  # as the user wrote them (one or two)
    names: List[str] = field(default_factory=list)  # canonical option names; empty for a positional
    value: Optional[str] = None

    @property
    def positional(self) -> bool:
        return not self.names


def spellings(table: Dict[str, bool]) -> Dict[str, str]:
    """Every spelling of the table's options -> canonical name."""
    out = {k: k for k in table}
    out.update({a: c for a, c in ALIASES.items() if c in table})
    return out


def _long(word: str, known: Dict[str, str]) -> Optional[str]:
    """The canonical name of a long option word (before any ``=``), prefix-matched as optparse
    does; None when unknown."""
    if word in known:
        return known[word]
    hits = sorted(s for s in known if s.startswith(word) and s.startswith("--"))
    if len(hits) == 1:
        return known[hits[0]]
    if hits:
        raise PipArgsError(f"{word} is ambiguous ({', '.join(hits)})")
    return None


def tokens(words: Sequence[str], table: Dict[str, bool], *, interspersed: bool = True,
           prefixes: bool = True) -> Tuple[List[Token], List[str]]:
    """``words`` read with the options of ``table``; returns the tokens read and the words left
    (with ``interspersed=False``: everything from the first positional on, as pip's main parser
    stops at the subcommand). Unknown options are taken as flags (pip reports them itself)."""
    known = spellings(table)
    out: List[Token] = []
    i = 0
    words = list(words)
    while i < len(words):
        w = words[i]
        if w == "--":
            out += [Token([x]) for x in words[i + 1:]] if interspersed else []
            return out, ([] if interspersed else words[i + 1:])
        if w.startswith("--"):
            name_part, eq, val = w.partition("=")
            name = _long(name_part, known) if prefixes else known.get(name_part)
            if name is None or not table[name]:
                out.append(Token([w], [name or name_part]))
            elif eq:
                out.append(Token([w], [name], val))
            elif i + 1 < len(words):
                out.append(Token([w, words[i + 1]], [name], words[i + 1]))
                i += 1
            else:
                raise PipArgsError(f"{w} requires a value")
        elif w.startswith("-") and w != "-":
            names: List[str] = []
            value = None
            used = [w]
            for j, ch in enumerate(w[1:], 1):
                name = known.get("-" + ch, "-" + ch)
                names.append(name)
                if table.get(name):
                    value = w[j + 1:]
                    if not value:
                        if i + 1 >= len(words):
                            raise PipArgsError(f"-{ch} requires a value")
                        value = words[i + 1]
                        used.append(value)
                        i += 1
                    break
            out.append(Token(used, names, value))
        elif interspersed:
            out.append(Token([w]))
        else:
            return out, words[i:]
        i += 1
    return out, []
