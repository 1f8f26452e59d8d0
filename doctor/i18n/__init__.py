"""One catalogue for every user-facing string, in English and Chinese.

Messages live in ``doctor/i18n/*.toml`` (data, not code): one table per key with an ``en`` and a
``zh`` template, ``{name}`` placeholders filled at render time. Code never holds the words of a
message, only its key::

    title = T("stack.mismatch", name="torch", have="2.8.0", release="0.11.0rc3", expected="2.7.1", why="")
    title.text("zh")

A :class:`Text` stays language-neutral until it is rendered, so a finding built once renders in
either language. Parameters may themselves be Texts (rendered in the same language), lists of
them (joined with the catalogue's ``sep.list``) or a :class:`Join` with another separator. A
literal brace is written ``{{`` in every message. The files are partitions of one namespace,
one file per area whose keys start with the area (``cann.toml`` holds ``cann.*``); a key may be
defined once only (tests/test_i18n.py checks both languages and the placeholders of every key).

The language is resolved once per command at the edge (:func:`resolve_lang`, given the
environment) and passed down: nothing here reads the environment.

Parsing TOML costs ~0.1 ms per message with the pure-Python ``tomllib``, so the merged
catalogue is kept, keyed by the files' identities (inode, size, times), in a :class:`Store` the
shell hands over (:func:`use_store`; ``doctor.shell.host.cache``, whose reads refuse a FIFO or a symlink
planted in the cache): a run stats the files and reads one cache entry. Without a store, or
with a read-only home, the files are parsed every time.
"""
from __future__ import annotations

import string
import sys
import zlib
from doctor.record import record
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, Mapping, Optional, Protocol, Sequence, Tuple, cast

LANGS = ("en", "zh")
HERE = Path(__file__).resolve().parent

_catalogue: Optional[Dict[str, Dict[str, str]]] = None


class Store(Protocol):
    """Where the parsed catalogue is kept between runs (``doctor.shell.host.cache`` is one, as for
    the matrix's rows): the catalogue never decides where files go."""

    def key(self, *parts: Any) -> str: ...

    def read(self, kind: str, k: str) -> Optional[Any]: ...

    def write(self, kind: str, k: str, data: Any) -> None: ...


_store: Optional[Store] = None


def use_store(store: Optional[Store]) -> None:
    """The shell's store for the parsed catalogue (``doctor.shell`` hands it over on import)."""
    global _store
    _store = store


class CatalogueError(ValueError):
    pass


def toml_loads(text: str) -> Dict[str, Any]:
    """``tomllib.loads`` (tomli before Python 3.11), imported on first use."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10
        import tomli as tomllib
    return tomllib.loads(text)


def load_files(paths: Iterable[Path]) -> Dict[str, Dict[str, str]]:
    """Merge catalogue files; a key defined twice or without both languages is an error."""
    out: Dict[str, Dict[str, str]] = {}
    where: Dict[str, str] = {}
    for path in sorted(paths):
        data = toml_loads(Path(path).read_text(encoding="utf-8"))
        for key, entry in _flatten(data):
            if key in out:
                raise CatalogueError(f"{Path(path).name}: {key} is also defined in {where[key]}")
            missing = [lang for lang in LANGS if not isinstance(entry.get(lang), str)]
            if missing:
                raise CatalogueError(f"{Path(path).name}: {key} has no {'/'.join(missing)} text")
            out[key] = {lang: entry[lang] for lang in LANGS}
            where[key] = Path(path).name
    return out


def _flatten(data: Mapping[str, Any], prefix: str = "") -> Iterator[Tuple[str, Dict[str, Any]]]:
    """Tables holding ``en``/``zh`` strings are entries; every table is also a namespace, so
    ``[x.title]`` and ``[x.title.hint]`` are two entries."""
    for k, v in data.items():
        if not isinstance(v, dict):
            continue
        key = f"{prefix}{k}"
        if any(lang in v and isinstance(v[lang], str) for lang in LANGS):
            yield key, v
        yield from _flatten(v, key + ".")


def checksum(blobs: Iterable[Tuple[str, bytes]]) -> str:
    """Of the files' names and bytes: two CRC-32s and the length (as doctor.shell.host.cache keys
    do): hashlib's import alone costs ~7 ms."""
    data = b"".join(name.encode() + b"\0" + blob + b"\0" for name, blob in blobs)
    return f"{zlib.crc32(data):08x}{zlib.crc32(data[::-1]):08x}{len(data):x}"


