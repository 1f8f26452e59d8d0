"""doctor/findings.py: findings as JSON, commands as printed, the verdict's counts and exit codes,
the root cause and what it blocks (judge)."""
from doctor.findings import FAIL, INFO, OK, SKIP, WARN, Command, Finding, Msg, cmd, judge, msg
from doctor.i18n import T, join


def test_a_command_runs_as_printed():
    c = cmd("pip", "install", "torch==2.7.1+cpu", "--index-url", "https://download.pytorch.org/whl/cpu",
            label=T("plan.missing"), VLLM_TARGET_DEVICE="empty", A="x y")
    assert c.shell() == "A='x y' VLLM_TARGET_DEVICE=empty pip install torch==2.7.1+cpu --index-url https://download.pytorch.org/whl/cpu"
    assert c.to_json("zh") == {"argv": ["pip", "install", "torch==2.7.1+cpu", "--index-url",
                                        "https://download.pytorch.org/whl/cpu"],
                               "shell": c.shell(), "env": {"A": "x y", "VLLM_TARGET_DEVICE": "empty"}, "label": "（未安装）"}
    plain = Command(("echo", "it's"))
    assert plain.shell() == "echo 'it'\"'\"'s'" and plain.to_json() == {"argv": ["echo", "it's"], "shell": plain.shell()}
    assert cmd("ls", 3).argv == ("ls", "3")


def test_finding_json():
    f = Finding("env.cann_env", FAIL, T("env.cann_env.not_set", problems=join([T("env.cann_env.no_opp_path")], "sep.semi")),
                observed=join([T("env.cann_env.no_opp_path")], "sep.semi"), expected="x", hint=T("env.nnal_env.abi.hint"),
                fixable="manual", source="s", evidence=["e"], commands=[cmd("source", "/s.sh")])
    doc = f.to_json("zh")
    assert doc == {"id": "env.cann_env", "layer": "env", "status": "fail",
                   "title": "CANN 环境变量未生效：未设置 ASCEND_OPP_PATH", "observed": "ASCEND_OPP_PATH is not set",
                   "expected": "x", "root_cause": False, "blocked_by": None, "fixable": "manual",
                   "hint": "在新的 shell 中只 source 一次", "source": "s", "evidence": ["e"],
                   "commands": [{"argv": ["source", "/s.sh"], "shell": "source /s.sh"}]}
    bare = Finding("python.version", OK, T("python.version.ok", version="3.11")).to_json()
    assert bare["hint"] is None and "commands" not in bare and bare["observed"] is None and bare["layer"] == "python"


def test_counts_and_exit_codes():
    v = judge([Finding("a.x", s, Msg("t", "t")) for s in (OK, INFO, WARN, FAIL, SKIP, OK)])
    assert v.counts() == {"ok": 2, "warn": 1, "fail": 1, "skip": 1, "info": 1}
    assert v.exit_code() == 3 and v.exit_code("warn") == 3
    assert judge([Finding("a.x", WARN, Msg("t", "t"))]).exit_code() == 4
    assert judge([Finding("a.x", INFO, Msg("t", "t")), Finding("a.y", SKIP, Msg("t", "t"))]).exit_code() == 0
    assert judge([]).root_cause is None


def test_inline_words_still_render_for_smoke():
    m = Msg("import torch{npu}", "导入 torch{npu}")
    assert m.text("en", npu="_npu") == "import torch_npu" and m.text("zh") == "导入 torch{npu}"


# -- the verdict: root cause first, "blocked by" for what follows from it (judge) ------------------


def f(fid, status):
    return Finding(fid, status, msg(fid, fid))


def test_first_failure_in_causal_order_is_the_root_cause_and_blocks_downstream():
    v = judge([f("vllm_ascend.plugin", WARN), f("vllm.version", FAIL), f("torch.version", FAIL),
               f("torch_npu.version", FAIL), f("env.cwd_shadow", WARN), f("python.version", OK)])
    assert v.root_cause == "torch.version"
    by_id = {x.id: x for x in v.findings}
    assert by_id["torch.version"].root_cause and by_id["torch.version"].blocked_by is None
    assert by_id["torch_npu.version"].blocked_by == "torch.version"
    assert by_id["vllm.version"].blocked_by == "torch.version"
    assert by_id["vllm_ascend.plugin"].blocked_by == "torch.version"
    # env rests on cann only: an independent problem is not blamed on torch
    assert by_id["env.cwd_shadow"].blocked_by is None
    assert [x.layer for x in v.findings] == ["python", "torch", "torch_npu", "vllm", "vllm_ascend", "env"]


def test_exit_codes():
    assert judge([f("python.version", OK), f("driver.installed", SKIP), f("vllm.local_version", INFO)]).exit_code() == 0
    warn = judge([f("python.version", WARN)])
    assert warn.exit_code() == 4 and warn.exit_code("warn") == 3
    assert judge([f("python.version", WARN), f("cann.installed", FAIL)]).exit_code() == 3
