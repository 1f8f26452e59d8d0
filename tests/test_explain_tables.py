"""matrices/error-codes.toml: vendor code tables as data. Every form, code, code class, library
and component explains its real example and stays silent on its near misses, through the whole
catalog (the streaming prefilter included); sources resolve."""
from __future__ import annotations


import pytest

from doctor.explain.catalog import normalise_code
from doctor.parse.logscan import scan_text
from tests.citations import unresolved
from tests.explain_kit import catalog, matrix


def answers(text):
    cat = catalog()
    return cat.answers(scan_text(text, cat.compiled))


M = matrix()


def cited(row):
    assert not unresolved(row.source), unresolved(row.source)
    if row.example_source:
        assert not unresolved(row.example_source), unresolved(row.example_source)


def hits(text, matcher):
    return [h for h in scan_text(text, catalog().compiled) if h.matcher == matcher]


@pytest.mark.parametrize("form", M.code_forms, ids=[f.id for f in M.code_forms])
def test_code_form(form):
    cited(form)
    found = hits(form.example, f"form:{form.id}")
    assert found and all(h.key for h in found), form.example
    assert any(a.code for a in answers(form.example))
    for line in form.near_miss:
        assert not hits(line, f"form:{form.id}"), line


@pytest.mark.parametrize("code", M.codes, ids=[c.key for c in M.codes])
def test_vendor_code(code):
    cited(code)
    norm = normalise_code(code.family, code.code)
    coded = catalog().by_code.get(f"{code.family}:{norm}")
    got = answers(code.example)
    # the table entry explains its example, or a signature keyed on the same code does (a keyed
    # signature may cover one case of the code only: HCCL's 7 with a port that cannot be bound)
    wants = {k.id for k in coded} | {f"{code.family}.{code.code}"} if coded else {f"{code.family}.{code.code}"}
    assert wants & {a.id for a in got}, (wants, [a.id for a in got])
    assert any(a.code == norm for a in got if a.id in wants)
    for line in code.near_miss:
        assert not any(a.code == norm for a in answers(line)), line


@pytest.mark.parametrize("klass", M.code_classes, ids=[c.key for c in M.code_classes])
def test_code_class(klass):
    cited(klass)
    got = answers(klass.example)
    assert any(a.code and a.code.startswith(klass.prefix) for a in got), [(a.id, a.code) for a in got]
    for line in klass.near_miss:
        assert not any(a.code and a.code.startswith(klass.prefix) and a.kind == "code_class" for a in answers(line)), line


@pytest.mark.parametrize("lib", M.libraries, ids=[lib.name for lib in M.libraries])
def test_library(lib):
    cited(lib)
    got = answers(lib.example)
    assert any(a.code == lib.name or lib.name in a.id for a in got), [(a.id, a.code) for a in got]
    for line in lib.near_miss:
        assert not any(lib.name in a.id for a in answers(line)), line


def test_every_component_has_evidence():
    """A component names who ships a library or defines a symbol: it has a real undefined-symbol
    line of its own, or a library of the table (with its real line) belongs to it."""
    referenced = {lib.component for lib in M.libraries}
    for comp in M.components:
        assert not unresolved(comp.source), comp.id
        assert comp.example or comp.id in referenced, comp.id


@pytest.mark.parametrize("comp", [c for c in M.components if c.example], ids=lambda c: c.id)
def test_component_example_names_the_component(comp):
    ids = [a.id for a in answers(comp.example) if a.id.startswith("abi.")]
    assert any(comp.id in i.split(".")[1:] for i in ids), ids
    for line in comp.near_miss:
        assert not any(a.id.startswith("abi.") for a in answers(line)), line


def test_unknown_code_of_a_known_family_is_said_to_be_unknown():
    got = answers("RuntimeError: call aclnnFoo failed, error code is 599999")
    assert [(a.id, a.confidence) for a in got if a.code == "599999"] == [("acl.unknown", "low")] or \
        any(a.kind == "code_class" for a in got if a.code == "599999")


def test_second_audit_code_meanings_say_only_what_the_vendor_says():
    """docs/facts-audit.md, second sample (seed 26): the DCMI and HCCL tables say less than the rows claimed."""
    by_key = {(c.family, c.code): c for c in M.codes}
    c = by_key[("dcmi", "-8005")]  # Huawei's return-code table: 'Internal error.' for any DCMI call
    assert "Internal error" in c.meaning_en and not c.meaning_en.startswith("An internal DCMI error: npu-smi")
    c = by_key[("hccl", "20")]  # hccl_types.h: 'try again', nothing about a busy resource
    assert "busy" not in c.meaning_en and "繁忙" not in c.meaning_zh and "try again" in c.meaning_en
    c = by_key[("hccl", "22")]  # returned when HcclCommGetStatus is not READY; nothing says an earlier fault
    assert "earlier fault" not in c.meaning_en and "op_common.cc" in c.source


def test_third_audit_code_meanings_say_only_what_the_vendor_says():
    """docs/facts-audit.md, third sample (seed 27) and its sweep of error-codes.toml against the vendors' headers."""
    by_key = {(c.family, c.code): c for c in M.codes}
    c = by_key[("pta", "ERR02005")]  # ProcessGroupHCCL.cpp: raised after a failed event query and in other DIST paths
    assert "usually after the HCCL watchdog aborted" not in c.meaning_en and "finishedNPUExecutionInternal" in c.meaning_en
    assert "ProcessGroupHCCL.cpp" in c.source and "中止之后" not in c.meaning_zh
    for code in ("EE9999", "EH9999", "EZ9999"):  # 9999 codes: no template, the raw message (runtime's error-message guide)
        c = by_key[("cann_msg", code)]
        assert "no message template" in c.meaning_en and "macro-selection-guide.md" in c.source
    assert "wraps a runtime failure" not in by_key[("cann_msg", "EH9999")].meaning_en
    # the sweep: what hccl_types.h, aclError.md, adxl_types.h and internal_error_define.hpp say, no more
    assert "hung or was reset" not in by_key[("acl", "507010")].meaning_en
    assert "failed earlier" not in by_key[("acl", "107002")].meaning_en
    assert "rank, size" not in by_key[("hccl", "1")].meaning_en
    assert "remote end" not in by_key[("hccl", "21")].meaning_en and "link between the devices broke" not in by_key[("hccl", "21")].fix_en
    assert "could not recover" not in by_key[("hccl", "23")].meaning_en and "retry constraint" in by_key[("hccl", "23")].meaning_en
    assert "device memory" not in by_key[("hccl", "24")].meaning_en.replace("host or device memory", "")
    assert "transfer" not in by_key[("adxl", "503900")].meaning_en
    c = by_key[("rt_internal", "0x7020014")]
    assert "RT_ERROR_DRV_INVALID_HANDLE" in c.meaning_en and "errcode_manage.cc" in c.source
