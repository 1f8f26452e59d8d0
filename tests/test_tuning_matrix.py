"""matrices/tuning.toml: validated by the loader, consistent with itself and with the rules that
read it, every source a public URL or a repository file."""
import re
from pathlib import Path

import pytest

from citations import unresolved
from doctor.matrix.load import parse_file
from doctor.matrix.schema import MatrixError
from doctor.rules.catalog import CATALOG
from doctor.versions import satisfies
from shipped import matrix as shipped_matrix

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def matrix():
    return shipped_matrix()


def test_rows_refer_to_each_other(matrix):
    names = {v.name for v in matrix.tuning_vars}
    ids = {a.id for a in matrix.tuning_advice}
    for a in matrix.tuning_advice:
        assert a.var in names, a.id
        assert set(a.disagrees_with) <= ids, a.id
        assert a.level == "info" or a.effect_en, f"{a.id}: a warning states the effect its source gives"
    assert len(names) == len(matrix.tuning_vars)


def test_every_fact_a_rule_looks_up_exists(matrix):
    text = "".join(p.read_text() for p in (ROOT / "doctor" / "rules").glob("tuning*.py"))
    wanted = set(re.findall(r'(?:fact|any_fact|_source)\(v, "([a-z0-9_]+)"\)', text)) | \
        set(re.findall(r'v\.(?:fact|any_fact)\("([a-z0-9_]+)"\)', text))
    have = {f.id.split(".")[0] for f in matrix.tuning_facts}
    assert wanted and wanted <= have, sorted(wanted - have)


def test_sources_resolve(matrix):
    rows = matrix.tuning_vars + matrix.tuning_advice + matrix.tuning_facts + matrix.tuning_quant
    bad = {getattr(r, "id", None) or getattr(r, "name", None) or r.scheme: unresolved(r.source) for r in rows}
    assert not {k: v for k, v in bad.items() if v}
    entries = {k: v for k, v in CATALOG.items() if k.startswith("tuning.")}
    assert len(entries) == 33
    assert not {k: unresolved(v["source"]) for k, v in entries.items() if unresolved(v["source"])}


def test_release_windows_match_the_code_that_was_read(matrix):
    """Spot checks against what vllm_ascend/ holds at the tags (docs/tuning.md lists them)."""
    var = {v.name: v for v in matrix.tuning_vars}
    read = lambda name, version: any(satisfies(version, r) for r in var[name].read_by)  # noqa: E731
    assert read("VLLM_ASCEND_ENABLE_FLASHCOMM", "0.9.1") and not read("VLLM_ASCEND_ENABLE_FLASHCOMM", "0.9.2rc1")
    assert read("VLLM_ASCEND_ENABLE_FLASHCOMM", "0.20.1") is True and not read("VLLM_ASCEND_ENABLE_FLASHCOMM", "0.20.2rc1")
    assert read("VLLM_USE_V1", "0.11.0") and not read("VLLM_USE_V1", "0.12.0rc1")
    # issue 25: vllm-ascend 0.7.1rc1 and 0.7.3rc1 do not read it (their vLLM may: not "ignored")
    assert not read("VLLM_USE_V1", "0.7.1rc1") and not read("VLLM_USE_V1", "0.7.3rc1") and read("VLLM_USE_V1", "0.7.3rc2")
    assert any(satisfies("0.7.1rc1", r) for r in var["VLLM_USE_V1"].upstream)
    # 0.27.1rc1 moved these into --additional-config ("no longer supported")
    for name in ("VLLM_ASCEND_ENABLE_NZ", "VLLM_ASCEND_ENABLE_MLAPO", "VLLM_ASCEND_BALANCE_SCHEDULING",
                 "VLLM_ASCEND_ENABLE_FUSED_MC2", "VLLM_ASCEND_FUSION_OP_TRANSPOSE_KV_CACHE_BY_BLOCK"):
        assert read(name, "0.26.0rc1") and not read(name, "0.27.1rc1") and var[name].replaced_by, name
    assert read("VLLM_ASCEND_ENABLE_FLASHCOMM1", "0.30.0rc2")
    acl = var["ACL_OP_INIT_MODE"]
    assert [satisfies(v, acl.overridden[0]) for v in ("0.9.0rc1", "0.9.0rc2", "0.9.1rc1")] == [True, True, False]
    # facts audit, fourth sample (seed 28): envs.py defines these at releases whose code never reads them
    assert read("VLLM_ASCEND_KVCACHE_DELAY_FREE_TIMEOUT", "0.10.2rc1")
    assert not read("VLLM_ASCEND_KVCACHE_DELAY_FREE_TIMEOUT", "0.11.0rc0")
    assert not read("VLLM_ASCEND_KVCACHE_DELAY_FREE_TIMEOUT", "0.11.0rc1")
    assert read("VLLM_ASCEND_LLMDD_RPC_IP", "0.10.1rc1") and read("VLLM_ASCEND_LLMDD_RPC_IP", "0.11.0")
    assert not any(read("VLLM_ASCEND_LLMDD_RPC_IP", v) for v in ("0.9.1rc2", "0.9.1", "0.10.0rc1"))
    facts = {f.id: f for f in matrix.tuning_facts}
    held = lambda fid, version: any(satisfies(version, r) for r in facts[fid].releases)  # noqa: E731
    assert held("launch_blocking_graph_rejected", "0.28.0rc1") and not held("launch_blocking_graph_rejected", "0.29.0rc1")
    assert not held("launch_blocking_graph_rejected", "0.30.0rc2")
    # facts audit (docs/facts-audit.md): v0.9.1rc2 to v0.9.1 do not support 310P at all (no tutorial says eager-only)
    assert all(held("310p_eager_only", v) for v in ("0.9.1rc1", "0.9.2rc1", "0.10.0rc1", "0.18.0rc1", "0.19.1rc1"))
    assert not any(held("310p_eager_only", v) for v in ("0.9.1rc2", "0.9.1rc3", "0.9.1", "0.18.0", "0.20.2rc1"))
    assert all(held("cpu_binding_opt_in", v) for v in ("0.11.0rc1", "0.11.0rc3", "0.14.0rc1", "0.9.1"))
    assert not any(held("cpu_binding_opt_in", v) for v in ("0.11.0rc0", "0.9.2rc1", "0.15.0rc1"))
    assert facts["checked_through"].value == "0.30.0rc2"
    advice = {a.id: a for a in matrix.tuning_advice}
    guide = lambda aid, version: any(satisfies(version, r) for r in advice[aid].releases)  # noqa: E731
    for aid in ("TASK_QUEUE_ENABLE.tuning_guide", "CPU_AFFINITY_CONF.tuning_guide", "LD_PRELOAD.jemalloc"):
        # no optimization_and_tuning.md at these tags
        assert not any(guide(aid, v) for v in ("0.8.4rc1", "0.8.5rc1", "0.9.0rc2", "0.9.1rc1", "0.9.2rc1")), aid
        assert all(guide(aid, v) for v in ("0.9.1rc2", "0.9.1", "0.10.0rc1", "0.30.0rc2")), aid
    assert guide("TASK_QUEUE_ENABLE.tuning_guide", "0.7.3.post1") and not guide("LD_PRELOAD.jemalloc", "0.7.3.post1")
    quant = {q.scheme: q for q in matrix.tuning_quant}
    assert not any(satisfies("0.9.2rc1", r) for r in quant["W4A8_DYNAMIC"].releases)  # not on that branch
    assert any(satisfies("0.10.0rc1", r) for r in quant["W4A8_DYNAMIC"].releases)


