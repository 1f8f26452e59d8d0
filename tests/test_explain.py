"""`ascend-doctor explain` end to end: public cases and real logs, the JSON and text reports, bad
input, stdin, logs of several nodes (where a multi-rank failure started) and --check."""
from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from doctor.explain.answers import primary, select
from doctor.parse.logscan import scan_text
from doctor.usecases.explain import match_log, run_explain
from tests.explain_kit import catalog
from fakehost import FakeHost
from fakehost.scenarios import ascend_host
from shipped import matrix as shipped_matrix

DATA = Path(__file__).parent / "data"
REPO_ROOT = Path(__file__).resolve().parents[1]

# Public cases (tests/data/case_public_cases.json) whose excerpt is a real log line: the answer
# explain must put first (None: only benign lines) and every answer it gives.
CASE_EXPECTED = {
    "AVD-002": (None, ["torch.vllm_requires_torch"]),  # benign residual of the supported install order
    "AVD-004": ("torch_npu.dev_build_needs_mirror", ["torch_npu.dev_build_needs_mirror"]),
    "AVD-006": ("torch_npu.dev_build_needs_mirror", ["torch_npu.dev_build_needs_mirror"]),
    "AVD-018": ("vllm.api_mismatch", ["vllm.api_mismatch"]),
    "AVD-020": ("env.vllm_version_override", ["env.vllm_version_override"]),
    "AVD-022": ("env.plugin_wrong_vllm_branch", ["env.plugin_wrong_vllm_branch"]),  # load_general_plugins on the line
    "AVD-024": ("env.cwd_shadow", ["env.cwd_shadow"]),
    "AVD-026": ("vllm_ascend.no_register", ["vllm_ascend.no_platform", "vllm_ascend.no_register"]),
    "AVD-028": ("vllm_ascend.dev_build_version", ["vllm_ascend.dev_build_version"]),
    "AVD-032": ("env.libhccl_missing", ["env.libhccl_missing"]),
    "AVD-034": ("vllm_ascend.infer_device_type", ["vllm_ascend.infer_device_type", "vllm_ascend.plugin_load_failed"]),
    "AVD-036": ("cann.atb_undefined_symbol", ["cann.atb_undefined_symbol"]),
    "AVD-038": ("cann.tbe_adapter_undefined_symbol", ["cann.tbe_adapter_undefined_symbol"]),
    "AVD-040": ("driver.watchdog_timeout", ["driver.watchdog_timeout"]),
    "AVD-042": ("cann.aclnn_561103", ["cann.aclnn_561103", "pta.ERR00100"]),
    "AVD-044": ("cann.init_env_failed", ["acl.500001", "cann.init_env_failed"]),
    "AVD-046": ("mooncake.transport_mem_header", ["mooncake.transport_mem_header"]),
    "AVD-050": ("mooncake.transfer_failed", ["mooncake.transfer_failed"]),
    "AVD-054": ("vllm.module_missing", ["vllm.module_missing", "vllm_ascend.triton_collision"]),
    "AVD-056": ("vllm_ascend.triton_ascend_index", ["vllm_ascend.triton_ascend_index"]),
    "AVD-058": ("vllm_ascend.numpy_version_conflict", ["vllm_ascend.numpy_version_conflict"]),
    "AVD-060": ("vllm_ascend.transformers_arch", ["vllm_ascend.transformers_arch"]),
    "AVD-066": ("devices.unsupported_soc", ["devices.unsupported_soc"]),
    "AVD-068": ("vllm_ascend.custom_kernels_missing", ["vllm_ascend.custom_kernels_missing"]),
    "AVD-070": ("torch_npu.aclrt_peek_symbol", ["torch_npu.aclrt_peek_symbol"]),
    "AVD-072": (None, ["vllm_ascend.no_platform_benign", "vllm_ascend.plugin_activated"]),
    "AVD-076": ("cann.runtime_507033", ["cann.runtime_507033"]),
}
# Cases whose excerpt is not a log line (prose, a paraphrase, a title): nothing to match.
CASE_EXCLUDED = {"AVD-008", "AVD-010", "AVD-012", "AVD-014", "AVD-016", "AVD-030", "AVD-048", "AVD-052",
                 "AVD-062", "AVD-064", "AVD-074"}


def explain(text):
    cat = catalog()
    return select(cat.answers(scan_text(text, cat.compiled)))


def cases():
    return {c["id"]: c for c in json.loads((DATA / "case_public_cases.json").read_text(encoding="utf-8"))}


def test_case_table_covers_every_case():
    assert not set(CASE_EXPECTED) & CASE_EXCLUDED
    assert set(CASE_EXPECTED) | CASE_EXCLUDED == set(cases())


@pytest.mark.parametrize("case_id", sorted(CASE_EXPECTED))
def test_public_case(case_id):
    text = "\n".join(cases()[case_id]["error_excerpt"].split(" ... "))
    got = explain(text)
    first, every = CASE_EXPECTED[case_id]
    assert sorted(a.id for a in got) == sorted(every)
    top = primary(got)
    assert (top.id if top else None) == first


