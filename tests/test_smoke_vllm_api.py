"""Every vllm name the vllm stage uses (VLLM_API in doctor/smoke_target/smoke_vllm.py) exists in
the real vllm releases (tests/data/vllm_api.json, extracted from the PyPI sdists by parsing, see
smoke_fixtures/vllm_api.py) and in the test stand-in, and the script uses nothing it does not
declare: the stand-in cannot drift from the real API unnoticed."""
import ast
import json
from pathlib import Path

import pytest
from smoke_fixtures.vllm_api import from_tree

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "doctor" / "smoke_target" / "smoke_vllm.py"
LISTING = json.loads((REPO / "tests" / "data" / "vllm_api.json").read_text())
STANDIN = from_tree(REPO / "tests" / "smoke_fixtures" / "standin_vllm")


def declared():
    tree = ast.parse(SCRIPT.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "VLLM_API":
            return ast.literal_eval(node.value)
    raise AssertionError("VLLM_API not found")


API = declared()


def problems(api_tree):
    classes, out = api_tree["classes"], []
    for name in API["imports"]["vllm"]:
        if name not in api_tree["init_names"]:
            out.append(f"vllm.{name} is not exported")
    if classes.get("EngineArgs", {}).get("file") != "vllm/engine/arg_utils.py":
        out.append("EngineArgs is not in vllm/engine/arg_utils.py")
    where = classes.get("FlexibleArgumentParser", {}).get("file", "")
    modules = {p.rsplit(".", 1)[0] for p in API["parser"]}
    if where.replace("/__init__.py", "").replace(".py", "").replace("/", ".") not in modules:
        out.append(f"FlexibleArgumentParser is in {where or 'no file'}")
    for key, members in API["calls"].items():
        cls, _, method = key.partition(".")
        c = classes.get(cls)
        if c is None:
            out.append(f"no class {cls}")
            continue
        if method:
            params = c.get("params", {}).get(method)
            if params is None:
                out.append(f"no {key}")
                continue
            missing = [m for m in members if m not in params]
        else:
            have = set(c.get("fields", [])) | set(c.get("params", {}).get("__init__", []))
            missing = [m for m in members if m not in have]
        if missing:
            out.append(f"{key} lacks {missing}")
    return out


@pytest.mark.parametrize("version", sorted(LISTING))
def test_every_name_the_stage_uses_exists_in_the_release(version):
    assert problems(LISTING[version]) == []
    assert LISTING[version]["source"]["file"] == f"vllm-{version}.tar.gz"
    assert len(LISTING[version]["source"]["sha256"]) == 64


def test_the_stand_in_implements_the_same_names():
    assert problems(STANDIN) == []


def test_the_check_fails_when_a_name_is_missing():
    broken = json.loads(json.dumps(LISTING["0.11.0"]))
    broken["classes"]["SamplingParams"]["fields"].remove("logprobs")
    del broken["classes"]["LLM"]["params"]["generate"]
    assert sorted(problems(broken)) == ["SamplingParams lacks ['logprobs']", "no LLM.generate"]


def test_the_script_uses_only_declared_names():
    """Keyword arguments given to SamplingParams and generate(), attributes read from the
    outputs, and modules imported from vllm are all in VLLM_API."""
    tree = ast.parse(SCRIPT.read_text())
    calls = API["calls"]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("vllm"):
            names = [a.name for a in node.names]
            if node.module in API["imports"]:
                assert set(names) <= set(API["imports"][node.module]), (node.module, names)
            else:
                assert [f"{node.module}.{n}" for n in names][0] in API["parser"], node.module
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            kws = [k.arg for k in node.keywords if k.arg]
            if name == "SamplingParams":
                assert set(kws) <= set(calls["SamplingParams"])
            if name == "generate":
                assert set(kws) <= set(calls["LLM.generate"])
    reads = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    used_output_fields = reads & {"outputs", "token_ids", "logprobs", "logprob", "text", "prompt_token_ids"}
    declared_fields = set(calls["RequestOutput"]) | set(calls["CompletionOutput"]) | set(calls["Logprob"])
    assert used_output_fields <= declared_fields, used_output_fields - declared_fields
