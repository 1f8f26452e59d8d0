"""`ascend-doctor explain`: matching real logs and public cases, rendering, the command shell."""
from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from doctor.usecases.explain import Match, match_log, render_matches, run_explain
from doctor.i18n import resolve_lang
from doctor.matrix.load import parse_file, shipped_dir
from doctor.matrix.model import Signature

DATA = Path(__file__).parent / "data"
JSON_KEYS = ["id", "layer", "cause", "fix", "benign", "finding", "line", "text"]

# Public cases (tests/data/case_public_cases.json, a copy of facts/cases-public.json) whose
# error_excerpt is a real log line, and the signatures that must explain it (exactly these).
# Excerpts join separate log lines with " ... "; the test splits them back into lines.
CASE_EXPECTED = {
    "AVD-002": {"torch.vllm_requires_torch"},
    "AVD-004": {"torch_npu.dev_build_needs_mirror"},
    "AVD-006": {"torch_npu.dev_build_needs_mirror"},
    "AVD-018": {"vllm.api_mismatch"},
    "AVD-020": {"env.vllm_version_override"},
    "AVD-022": {"env.plugin_wrong_vllm_branch"},
    "AVD-024": {"env.cwd_shadow"},
    "AVD-026": {"vllm_ascend.no_register", "vllm_ascend.no_platform"},
    "AVD-028": {"vllm_ascend.dev_build_version"},
    "AVD-032": {"env.libhccl_missing"},
    "AVD-034": {"vllm_ascend.infer_device_type", "vllm_ascend.plugin_load_failed"},
    "AVD-036": {"cann.atb_undefined_symbol"},
    "AVD-038": {"cann.tbe_adapter_undefined_symbol"},
    "AVD-040": {"driver.watchdog_timeout"},
    "AVD-042": {"cann.aclnn_561103"},
    "AVD-044": {"cann.init_env_failed"},
    "AVD-046": {"mooncake.transport_mem_header"},
    "AVD-050": {"mooncake.transfer_failed"},
    "AVD-054": {"vllm.module_missing", "vllm_ascend.triton_collision"},
    "AVD-056": {"vllm_ascend.triton_ascend_index"},
    "AVD-058": {"vllm_ascend.numpy_version_conflict"},
    "AVD-060": {"vllm_ascend.transformers_arch"},
    "AVD-066": {"devices.unsupported_soc"},
    "AVD-068": {"vllm_ascend.custom_kernels_missing"},
    "AVD-070": {"torch_npu.aclrt_peek_symbol"},
    # the excerpt cuts the vllm._C warning before its reason, so the benign vllm._C signature
    # (which needs the libcudart / No module reason) rightly stays silent
    "AVD-072": {"vllm_ascend.no_platform_benign", "vllm_ascend.plugin_activated"},
    "AVD-076": {"cann.runtime_507033"},
}

# Cases whose excerpt is not a log line, and why. They stay listed in the `cases` of the
# signature that covers their cause, but cannot be matched text-wise.
CASE_EXCLUDED = {
    "AVD-008": "a question to the maintainers, not output",
    "AVD-010": "the reporter's prose (Chinese) about the torch conflict, not pip's message",
    "AVD-012": "the reporter's prose (Chinese) about the torch conflict, not pip's message",
    "AVD-014": "the reporter's prose (Chinese) describing the conflict and CUDA wheels",
    "AVD-016": "the reporter's prose (Chinese): 'many cuda/nvidia packages get installed'",
    "AVD-030": "a documentation report in prose ('libatb.so找不到'), not the loader message",
    "AVD-048": "the reporter's summary of a screenshot ('put_start success, transfer failed')",
    "AVD-052": "a paraphrase of the issue title about the triton namespace clash",
    "AVD-062": "a '(pin)' note quoting a requirements comment, not an error",
    "AVD-064": "a paraphrase ('pip cannot find torch-npu'), not pip's output",
    "AVD-074": "the issue title ('[Installation]: Failed to install vllm-ascend via uv.')",
}


@pytest.fixture(scope="module")
def signatures():
    return parse_file(shipped_dir() / "signatures.toml")["signature"]


@pytest.fixture(scope="module")
def cases():
    return {c["id"]: c for c in json.loads((DATA / "case_public_cases.json").read_text(encoding="utf-8"))}


def ids(matches):
    return {m.id for m in matches}


def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def examples():
    rows = []
    for line in read("explain_signature_examples.tsv").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        expected, also, provenance, text = line.split("\t")
        rows.append((expected, {a for a in also.split(",") if a}, provenance, text))
    return rows