def test_the_loader_rejects_a_broken_row(tmp_path):
    bad = tmp_path / "tuning-overlay.toml"
    bad.write_text('[[tuning_fact]]\nid = "x"\nreleases = [">=0.11.0rc1,banana"]\nsource = "README.md"\n')
    with pytest.raises(MatrixError) as e:
        parse_file(bad, cache=False)
    assert "tuning_fact" in str(e.value) and ":3:" in str(e.value)
    bad.write_text('[[tuning_advice]]\nid = "a"\nvar = "X"\nvalue = "1"\nreleases = [">=0"]\nwhen = "sometimes"\n'
                   'who_en = "w"\nwho_zh = "w"\nsource = "README.md"\n')
    with pytest.raises(MatrixError, match="when"):
        parse_file(bad, cache=False)


def test_every_quant_window_fixed_by_the_script_stays_fixed(matrix):
    """bench/tuning_windows.py --quant / --facts (docs/facts-audit.md, "Tuning quant windows, every
    scheme"): the windows the script computed from the registries and messages at every release."""
    quant = {q.scheme: list(q.releases) for q in matrix.tuning_quant}
    # the eighth sample's fix (#34), which the script confirms: C8 is gone from v0.13.0rc1 to v0.18.0rc1
    assert quant["C8"] == [">=0.9.2rc1,<0.13.0rc1", "==0.18.0", ">=0.19.1rc1"]
    assert quant["W4A8_DYNAMIC"] == [">=0.9.1rc2,<0.9.2rc1", ">=0.10.0rc1"]
    assert quant["FP8"] == [">=0.21.0rc1,<0.27.1rc1"]
    facts = {f.id: list(f.releases) for f in matrix.tuning_facts}
    # 0.27.1rc1 on: the assertion needs vLLM's sequence-parallel MoE, which vLLM turns on only with tp > 1
    assert facts["flashcomm1_needs_tp"] == [">=0.12.0rc1,<0.27.1rc1"]
    # the same RuntimeError at v0.14.0rc1, where binding is opt-in
    assert facts["cpu_binding_min_cpus.v0_15"] == [">=0.14.0rc1,<0.16.0rc1"]
    # the same ValueError at v0.7.3rc1 and v0.7.3rc2, which sort before 0.7.3
    assert facts["block_size_prefix_rejected"] == [">=0.7.3rc1,<0.8.4rc1"]