def test_benign_log_has_no_primary_answer():
    got = explain((DATA / "explain_formats_8f_healthy_071.log").read_text(encoding="utf-8"))
    assert primary(got) is None
    assert {a.id for a in got} >= {"vllm_ascend.no_platform_benign", "vllm_ascend.plugin_activated"}


def test_broken_310p_log_reports_no_platform():
    got = explain((DATA / "explain_formats_8f_broken_310p.log").read_text(encoding="utf-8"))
    top = primary(got)
    assert top.id == "vllm_ascend.no_platform" and top.finding == "vllm_ascend.plugin"


def test_libhccl_traceback_names_the_library():
    got = explain((DATA / "explain_formats_8a_libhccl_traceback.log").read_text(encoding="utf-8"))
    assert "env.libhccl_missing" in {a.id for a in got} or primary(got).code == "libhccl.so"


def test_match_log_compat_for_smoke_and_mooncake_build():
    sigs = shipped_matrix().signatures
    got = match_log("x\nOSError: libatb.so: cannot open shared object file: No such file or directory\n", sigs)
    assert [(m.id, m.line) for m in got] == [("cann.libatb_missing", 2)]
    coded = match_log("RuntimeError: c10_npu::SetDevice(device_id_), error code is 507033", sigs)
    assert [m.id for m in coded] == ["cann.runtime_507033"]


# -- the command -----------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def plain_env(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    for var in ("LANG", "LC_ALL", "LC_MESSAGES", "ASCEND_DOCTOR_LANG"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def run(capsys, monkeypatch):
    """`ascend-doctor explain ARGS` in this process (the CLI's own error handler included)."""
    from doctor.cli.main import main

    def call(*args, stdin: bytes = b""):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        with pytest.raises(SystemExit) as info:
            main(["explain", *args])
        out = capsys.readouterr()
        return info.value.code, out.out, out.err

    return call


def test_json_report_shape(tmp_path, run):
    log = tmp_path / "node.log"
    log.write_text("INFO start\nOSError: libatb.so: cannot open shared object file: No such file or directory\n")
    code, out, err = run("--json", str(log))
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert list(doc) == ["schema_version", "files", "primary", "matches", "origin", "notes", "host", "last_errors"]
    assert doc["last_errors"] == []  # explained: nothing more
    assert doc["files"] == [{"path": str(log), "lines": 2, "bytes": log.stat().st_size, "cut_lines": 0,
                             "dropped_hits": 0}]
    assert doc["primary"] == {"id": "cann.libatb_missing", "file": str(log), "line": 2}
    m = doc["matches"][0]
    for key in ("id", "layer", "cause", "fix", "benign", "finding", "line", "text", "kind", "confidence", "source",
                "context"):
        assert key in m
    assert m["context"]["before"] == ["INFO start"]


def test_text_report_in_chinese(tmp_path, run):
    log = tmp_path / "a.log"
    log.write_text("OSError: libatb.so: cannot open shared object file: No such file or directory\n")
    code, out, _ = run("--lang", "zh", str(log))
    assert code == 0
    assert "原因" in out and "cann.libatb_missing" in out


def test_stdin(run):
    code, out, _ = run("--json", "-", stdin=b"RuntimeError: c10_npu::SetDevice(device_id_), error code is 507033\n")
    assert code == 0 and json.loads(out)["primary"]["id"] == "cann.runtime_507033"


@pytest.mark.parametrize("arg", ["/no/such/file.log", "DIR", "--lang=xx"])
def test_bad_input_is_one_line_and_exit_2(arg, tmp_path, run):
    args = [str(tmp_path)] if arg == "DIR" else ([arg, str(DATA / "explain_formats_8f_broken_310p.log")]
                                                 if arg.startswith("--") else [arg])
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_terminal_without_input_prints_usage_instead_of_waiting(monkeypatch, capsys):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Tty())
    assert run_explain([], "en", False) == 2
    err = capsys.readouterr().err
    assert "ascend-doctor explain" in err and "|" in err  # how to pass a file or pipe a log


# -- logs of several nodes ---------------------------------------------------------------------------

WAITS = (
    "[ERROR] HCCL(2111665,python3):2025-10-24-11:18:29.499.235 [task_exception_handler.cc:908] [2111665][TaskExecStage][Timeout][Host]Task run failed, base information is streamID:[2], taskID[21], tag[AllReduce_10.0.0.1%enp_60000_0_1761275812718970], AlgType(level 0-1-2):[fullmesh-ring-NHR].\n"
    "[ERROR] HCCL(2111665,python3):2025-10-24-11:18:29.499.247 [task_exception_handler.cc:771] [2111665][TaskExecStage][Timeout][Host]Task run failed, groupRank information is group:[10.0.0.1%enp_60000_0_1761275812718970], user define information[], rankSize[16], rankId[{rank}].\n"
    "EI0002: [PID: 7277] 2025-10-24-11:18:29.645.648 The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank [9].\n"
)
CULPRIT = (
    "(VllmWorker rank=9 pid=4242) INFO 10-24 11:10:02 [model_runner_v1.py:1725] Loading model weights took 15.2 GiB\n"
    "[ERROR] 2025-10-24-11:12:10 (PID:4242, Device:1, RankID:9) ERR00100 PTA call acl api failed\n"
    "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 1; 60.97 GiB total capacity; 58.92 GiB already allocated)\n"
)


