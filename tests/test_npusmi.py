from fakehost import fixture

from doctor.parse.npusmi import error_code, hardware_class, parse_npu_smi


def test_910b4_with_processes():
    info = parse_npu_smi(fixture("npu-smi-910b4-32g.txt"))
    assert info.tool_version == "24.1.rc3" and info.driver_version == "24.1.rc3"
    assert info.layout == "910B" and hardware_class(info) == "A2"
    assert [c.npu for c in info.chips] == list(range(8))
    assert {c.name for c in info.chips} == {"910B4"}
    assert all(c.health == "OK" for c in info.chips)
    assert (info.chips[0].hbm_used_mb, info.chips[0].hbm_total_mb) == (22283, 32768)
    assert info.chips[0].bus_id == "0000:C1:00.0"
    assert [(p.npu, p.pid, p.name) for p in info.processes] == [
        (0, 582939, ""), (1, 695171, ""), (6, 99910, ""), (7, 99976, "")]


def test_partial_910b3_keeps_host_numbering():
    info = parse_npu_smi(fixture("npu-smi-910b3-partial.txt"))
    assert [c.npu for c in info.chips] == [0, 5]
    assert info.chips[1].hbm_total_mb == 65536
    assert info.processes[0].name == "VLLMEngineCore"
    assert hardware_class(info) == "A2"


def test_a3_two_dies_per_npu_with_phy_ids():
    info = parse_npu_smi(fixture("npu-smi-a3.txt"))
    assert info.layout == "A3" and hardware_class(info) == "A3"
    assert len(info.chips) == 16
    assert [c.phy_id for c in info.chips] == list(range(16))
    assert [(c.npu, c.chip) for c in info.chips[:3]] == [(0, 0), (0, 1), (1, 0)]
    assert len(info.processes) == 8 and info.processes[0].name == "pt_main_thread"


def test_310p_duo():
    info = parse_npu_smi(fixture("npu-smi-310p-duo.txt"))
    assert info.layout == "310P" and hardware_class(info) == "310P"
    assert [(c.npu, c.chip, c.phy_id) for c in info.chips] == [(2, 0, 0), (2, 1, 1)]
    assert info.chips[0].memory_total_mb == 44280 and info.chips[0].hbm_total_mb is None


def test_first_generation_910_is_not_an_a2():
    info = parse_npu_smi(fixture("npu-smi-910a-warning.txt"))
    assert info.layout == "910" and hardware_class(info) == "910"
    assert {c.health for c in info.chips} == {"Warning"}
    assert info.tool_version == "23.0.rc1.b070"


def test_error_outputs_are_not_tables():
    for name, code in (("npu-smi-8020.txt", -8020), ("npu-smi-8005.txt", -8005)):
        text = fixture(name)
        assert parse_npu_smi(text) is None
        assert error_code(text) == code
    assert parse_npu_smi("") is None
