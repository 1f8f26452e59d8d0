"""Every finding id check can emit, why the rule exists and where the knowledge comes from: a
view over the rule records (``doctor.rules.all_rules``), plus the generic ids every layer has.

`ascend-doctor matrix explain <finding-id>` prints these; docs/findings.md lists them
(``python -m doctor.rules.catalog > docs/findings.md``). Ids are a contract (scripts match on
them): add, never rename.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from doctor.i18n import T, Text, tr
from doctor.layers import order
from doctor.rules.base import Rule

# Generic ids: <layer>.probe_error (a probe crashed) and <layer>.rule_error (a rule crashed),
# emitted by the engine (and the Mooncake rules for the part of their probe that failed).
GENERIC: Dict[str, Tuple[Text, str]] = {
    "probe_error": (T("why.generic.probe_error"), "doctor/rules/engine.py"),
    "rule_error": (T("why.generic.rule_error"), "doctor/rules/engine.py"),
}


# Ids that workflows report rather than rules over facts: the smoke stages (results of a run on
# the device, docs/smoke.md) and check --requirements (docs/guard.md). id -> (layer, why, source)
REPORTED: Dict[str, Tuple[str, Text, str]] = {
    "smoke.model": ("smoke", T("why.smoke.model"), "docs/smoke.md"),
    "smoke.vllm": ("smoke", T("why.smoke.vllm"), "docs/smoke.md; https://github.com/vllm-project/vllm-ascend/blob/"
                   "main/docs/source/user_guide/feature_guide/graph_mode.md"),
    "smoke.endpoint": ("smoke", T("why.smoke.endpoint"), "docs/smoke.md; https://github.com/vllm-project/vllm/blob/"
                       "main/vllm/benchmarks/serve.py"),
    "smoke.kvpool": ("smoke", T("why.smoke.kvpool"), "docs/smoke.md#kvpool; https://github.com/vllm-project/vllm-ascend/"
                     "blob/main/docs/source/user_guide/feature_guide/kv_pool.md"),
    "smoke.collective": ("smoke", T("why.smoke.collective"), "docs/smoke.md; https://github.com/NVIDIA/nccl-tests/"
                         "blob/master/doc/PERFORMANCE.md"),
    "env.requirements": ("env", T("why.env.requirements"), "docs/guard.md; "
                         "https://pip.pypa.io/en/stable/reference/installation-report/"),
}


def records() -> List[Rule]:
    """One record per finding id, in causal layer order (rules order within a layer); generic ids
    (``mooncake.probe_error``) are listed once, under GENERIC."""
    from doctor.rules.engine import all_rules

    specific = [r for r in all_rules() if r.id.partition(".")[2] not in GENERIC]
    return sorted(specific, key=lambda r: order(r.layer))


def _entry(layer: str, why: Text, source: str) -> Dict[str, str]:
    return {"layer": layer, "why_en": why.text("en"), "why_zh": why.text("zh"), "source": source}


def catalog() -> Dict[str, Dict[str, str]]:
    """finding id -> {layer, why_en, why_zh, source}."""
    table = {r.id: _entry(r.layer, r.why, r.source) for r in records() if r.why is not None and r.source}
    table.update({fid: _entry(*entry) for fid, entry in REPORTED.items()})
    return table


def describe(finding_id: str) -> Dict[str, str]:
    """The catalog entry of a finding id (generic ids resolved), or KeyError."""
    rule = next((r for r in records() if r.id == finding_id), None)
    if rule is not None and rule.why is not None and rule.source:
        return _entry(rule.layer, rule.why, rule.source)
    if finding_id in REPORTED:
        return _entry(*REPORTED[finding_id])
    layer, _, topic = finding_id.partition(".")
    if topic in GENERIC and layer:
        return _entry(layer, *GENERIC[topic])
    raise KeyError(finding_id)


def markdown() -> str:
    """docs/findings.md, generated: ``python -m doctor.rules.catalog > docs/findings.md``."""
    lines = [f"# {tr('why.doc.title', 'en')} / {tr('why.doc.title', 'zh')}", "",
             tr("why.doc.intro", "en"), "", tr("why.doc.intro", "zh"), ""]
    layer = None
    for fid, entry in catalog().items():
        if entry["layer"] != layer:
            layer = entry["layer"]
            lines += [f"## {layer}", ""]
        lines += [f"### `{fid}`", "", entry["why_en"], "", entry["why_zh"], "", f"Source: {entry['source']}", ""]
    lines += ["## generic", ""]
    for topic, (why, source) in GENERIC.items():
        lines += [f"### `<layer>.{topic}`", "", why.text("en"), "", why.text("zh"), "", f"Source: {source}", ""]
    return "\n".join(lines).rstrip() + "\n"


def __getattr__(name: str) -> object:
    # CATALOG, built on first use: it imports every rule module
    if name == "CATALOG":
        return catalog()
    raise AttributeError(name)


if __name__ == "__main__":
    print(markdown(), end="")
