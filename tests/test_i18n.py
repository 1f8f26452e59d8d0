"""The message catalogue (doctor/i18n): complete in both languages, consistent placeholders, every
key the code names exists, and no inline Chinese left in the code."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from doctor import i18n
from doctor.i18n import CatalogueError, T, catalogue, join, load_files, placeholders, resolve_lang, tr
from tests import source_kit

ROOT = Path(__file__).resolve().parents[1]
DOCTOR = ROOT / "doctor"
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def _py_files():
    return sorted(p for p in DOCTOR.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_message_has_both_languages_and_the_same_placeholders():
    for key, entry in catalogue().items():
        en, zh = entry["en"], entry["zh"]
        assert en.strip() and zh.strip(), key
        assert placeholders(en) == placeholders(zh), key
        values = {name: 1 for name in placeholders(en)}  # numbers format under any spec (:g)
        en.format(**values), zh.format(**values)  # literal braces are doubled: both render


# a file of this repository named in what users read: it is on no user's machine, and the public
# source behind a fact is what the text (or the finding's source) names
INTERNAL_PATH = re.compile(r"(?<![\w./-])(?:matrices|doctor|tests|bench)/[\w./-]*\.(?:toml|py|json|md)\b")


def test_no_message_names_a_file_of_this_repository():
    named = {key: INTERNAL_PATH.findall(entry[lang]) for key, entry in catalogue().items() for lang in ("en", "zh")
             if INTERNAL_PATH.search(entry[lang])}
    assert not named, named
    assert INTERNAL_PATH.search("vllm {vllm} (matrices/vllm-ascend.toml).")  # the form this test found
    assert not INTERNAL_PATH.search("source /usr/local/Ascend/ascend-toolkit/set_env.sh")


def test_each_file_holds_the_keys_of_its_area():
    for path in sorted((DOCTOR / "i18n").glob("*.toml")):
        if path.stem == "common":
            continue
        for key in load_files([path]):
            assert key.split(".")[0] == path.stem, f"{path.name}: {key} (keys of {path.name} start with {path.stem}.)"


def _named_keys():
    """(file, key) for every T("key") / tr("key", ...) with a literal key, and every value of a dict
    shaped like a catalogue key of a known area (message tables such as NPU_SMI_ERRORS)."""
    areas = {p.stem for p in (DOCTOR / "i18n").glob("*.toml")}
    shaped = re.compile(r"^(%s)\.[a-z0-9_]+\.[a-z0-9_.]+$" % "|".join(sorted(areas)))
    found = []
    for path in _py_files():
        for node in source_kit.nodes(path):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                if name in ("T", "tr"):
                    found.append((path, node.args[0].value))
            elif isinstance(node, ast.Dict):
                found.extend((path, v.value) for v in node.values
                             if isinstance(v, ast.Constant) and isinstance(v.value, str) and shaped.match(v.value))
    return found


@pytest.mark.slow  # ~1 s of CPU or more: parses every module
def test_every_key_the_code_names_exists():
    named = _named_keys()
    assert len(named) > 400  # the scan sees the rules, the plan, the commands
    missing = sorted({f"{p.relative_to(ROOT)}: {k}" for p, k in named if k not in catalogue()})
    assert not missing, missing


def test_computed_keys_exist():
    from doctor.parse.jsontext import CAUSES
    from doctor.rules.base import STAGE_BUILD_AUTO, STAGE_FORCED, STAGE_RUNTIME_AUTO

    for key in CAUSES.values():
        assert key in catalogue()
    for reason in (STAGE_BUILD_AUTO, STAGE_FORCED, STAGE_RUNTIME_AUTO):
        assert f"stage.reason.{reason}" in catalogue()
    from doctor.rules.all_rules import RULES

    for r in RULES:
        assert r.why is not None and r.why.key in catalogue(), r.id


def test_no_inline_chinese_in_the_code():
    offenders = []
    for path in _py_files():
        rel = str(path.relative_to(ROOT))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if CJK.search(line):
                offenders.append(f"{rel}:{n}")
    assert not offenders, offenders


def test_texts_render_late_in_either_language():
    t = T("mooncake.installed.uninstall_then", names="mooncake-transfer-engine", remedy=T("mooncake.remedy.pip"))
    assert t.text("en").startswith("remove mooncake-transfer-engine first") and t.text("en").endswith("before running vLLM")
    assert t.text("zh").startswith("先卸载 mooncake-transfer-engine") and "然后安装 NPU wheel" in t.text("zh")
    assert str(t) == t.text("en")
    both = join(["a", T("plan.missing")], "sep.semi")
    assert both.text("en") == "a; (missing)" and both.text("zh") == "a；（未安装）"
    listed = T("devices.nodes.management", missing=["x", "y"])
    assert listed.text("en").endswith("x, y") and listed.text("zh").endswith("x、y")
    # a placeholder may be called key or lang: T and tr take the key positionally
    assert "k1" in T("mooncake.config.key.unused", key="k1").text("en")
    assert tr("render.blocked", "zh", id="cann.installed") == "受 cann.installed 影响"
    # braces written {{ }} are literal text
    assert T("jsontext.cause.lookalike").text("en").endswith('" : , { }')


def test_an_unknown_key_is_an_error_not_an_empty_message():
    with pytest.raises(CatalogueError):
        T("no.such.key").text("en")


def test_a_key_defined_twice_or_in_one_language_is_refused(tmp_path):
    (tmp_path / "a.toml").write_text('[a.x]\nen = "x"\nzh = "x"\n', encoding="utf-8")
    (tmp_path / "b.toml").write_text('[a.x]\nen = "y"\nzh = "y"\n', encoding="utf-8")
    with pytest.raises(CatalogueError, match="also defined"):
        load_files([tmp_path / "a.toml", tmp_path / "b.toml"])
    (tmp_path / "c.toml").write_text('[c.x]\nen = "only English"\n', encoding="utf-8")
    with pytest.raises(CatalogueError, match="no zh"):
        load_files([tmp_path / "c.toml"])


def test_nested_entries_are_both_messages(tmp_path):
    (tmp_path / "n.toml").write_text('[n.title]\nen = "t"\nzh = "t"\n\n[n.title.hint]\nen = "h"\nzh = "h"\n', encoding="utf-8")
    assert set(load_files([tmp_path / "n.toml"])) == {"n.title", "n.title.hint"}


def test_the_catalogue_is_cached_by_the_files_identity(tmp_path, monkeypatch):
    from doctor.shell.host import cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    src = tmp_path / "m.toml"
    src.write_text('[m.a]\nen = "one"\nzh = "一"\n', encoding="utf-8")
    assert i18n.load_cached([src], cache)["m.a"]["en"] == "one"
    cached = list((tmp_path / "cache" / "ascend-doctor" / "i18n").glob("*.json"))
    assert len(cached) == 1
    calls = []
    monkeypatch.setattr(i18n, "load_files", lambda paths: calls.append(paths) or {})
    assert i18n.load_cached([src], cache)["m.a"]["en"] == "one" and not calls  # served from the cache
    src.write_text('[m.a]\nen = "two"\nzh = "二"\n', encoding="utf-8")
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert i18n.load_cached([src], cache)["m.a"]["en"] == "two"  # a changed file is parsed again


def test_a_read_only_cache_only_means_parsing(tmp_path, monkeypatch):
    from doctor.shell.host import cache

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    src = tmp_path / "m.toml"
    src.write_text('[m.a]\nen = "one"\nzh = "一"\n', encoding="utf-8")
    assert i18n.load_cached([src], cache)["m.a"]["zh"] == "一"
    assert i18n.load_cached([src])["m.a"]["zh"] == "一"  # no store: parsed


def test_a_fifo_planted_in_the_cache_does_not_hang_the_catalogue(tmp_path, monkeypatch):
    """The catalogue reads through the shell's cache, which opens no FIFO (it would block)."""
    import os

    from doctor.shell.host import cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    src = tmp_path / "m.toml"
    src.write_text('[m.a]\nen = "one"\nzh = "一"\n', encoding="utf-8")
    k = cache.key("i18n", i18n.identities([src]))
    (tmp_path / "cache" / "ascend-doctor" / "i18n").mkdir(parents=True)
    os.mkfifo(tmp_path / "cache" / "ascend-doctor" / "i18n" / f"{k}.json")
    assert i18n.load_cached([src], cache)["m.a"]["en"] == "one"