def catalogue() -> Dict[str, Dict[str, str]]:
    global _catalogue
    if _catalogue is None:
        _catalogue = load_cached(sorted(HERE.glob("*.toml")), _store)
    return _catalogue


def identities(paths: Sequence[Path]) -> Optional[str]:
    """The files' names and identities (device, inode, size, modification and change times): a
    check keys the cache by them instead of reading ~300 KB of TOML on every run. None when a
    file cannot be stat'ed (then its bytes are the key)."""
    import os

    out = []
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            return None
        out.append(f"{Path(p).name}:{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}")
    return "\n".join(out)


def load_cached(paths: Sequence[Path], store: Optional[Store] = None) -> Dict[str, Dict[str, str]]:
    """:func:`load_files`, through ``store`` keyed by the files' names and identities (a file
    that cannot be stat'ed: by their bytes)."""
    if store is None:
        return load_files(paths)
    before = identities(paths)
    ident = before if before is not None else checksum((Path(p).name, Path(p).read_bytes()) for p in paths)
    k = store.key("i18n", ident)
    data = store.read("i18n", k)
    if _is_catalogue(data, len(paths)):
        return cast(Dict[str, Dict[str, str]], data)
    data = load_files(paths)
    if before is None or identities(paths) == before:  # not changed while they were read
        store.write("i18n", k, data)
    return data


def _is_catalogue(data: Any, files: int) -> bool:
    """What :func:`load_files` makes: keys to an en and a zh string, none when there
    were no files; anything else (a truncated, hand-edited or planted
    entry: ``{}`` made every command end in "internal error") is a miss."""
    return (isinstance(data, dict) and (files == 0 or len(data) > 0)
            and all(isinstance(v, dict) and set(v) == set(LANGS) and all(isinstance(t, str) for t in v.values())
                    for v in data.values()))


def template(key: str, lang: str) -> str:
    try:
        entry = catalogue()[key]
    except KeyError:
        raise CatalogueError(f"no message {key!r} in the catalogue") from None
    return entry["zh" if lang == "zh" else "en"]


def placeholders(text: str) -> Tuple[str, ...]:
    return tuple(sorted({name for _, name, _, _ in string.Formatter().parse(text) if name}))


def _value(v: Any, lang: str) -> Any:
    if isinstance(v, (Text, Join, Words)):
        return v.text(lang)
    if isinstance(v, (list, tuple)):
        return template("sep.list", lang).join(str(_value(x, lang)) for x in v)
    return v


@record(frozen=True)
class Text:
    """A catalogue message with its parameters, rendered in a language on demand."""

    key: str
    params: Tuple[Tuple[str, Any], ...] = ()

    def text(self, lang: str = "en") -> str:
        # always formatted, so a literal brace is written {{ in every message, with or without parameters
        return template(self.key, lang).format_map({k: _value(v, lang) for k, v in self.params})

    def __str__(self) -> str:
        return self.text("en")


@record(frozen=True)
class Join:
    """Items (Texts or plain strings) joined with a catalogue separator (``sep.list``, ``sep.semi``...)."""

    items: Tuple[Any, ...]
    sep: str = "sep.list"

    def text(self, lang: str = "en") -> str:
        return template(self.sep, lang).join(str(_value(x, lang)) for x in self.items)

    def __str__(self) -> str:
        return self.text("en")


@record(frozen=True)
class Words:
    """Words that come from a data file in both languages (a matrix row's known problem): the
    Chinese when the data has it, else the English."""

    en: str
    zh: Optional[str] = None

    def text(self, lang: str = "en") -> str:
        return self.zh if lang == "zh" and self.zh else self.en

    def __str__(self) -> str:
        return self.en


def join(items: Iterable[Any], sep: str = "sep.list") -> Join:
    return Join(tuple(items), sep)


def T(key: str, /, **params: Any) -> Text:
    # positional-only: a message may have a placeholder called {key} or {lang}
    return Text(key, tuple(sorted(params.items())))


def tr(key: str, lang: str, /, **params: Any) -> str:
    return T(key, **params).text(lang)


def resolve_lang(option: Optional[str], env: Mapping[str, str]) -> str:
    """--lang when given, else the language of LC_ALL / LC_MESSAGES / LANG (the first one set)."""
    if option:
        return option
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"