# --- public cases --------------------------------------------------------------------------------


def test_case_table_covers_every_case(cases):
    assert not set(CASE_EXPECTED) & set(CASE_EXCLUDED)
    assert set(CASE_EXPECTED) | set(CASE_EXCLUDED) == set(cases), "triage new cases into a table"
    for case_id in CASE_EXCLUDED:
        assert cases[case_id]["error_excerpt"].strip()


@pytest.mark.parametrize("case_id", sorted(CASE_EXPECTED))
def test_public_case_is_explained(case_id, cases, signatures):
    excerpt = cases[case_id]["error_excerpt"]
    matches = match_log(excerpt.replace(" ... ", "\n"), signatures)
    assert ids(matches) == CASE_EXPECTED[case_id]


@pytest.mark.parametrize("case_id", sorted(CASE_EXPECTED))
def test_signature_lists_its_case(case_id, signatures):
    by_id = {s.id: s for s in signatures}
    for sig_id in CASE_EXPECTED[case_id]:
        assert case_id in by_id[sig_id].cases, f"{sig_id} should list {case_id} in cases"


def test_every_signature_has_a_positive_example(signatures):
    covered = {e[0] for e in examples()} | set().union(*CASE_EXPECTED.values())
    assert {s.id for s in signatures} <= covered, sorted({s.id for s in signatures} - covered)


@pytest.mark.parametrize("expected, also, provenance, text", examples(), ids=lambda v: str(v)[:40])
def test_signature_example(expected, also, provenance, text, signatures):
    got = ids(match_log(text, signatures))
    assert expected in got, provenance
    assert got <= {expected} | also, f"unexpected extra matches: {got - {expected} - also}"


# --- real logs -----------------------------------------------------------------------------------


def test_seed001_vllm_serve_help_is_benign_only(signatures):
    matches = match_log(read("explain_seed001_vllm_serve_help.log"), signatures)
    assert ids(matches) == {"vllm_ascend.plugin_activated", "vllm.vllm_c_benign"}
    assert all(m.benign for m in matches)
    assert [m.line for m in matches] == [5, 6]


def test_seed001_pip_conflict(signatures):
    matches = match_log(read("explain_seed001_pip_conflict.log"), signatures)
    assert [(m.id, m.line) for m in matches] == [("torch.npu_pin_mismatch", 2)]
    assert not matches[0].benign


def test_formats_8f_healthy_071_is_benign_only(signatures):
    matches = match_log(read("explain_formats_8f_healthy_071.log"), signatures)
    assert ids(matches) == {"vllm_ascend.no_platform_benign", "vllm.vllm_c_benign", "vllm_ascend.plugin_activated"}
    assert all(m.benign for m in matches)


def test_formats_8f_broken_310p_has_no_platform(signatures):
    matches = match_log(read("explain_formats_8f_broken_310p.log"), signatures)
    assert ids(matches) == {"vllm_ascend.no_platform", "vllm.vllm_c_benign"}
    no_platform = next(m for m in matches if m.id == "vllm_ascend.no_platform")
    assert not no_platform.benign and no_platform.finding == "vllm_ascend.plugin" and no_platform.line == 6


@pytest.mark.parametrize("name, expected", [
    ("explain_formats_8a_libhccl_cann_package.log", "env.libhccl_cann_env"),
    ("explain_torch_npu_libhccl_compiler_package.log", "cann.libhccl_compiler_package"),
    ("explain_formats_8a_libhccl_traceback.log", "env.libhccl_missing"),
])
def test_torch_npu_libhccl_messages(name, expected, signatures):
    assert ids(match_log(read(name), signatures)) == {expected}


def test_libhccl_decorated_message_suppresses_plain_one(signatures):
    # torch's autoload wrapper prints the bare message, torch_npu the decorated one, in one log
    log = read("explain_formats_8a_libhccl_traceback.log") + read("explain_formats_8a_libhccl_cann_package.log")
    assert ids(match_log(log, signatures)) == {"env.libhccl_cann_env"}


def test_unless_suppresses_generic_mooncake_error(signatures):
    log = ("E20251208 14:01:29.602919  2392 multi_transport.cpp:201] Unsupported transport ascend, please rebuild Mooncake\n"
           "RuntimeError: TransferEngine initialization failed with ret_value: -1\n")
    assert ids(match_log(log, signatures)) == {"mooncake.unsupported_transport"}


