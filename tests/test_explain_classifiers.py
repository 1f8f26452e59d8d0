"""Generic classifiers: rules that explain a family of errors from what the line names (a
library, a symbol, a module, a size), each with a real example and a near miss."""
from __future__ import annotations


import pytest

from doctor.explain.classifiers import CLASSIFIERS
from doctor.parse.logscan import scan_text
from tests.citations import unresolved
from tests.explain_kit import catalog


def answers(text):
    cat = catalog()
    return cat.answers(scan_text(text, cat.compiled))


def classified(text, cid):
    cat = catalog()
    hits = [h for h in scan_text(text, cat.compiled) if h.matcher == f"cls:{cid}"]
    return [a for a in cat.answers(hits)]


@pytest.mark.parametrize("c", CLASSIFIERS, ids=[c.id for c in CLASSIFIERS])
def test_classifier_explains_its_example(c):
    assert not unresolved(c.example_source)
    got = classified(c.example, c.id)
    assert got, c.example
    for a in got:
        assert not unresolved(a.source), (a.id, a.source)
        assert a.cause.text("en") and a.cause.text("zh") and a.fix.text("en") and a.fix.text("zh")


@pytest.mark.parametrize("c", CLASSIFIERS, ids=[c.id for c in CLASSIFIERS])
def test_classifier_near_misses(c):
    assert c.near_miss
    for line in c.near_miss:
        assert not classified(line, c.id), line


def ids(text):
    return [a.id for a in answers(text)]


def test_undefined_symbol_names_who_needs_and_who_provides():
    line = ("ImportError: /usr/local/python3.10.14/lib/python3.10/site-packages/torch_npu/lib/libtorch_npu.so: "
            "undefined symbol: _ZN3atb15CreateOperationINS_5infer14GroupTopkParamEEEiRKT_PPNS_9OperationE")
    got = [a for a in answers(line) if a.id.startswith("abi.")]
    assert [a.id for a in got] == ["abi.torch_npu.nnal"]
    assert "atb::CreateOperation" in got[0].cause.text("en") and got[0].finding == "cann.nnal"


def test_truncated_mangled_symbol_still_names_its_owner():
    line = ("Failed to import from vllm._C with ImportError('/venv/lib/python3.11/site-packages/vllm/_C.abi3.so: "
            "undefined symbol: _ZN3c108ListType3getERKNSt7_")
    assert "abi.vllm.torch" in ids(line)


def test_missing_library_is_looked_up_in_the_table():
    got = answers("OSError: libatb.so: cannot open shared object file: No such file or directory")
    assert any(a.code == "libatb.so" or "libatb.so" in a.id for a in got)
    unknown = answers("ImportError: libfoo_bar.so.3: cannot open shared object file: No such file or directory")
    assert [a.id for a in unknown if "libfoo_bar" in a.id] == ["library.unknown.libfoo_bar.so"]


def test_vllm_ascend_import_names_the_missing_module():
    got = [a for a in answers("ModuleNotFoundError: No module named 'vllm_ascend.distributed'")
           if a.id == "vllm_ascend.api_drift"]
    assert got and "vllm_ascend.distributed" in got[0].cause.text("en")


def test_npu_oom_absurd_size_is_not_a_capacity_problem():
    got = ids("RuntimeError: NPU out of memory. Tried to allocate 8.00 EiB (NPU 0; 60.97 GiB total capacity)")
    assert "oom.npu_absurd_size" in got and "oom.npu" not in got


def test_hccl_timeout_needs_an_error_level_plog_line():
    assert not [a for a in answers("[INFO] HCCL(1,python):2026-03-18-10:33:52 HCCL_CONNECT_TIMEOUT set by default to [120]s")
                if a.id.startswith("hccl")]