def test_origin_is_the_earliest_real_error_not_the_first_file(tmp_path, run):
    files = []
    for name, body in (("node1.log", WAITS.format(rank=0)), ("node2.log", WAITS.format(rank=4)),
                       ("node3.log", CULPRIT), ("node4.log", WAITS.format(rank=12))):
        p = tmp_path / name
        p.write_text(body)
        files.append(str(p))
    code, out, err = run("--json", *files)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["origin"]["node"] == "node3" and doc["origin"]["rank"] == 9
    assert doc["primary"]["file"] == files[2]
    text = run(*files)[1]
    assert "node3" in text.splitlines()[0]


def test_origin_when_every_file_only_waits_is_the_rank_they_wait_for(tmp_path, run):
    files = []
    victim9 = ("[ERROR] 2025-10-24-11:18:31 (PID:4242, Device:1, RankID:9) ERR02200 DIST call hccl api failed\n"
               "[rank9]:[E1024 11:18:31.000000000 ProcessGroupHCCL.cpp:1000] [Rank 9] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=5, OpType=ALLREDUCE) ran for 1800000 milliseconds before timing out.\n")
    for name, body in (("a.log", WAITS.format(rank=0)), ("b.log", WAITS.format(rank=4)), ("c.log", victim9)):
        p = tmp_path / name
        p.write_text(body)
        files.append(str(p))
    doc = json.loads(run("--json", *files)[1])
    assert doc["origin"]["rank"] == 9 and doc["origin"]["node"] == "c" and doc["origin"]["reason"] == "waited_for"


# -- --check: the host's findings decide between causes ---------------------------------------------


@pytest.mark.parametrize("scenario,confirmed", [("nnal_missing", "cann.nnal"), ("not_sourced", "env.nnal_env")])
def test_check_picks_the_cause_the_host_shows(tmp_path, scenario, confirmed, capsys):
    fake = FakeHost(tmp_path)
    ascend_host(fake, "0.13.0")
    if scenario == "nnal_missing":
        fake.remove("/usr/local/Ascend/nnal")
    else:
        for var in ("LD_LIBRARY_PATH", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ATB_HOME_PATH",
                    "ASCEND_AICPU_PATH"):
            fake.env.pop(var, None)
    log = fake.workdir / "serve.log"
    log.write_text("ERROR 06-16 02:47:10 [multiproc_executor.py:870] OSError: libatb.so: cannot open shared object file: No such file or directory\n")
    assert run_explain([str(log)], "en", True, check=True, root=str(fake.root),
                       python=str(fake.python) if fake.python else None, env=dict(fake.env), cwd=str(fake.workdir)) == 0
    doc = json.loads(capsys.readouterr().out)
    host = doc["matches"][0]["host"]
    assert host["finding"] == confirmed and host["confirmed"] is True
    assert doc["host"]["exit_code"] in (3, 4)


def test_matching_is_pure():
    """doctor/explain and doctor/parse read nothing themselves: files, processes and the host are
    the shell's (doctor/shell/host/logread.py streams the input)."""
    import ast

    banned = ("doctor.shell", "doctor.probes", "subprocess", "socket", "requests")
    for path in list((REPO_ROOT / "doctor" / "explain").glob("*.py")) + [REPO_ROOT / "doctor" / "parse" / "logscan.py",
                                                                        REPO_ROOT / "doctor" / "parse" / "logtime.py",
                                                                        REPO_ROOT / "doctor" / "parse" / "demangle.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.startswith(banned) for n in names), (path.name, names)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id != "open", path.name


def test_two_signatures_reading_one_line_as_one_finding_answer_once():
    """A line two signatures read as the same finding (the Chinese description of the install
    order that both torch.install_order_prose and its English sibling accept) is one answer, not
    the same cause said again under "also found"; another finding on that line would stay."""
    line = "安装 vllm 时会卸载 torch"
    sigs = {s.id: s for s in shipped_matrix().signatures}
    import re

    both = [i for i in ("torch.install_order_prose", "torch.install_order_prose_en")
            if re.search(sigs[i].pattern, line, re.I if sigs[i].ignore_case else 0)]
    assert len(both) == 2, both  # the premise: both read it
    got = [a for a in explain(line + "\n") if a.line == 1]
    assert [a.id for a in got] == ["torch.install_order_prose"], [a.id for a in got]
    assert all(a.finding == "torch.version" for a in got)