def test_dcmi_return_codes_pick_the_specific_signature(signatures):
    log = "DrvMngGetConsoleLogLevel failed. (ret=4)\ndcmi module initialize failed. ret is -8005\n"
    assert ids(match_log(log, signatures)) == {"devices.dcmi_init_8005"}


# --- matching semantics (synthetic signatures) ----------------------------------------------------


def sig(**kw) -> Signature:
    base = dict(id="env.t", pattern="boom", layer="env", cause_en="c", cause_zh="原因", fix_en="f",
                fix_zh="修复", source="test")
    base.update(kw)
    return Signature(**base)


def test_one_match_per_signature_on_its_first_line_ordered_by_line():
    a, b = sig(id="env.a", pattern="alpha"), sig(id="env.b", pattern="beta")
    matches = match_log("x\nbeta 1\nalpha 1\nalpha 2\nbeta 2\n", [a, b])
    assert [(m.id, m.line, m.text) for m in matches] == [("env.b", 2, "beta 1"), ("env.a", 3, "alpha 1")]


def test_same_line_keeps_matrix_order():
    a, b = sig(id="env.a", pattern="one"), sig(id="env.b", pattern="two")
    assert [m.id for m in match_log("one two", [b, a])] == ["env.b", "env.a"]


def test_pattern_is_per_line():
    s = sig(pattern=r"first\s+second")
    assert match_log("first\nsecond", [s]) == []
    assert [m.line for m in match_log("first\nfirst second", [s])] == [2]


def test_unless_searches_the_whole_text():
    s = sig(pattern="boom", unless="^all is well$")
    assert ids(match_log("boom\nall is well\n", [s])) == set()
    assert ids(match_log("boom\nnot all is well here\n", [s])) == {"env.t"}


def test_ignore_case_applies_to_pattern_and_unless():
    s = sig(pattern="boom", unless="calm", ignore_case=True)
    assert ids(match_log("BOOM", [s])) == {"env.t"}
    assert ids(match_log("BOOM\nCALM", [s])) == set()
    assert ids(match_log("BOOM", [sig(pattern="boom")])) == set()


def test_crlf_and_trailing_whitespace():
    matches = match_log("ok\r\nboom here   \r\n", [sig()])
    assert [(m.line, m.text) for m in matches] == [(2, "boom here")]


def test_language_selects_texts():
    s = sig(finding="env.cann_env", benign=True)
    en, = match_log("boom", [s], "en")
    zh, = match_log("boom", [s], "zh")
    assert (en.cause, en.fix, zh.cause, zh.fix) == ("c", "f", "原因", "修复")
    assert en.benign and en.finding == "env.cann_env" and en.layer == "env"


def test_empty_log_matches_nothing(signatures):
    assert match_log("", signatures) == []


# --- rendering ------------------------------------------------------------------------------------


def test_json_shape(signatures):
    matches = match_log(read("explain_formats_8f_broken_310p.log"), signatures)
    data = json.loads(render_matches(matches, "en", as_json=True))
    assert list(data) == ["matches"]
    for item in data["matches"]:
        assert list(item) == JSON_KEYS
        assert isinstance(item["line"], int) and isinstance(item["benign"], bool)
    assert [i["id"] for i in data["matches"]] == [m.id for m in matches]


def test_json_empty():
    assert json.loads(render_matches([], "en", as_json=True)) == {"matches": []}


def test_human_output_marks_benign_and_names_finding():
    m1 = Match("vllm_ascend.no_platform", "vllm_ascend", "cause A", "fix A", False, "vllm_ascend.plugin", 6, "No platform")
    m2 = Match("vllm.vllm_c_benign", "vllm", "cause B", "fix B", True, None, 7, "Failed to import")
    out = render_matches([m1, m2], "en")
    first, second = out.split("\n\n")[1:]
    assert "line 6: vllm_ascend.no_platform" in first and "[benign]" not in first
    assert "confirm with: ascend-doctor check" in first and "vllm_ascend.plugin" in first
    assert "[benign]" in second and "confirm with" not in second
    assert "cause A" in first and "fix B" in second


def test_human_output_zh_and_nothing_matched():
    m = Match("env.t", "env", "原因", "修复", True, "env.cann_env", 1, "boom")
    out = render_matches([m], "zh")
    assert "无害" in out and "ascend-doctor check" in out and "env.cann_env" in out
    assert render_matches([], "en") == "No known error signature matched."


