"""`ascend-doctor matrix show / explain`: output contracts and one-line errors."""
from __future__ import annotations

import json
import sys
import types

import pytest


def run(args, capsys, monkeypatch=None):
    from doctor.cli.main import main

    with pytest.raises(SystemExit) as info:
        main(["matrix"] + args)
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


@pytest.fixture(autouse=True)
def no_user_overlay(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.delenv("LANG", raising=False)
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)


def test_show_json_is_one_object_with_releases(capsys):
    code, out, err = run(["show", "--json"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert list(doc) == ["releases"]
    rel = {r["vllm_ascend"]: r for r in doc["releases"]}
    r = rel["0.11.0rc3"]
    assert (r["vllm"], r["torch"], r["torch_npu"], r["torch_npu_recommended"]) == ("0.11.0", "2.7.1", "2.7.1", "2.7.1.post1")
    assert r["cann"] == ["8.3.RC2"] and r["official_row"] is True and r["curated"] is True
    assert r["sources"]["torch_npu"].startswith("index metadata")
    assert "origin" not in r
    assert list(rel)[0] == "0.7.1rc1" and len(rel) >= 49


def test_show_json_one_release(capsys):
    code, out, err = run(["show", "--json", "--release", "v0.18.0"], capsys)
    (r,) = json.loads(out)["releases"]
    assert r["vllm_ascend"] == "0.18.0" and r["known_problems"][0]["summary"]


def test_show_table_and_one_release_with_sources(capsys):
    code, out, err = run(["show"], capsys)
    assert code == 0 and "0.30.0rc2" in out and "vllm-ascend compatibility matrix" in out
    code, out, err = run(["show", "--release", "0.13.0rc2", "--lang", "zh"], capsys)
    assert code == 0 and "2.8.0.post1" in out and "已知问题" in out and "来源" in out


def test_explain_release_lists_every_fact_with_its_source(capsys):
    code, out, err = run(["explain", "0.11.0"], capsys)
    assert code == 0
    assert "torch_npu_recommended = 2.7.1.post1" in out
    lines = out.splitlines()
    i = lines.index("  glibc_min = 2.24")
    assert "manylinux tags" in lines[i + 1]
    assert "Known problem: vllm 0.11.0 from the package index requires torch==2.8.0" in out


def test_explain_finding_from_the_catalog(capsys, monkeypatch):
    catalog = types.ModuleType("doctor.rules.catalog")
    catalog.CATALOG = {"vllm.version": {"layer": "vllm", "why_en": "vLLM must match the row.",
                                        "why_zh": "vLLM 版本须与矩阵行一致。", "source": "matrices/vllm-ascend.toml"}}
    monkeypatch.setitem(sys.modules, "doctor.rules.catalog", catalog)
    import doctor.rules

    monkeypatch.setattr(doctor.rules, "catalog", catalog, raising=False)
    code, out, err = run(["explain", "vllm.version"], capsys)
    assert code == 0 and "vllm.version  [vllm]" in out and "vLLM must match the row." in out
    code, out, err = run(["explain", "vllm.version", "--lang", "zh"], capsys)
    assert "vLLM 版本须与矩阵行一致。" in out and "来源" in out
    code, out, err = run(["explain", "nope.nothing"], capsys)
    assert code == 2 and out == "" and err.strip() == "ascend-doctor: error: unknown finding id 'nope.nothing'"


def test_explain_uses_the_real_catalog_when_present(capsys):
    pytest.importorskip("doctor.rules.catalog")
    code, out, err = run(["explain", "cann.driver_compat"], capsys)
    assert code == 0 and out.startswith("cann.driver_compat  [cann]") and "cann-driver.toml" in out
    code, out, err = run(["explain", "cann.probe_error"], capsys)  # a generic id
    assert code == 0 and "[cann]" in out


@pytest.mark.parametrize("args,needle", [
    (["explain", "0.99.0"], "no matrix row for vllm-ascend '0.99.0'"),
    (["show", "--release", "9.9"], "no matrix row"),
    (["show", "--lang", "fr"], "--lang 'fr'"),
    (["show", "--matrix", "/nonexistent/overlay.toml"], "no such file"),
])
def test_bad_input_is_one_line_exit_2(capsys, args, needle):
    code, out, err = run(args, capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err


def test_bad_user_overlay_warns_but_show_works(capsys, tmp_path):
    odir = tmp_path / "cfg" / "ascend-doctor"
    odir.mkdir(parents=True)
    (odir / "matrix-overlay.toml").write_text("[[release]]\nvllm_ascend = 1\n", encoding="utf-8")
    code, out, err = run(["show", "--json"], capsys)
    assert code == 0 and json.loads(out)["releases"]
    assert "warning: ignoring matrix overlay" in err and "matrix-overlay.toml" in err


def test_show_lists_every_fact_field_of_the_schema():
    """`matrix show --release` keeps its own reading order, but never drifts from the schema."""
    from doctor.cli.matrix import FIELDS
    from doctor.matrix.model import RELEASE_SCHEMA

    not_facts = {"vllm_ascend", "known_problems", "deviations", "notes", "source", "sources"}
    assert sorted(FIELDS) == sorted(set(RELEASE_SCHEMA) - not_facts) and len(set(FIELDS)) == len(FIELDS)