def test_the_shell_hands_the_catalogue_its_store():
    import doctor.shell
    from doctor.shell.host import cache

    assert doctor.shell is not None and i18n._store is cache


def test_the_language_is_resolved_in_one_place():
    assert resolve_lang("zh", {"LANG": "en_US.UTF-8"}) == "zh"
    assert resolve_lang(None, {"LANG": "zh_CN.UTF-8"}) == "zh"
    assert resolve_lang(None, {"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"
    assert resolve_lang(None, {"LC_MESSAGES": "zh_TW.UTF-8"}) == "zh"
    assert resolve_lang(None, {}) == "en"
    defined = [p for p in _py_files() if re.search(r"^def resolve_lang\b", p.read_text(encoding="utf-8"), re.M)]
    assert [str(p.relative_to(ROOT)) for p in defined] == ["doctor/i18n/__init__.py"]


def test_pick_language_uses_the_one_resolver(monkeypatch):
    from doctor.cli.params import pick_language
    from doctor.errors import UsageError

    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    assert pick_language(None) == "zh" and pick_language("en") == "en"
    with pytest.raises(UsageError):
        pick_language("fr")


def _inline_error_messages():
    """`raise DoctorError("...")` / UsageError(f"...") / UsageError("..." + ...) and their
    subclasses' with English written in the code rather than a catalogue key."""
    import ast

    errors = {"DoctorError", "UsageError", "IndexFetchError", "ProjectNotFound", "UntrustedState",
              "ProfileInputError", "CollectError"}
    out = []
    for path in _py_files():
        for n in source_kit.nodes(path):
            if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Call) and isinstance(n.exc.func, ast.Name) \
                    and n.exc.func.id in errors and n.exc.args and isinstance(n.exc.args[0], (ast.Constant, ast.JoinedStr, ast.BinOp)):
                out.append(f"{path.relative_to(DOCTOR.parent)}:{n.lineno}")
    return out


@pytest.mark.slow  # ~1 s of CPU or more: parses every module
def test_error_messages_move_to_the_catalogue():
    """Every user-facing error is to be a catalogue Text in English and Chinese; the inline ones
    left may only get fewer (254 raise statements before doctor/shell/install/bundle.py's 21 and
    doctor/shell/install/downloads.py's 16, the pure core's 11, the transaction's 21, and the
    commands' option and input errors and the shell's index, state, profile and step errors
    (175) moved). The 12 left wrap a message another part wrote (a parser's, the OS's):
    "--slo {e}", "{path}: {e.strerror}"; they go when that part speaks the catalogue."""
    inline = _inline_error_messages()
    assert len(inline) <= 12, f"{len(inline)} inline error messages (a new one goes in the catalogue): {inline[-5:]}"
    assert not [p for p in inline if p.startswith(("doctor/shell/install/bundle.py", "doctor/shell/install/downloads.py"))]


def test_an_error_speaks_the_users_language():
    from doctor.cli.runner import error_lang as _error_lang
    from doctor.errors import UsageError

    e = UsageError(T("bundle.error.not_dir", path="/srv/b"))
    assert str(e) == "--bundle /srv/b: not a directory" and e.text("zh") == "--bundle /srv/b：不是目录"
    assert UsageError("inline words").text("zh") == "inline words"
    assert _error_lang(["fix", "--lang", "zh"]) == "zh" and _error_lang(["fix", "--lang=zh"]) == "zh"
    assert _error_lang(["fix", "--lang", "fr"]) in ("en", "zh")  # a bad --lang is its own error, never a crash here