def test_resolve_lang():
    assert resolve_lang("zh", {"LANG": "en_US.UTF-8"}) == "zh"
    assert resolve_lang(None, {"LANG": "zh_CN.UTF-8"}) == "zh"
    assert resolve_lang(None, {"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"
    assert resolve_lang(None, {}) == "en"


# --- run_explain / CLI ------------------------------------------------------------------------------


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    # no user overlay from the developer's home, and a fixed language
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    return tmp_path


def test_run_explain_json_from_file(isolated, capsys):
    code = run_explain(str(DATA / "explain_formats_8a_libhccl_cann_package.log"), None, True, [])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    data = json.loads(out)
    assert [(m["id"], m["line"], m["finding"]) for m in data["matches"]] == [("env.libhccl_cann_env", 1, "env.cann_env")]


def test_run_explain_empty_log(isolated, capsys):
    empty = isolated / "empty.log"
    empty.write_bytes(b"")
    assert run_explain(str(empty), "en", True, []) == 0
    assert json.loads(capsys.readouterr().out) == {"matches": []}


def test_run_explain_stdin_with_invalid_utf8(isolated, capsys, monkeypatch):
    data = b"\xff\xfe garbage\nImportError: libatb.so: cannot open shared object file: No such file or directory\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert run_explain("-", "zh", True, []) == 0
    (match,) = json.loads(capsys.readouterr().out)["matches"]
    assert match["id"] == "cann.libatb_missing" and match["line"] == 2 and "NNAL" in match["cause"]


@pytest.mark.parametrize("target", ["missing.log", "."])
def test_run_explain_unreadable(isolated, capsys, target):
    path = isolated / target
    assert run_explain(str(path), "en", False, []) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ascend-doctor: error: cannot read {path}: ")


def test_run_explain_human_default_language(isolated, capsys, monkeypatch):
    monkeypatch.setenv("LC_ALL", "zh_CN.UTF-8")
    assert run_explain(str(DATA / "explain_formats_8f_broken_310p.log"), None, False, []) == 0
    out = capsys.readouterr().out
    assert "vllm_ascend.no_platform" in out and "原因" in out


def test_run_explain_bad_lang(isolated, capsys):
    assert run_explain(str(DATA / "explain_formats_8f_broken_310p.log"), "fr", False, []) == 2
    assert capsys.readouterr().err.startswith("ascend-doctor: error: --lang")


OVERLAY = """schema_version = 1
[[signature]]
id = "env.site_specific"
pattern = 'our proxy said no'
layer = "env"
cause_en = "The site proxy blocked the download."
cause_zh = "站点代理拦截了下载。"
fix_en = "Set HTTPS_PROXY."
fix_zh = "设置 HTTPS_PROXY。"
source = "https://example.invalid/runbook"
"""


def test_run_explain_extra_matrix(isolated, capsys):
    overlay = isolated / "extra.toml"
    overlay.write_text(OVERLAY, encoding="utf-8")
    log = isolated / "x.log"
    log.write_text("ERROR: our proxy said no\n", encoding="utf-8")
    assert run_explain(str(log), "en", True, [overlay]) == 0
    assert [m["id"] for m in json.loads(capsys.readouterr().out)["matches"]] == ["env.site_specific"]


def test_run_explain_broken_extra_matrix(isolated, capsys):
    overlay = isolated / "bad.toml"
    overlay.write_text(OVERLAY.replace("'our proxy said no'", "'(unclosed'"), encoding="utf-8")
    assert run_explain(str(DATA / "explain_formats_8f_broken_310p.log"), "en", True, [overlay]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and str(overlay) in err


def test_cli_command(isolated):
    typer = pytest.importorskip("typer")
    from typer.testing import CliRunner

    from doctor.cli.explain import explain_command

    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """group mode, so the command name is used as in the real CLI"""

    app.command("explain")(explain_command)
    runner = CliRunner()
    log = str(DATA / "explain_formats_8f_healthy_071.log")
    result = runner.invoke(app, ["explain", log, "--json", "--lang", "en"])
    assert result.exit_code == 0, result.output
    assert all(m["benign"] for m in json.loads(result.stdout)["matches"])
    result = runner.invoke(app, ["explain", "--lang", "zh"], input="drvErr=87\n")
    assert result.exit_code == 0 and "devices.drv_err_87" in result.stdout and "HwHiAiUser" in result.stdout
    assert runner.invoke(app, ["explain", str(isolated / "nope.log")]).exit_code == 2
