from doctor.findings import FAIL, INFO, OK, SKIP, WARN, Finding, judge, msg


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
