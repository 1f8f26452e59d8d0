"""Every plan, step by step in both languages, on a table of literal hosts: the unit-level goldens
of doctor/plan/builder.py (fast: facts literals, the rules' real verdict, a stub installer).
``UPDATE_GOLDENS=1 pytest tests/plan/test_outputs.py`` rewrites outputs.json; review its diff."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict

from doctor.matrix.model import CannDriver, TorchNpu, TorchRow
from doctor.plan import builder
from doctor.rules.engine import make_context, run_rules

from rules import build as b

from .test_fixers import Pip
from goldens import match

EXPECTED = Path(__file__).with_name("outputs.json")

OLD = b.release()  # 0.11.0rc3: CANN 8.3.RC2, Mooncake built from source
NEW = b.release(vllm_ascend="0.13.0", vllm="0.13.0", cann=("8.5.0",), torch="2.8.0", torch_npu="2.8.0",
                torch_npu_recommended=None, torchvision="==0.23.0", triton_ascend="3.2.0", mooncake="0.3.11.post1",
                mooncake_install="pip", extra_index_urls=("https://mirrors.example.org/ascend",),
                extra_requirements=("pybind11>=2.0",), numpy=None, transformers=">=4.57.0")
MATRIX = b.matrix(
    [OLD, NEW],
    cann_driver=[CannDriver(cann="8.3.RC2", compatible=("25.2", "25.0", "24.1"), incompatible=("23.0",), source="s")],
    torch_npu=[TorchNpu("2.7.1", "2.7.1", "8.3.RC1", ">=3.9", "s"),
               TorchNpu("2.7.1.post1", "2.7.1", "8.3.RC1", ">=3.9", "s", index="ascend-mirror"),
               TorchNpu("2.8.0", "2.8.0", "8.5.0", ">=3.9", "s")],
    torch=[TorchRow("2.7.1", "0.22.1", ">=3.9", "s", torchaudio="2.7.1"), TorchRow("2.8.0", "0.23.0", ">=3.9", "s")])


def stack_with(*extra, **versions):
    d = b.stack(**versions)
    for x in extra:
        d[x.name] = x
    return b.packages(d)


def cases() -> Dict[str, dict]:
    """name -> (facts, PlanOptions keywords)."""
    return {
        "healthy": (b.facts(), {}),
        "torch moved by vllm": (b.facts(packages=stack_with(b.dist("vllm", "0.11.0", requires=["torch==2.8.0", "xformers"]),
                                                            torch="2.8.0", torchvision="0.23.0")), {}),
        "cuda torch on aarch64": (b.facts(python=b.python(machine="aarch64"),
                                          packages=stack_with(b.dist("torch", "2.7.1", details={"cuda": "12.6"}),
                                                              b.dist("nvidia-cublas-cu12", "12.6"),
                                                              b.dist("torchaudio", "2.8.0"))), {}),
        "torch-npu off the row": (b.facts(packages=b.packages(b.stack(torch_npu="2.6.0"))), {}),
        "seed 001 vllm": (b.facts(packages=stack_with(b.dist("vllm", "0.11.2+empty", editable=True,
                                                             direct_url="file:///ws/vllm"))), {}),
        "vllm from source": (b.facts(packages=b.packages(b.stack(vllm="0.10.0"))),
                             dict(vllm_from="source", vllm_repo="https://gitee.example/vllm")),
        "no vllm-ascend": (b.facts(packages=b.packages(b.stack(vllm_ascend=None, vllm=None))), {}),
        "plugin broken": (b.facts(packages=stack_with(b.dist("vllm-ascend", "0.11.0rc3"))), {}),
        "mainline triton": (b.facts(packages=stack_with(b.dist("triton", "3.3.0"), b.dist("triton-ascend", "3.2.0"))), {}),
        "numpy 2": (b.facts(packages=b.packages(b.stack(numpy="2.2.0", transformers=None))), {}),
        "missing requirements": (b.facts(packages=stack_with(b.dist("vllm-ascend", "0.11.0rc3", requires=[
            "pybind11>=2.0", "numpy<2", "torch==2.7.1", "foo[bar]>=1; python_version >= '3.8'", "cuda-only; sys_platform == 'win32'"],
            entry_points={"vllm.platform_plugins": {"ascend": "vllm_ascend:register"}}))), {}),
        "generic mooncake": (b.facts(packages=stack_with(b.dist("mooncake-transfer-engine", "0.3.9"))), {}),
        "with mooncake (source row)": (b.facts(), dict(with_mooncake=True)),
        "target 0.13.0": (b.facts(cann=b.cann(version="8.5.0")), dict(target="0.13.0", with_mooncake=True)),
        "target 0.13.0 on old cann": (b.facts(), dict(target="0.13.0")),
        "target on old cann, keep-cann": (b.facts(), dict(target="0.13.0", prefer="keep-cann")),
        "not sourced and sick": (b.facts(env={}, devices=b.devices(**b.npu_smi(b.chips(("OK", "Critical"))))), {}),
        "fresh on cann 8.5": (b.facts(cann=b.cann(version="8.5.0"), packages=b.packages({})), {}),
        "fresh, nothing fits": (b.facts(cann=b.cann(version="7.0.0"), packages=b.packages({})), {}),
        "fresh on 310P": (b.facts(cann=b.cann(version="8.5.0"), packages=b.packages({}),
                                  devices=b.devices(**b.npu_smi(b.chips(("OK",), name="310P3"), layout="310P"))), {}),
        "triton-ascend on 310P": (b.facts(cann=b.cann(version="8.5.0"),
                                          devices=b.devices(**b.npu_smi(b.chips(("OK",), name="310P3"), layout="310P")),
                                          packages=stack_with(b.dist("triton-ascend", "3.2.0"), vllm_ascend="0.13.0",
                                                              vllm="0.13.0", torch="2.8.0", torch_npu="2.8.0",
                                                              torchvision="0.23.0")), {}),
        "triton-ascend kept": (b.facts(cann=b.cann(version="8.5.0"),
                                       packages=stack_with(b.dist("triton-ascend", "3.2.0"), vllm_ascend="0.13.0",
                                                           vllm="0.13.0", torch="2.8.0", torch_npu="2.8.0",
                                                           torchvision="0.23.0")), {}),
        "triton-ascend next to triton": (b.facts(cann=b.cann(version="8.5.0"),
                                                 packages=stack_with(b.dist("triton-ascend", "3.2.0"), b.dist("triton", "3.3.0"),
                                                                     vllm_ascend="0.13.0", vllm="0.13.0", torch="2.8.0",
                                                                     torch_npu="2.8.0", torchvision="0.23.0")), {}),
        "triton-ascend other": (b.facts(cann=b.cann(version="8.5.0"),
                                        packages=stack_with(b.dist("triton-ascend", "3.1.0"), vllm_ascend="0.13.0",
                                                            vllm="0.13.0", torch="2.8.0", torch_npu="2.8.0",
                                                            torchvision="0.23.0")), {}),
        "torchvision off and torchaudio": (b.facts(packages=stack_with(b.dist("torchaudio", "2.8.0"), torchvision="0.23.0")), {}),
        "vllm kept, residual": (b.facts(packages=stack_with(b.dist("vllm", "0.11.0", requires=[
            "torch==2.8.0", "xformers==0.0.30; platform_system == 'Linux'", "nvidia-nccl-cu12", "cupy-cuda12x; sys_platform == 'win32'",
            "numpy", "not a requirement !"]), torch_npu="2.7.1")), {}),
        "extra requirements": (b.facts(cann=b.cann(version="8.5.0"),
                                       packages=stack_with(b.dist("pybind11", "1.0"), b.dist("triton-ascend", "3.2.0"),
                                                           vllm_ascend="0.13.0", vllm="0.13.0", torch="2.8.0",
                                                           torch_npu="2.8.0", torchvision="0.23.0", transformers="4.40.0")), {}),
        "npu mooncake of the row": (b.facts(cann=b.cann(version="8.5.0"),
                                            packages=stack_with(b.dist("mooncake-transfer-engine-npu", "0.3.11.post1"),
                                                                b.dist("triton-ascend", "3.2.0"), vllm_ascend="0.13.0",
                                                                vllm="0.13.0", torch="2.8.0", torch_npu="2.8.0",
                                                                torchvision="0.23.0")), dict(with_mooncake=True)),
        "old npu mooncake": (b.facts(cann=b.cann(version="8.5.0"),
                                     packages=stack_with(b.dist("mooncake-transfer-engine-npu", "0.3.10"),
                                                         b.dist("triton-ascend", "3.2.0"), vllm_ascend="0.13.0",
                                                         vllm="0.13.0", torch="2.8.0", torch_npu="2.8.0",
                                                         torchvision="0.23.0")), dict(with_mooncake=True)),
        "driver too old for the target": (b.facts(driver=b.driver(version="23.0.7")), dict(target="0.11.0rc3")),
        "target not in the matrix": (b.facts(), dict(target="9.9.9")),
        "fresh, glibc too old": (b.facts(cann=b.cann(version="8.5.0"), packages=b.packages({}),
                                         python=b.python(glibc="2.17")), {}),
        "bare machine": (b.facts(driver=b.driver(found=False, version=None), firmware=b.firmware(found=False, version=None),
                                 cann=b.cann(found=False, version=None), devices=b.devices(count=0),
                                 packages=b.packages({})), {}),
        "cuda torchaudio, no paired build": (b.facts(cann=b.cann(version="8.5.0"), packages=stack_with(
            b.dist("torchaudio", "2.8.0+cu126"), b.dist("triton-ascend", "3.2.0"), vllm_ascend="0.13.0", vllm="0.13.0",
            torch="2.8.0", torch_npu="2.8.0", torchvision="0.23.0")), {}),
        "uv-like installer on aarch64": (b.facts(python=b.python(machine="aarch64"), packages=b.packages(b.stack(torch="2.8.0"))),
                                         dict(vllm_from="source")),
    }


def _render(plan) -> str:
    doc = plan.to_json("en")
    zh = plan.to_json("zh")
    doc["zh"] = [zh["choice_why"]] + [s["why"] for s in zh["steps"]] + zh["notes"] + zh["expected_residual"] + \
        [json.dumps(a, ensure_ascii=False, sort_keys=True) for a in zh["alternatives"]]
    return json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True)


def _verdict_for(facts):
    """The check's rules on ``facts`` against the release plan_for chose."""
    return lambda version: run_rules(make_context(facts, MATRIX, "auto", version))


def outputs() -> Dict[str, str]:
    out = {}
    for name, (facts, kw) in cases().items():
        opts = builder.PlanOptions(installer=Pip(), constraint_file="/state/constraints.txt", src_dir="/state/src",
                                   doctor_python="/doctor/bin/python", **kw)
        hardware = make_context(facts, MATRIX).hardware
        try:
            plan = builder.plan_for(facts, MATRIX, _verdict_for(facts), hardware, opts)
            out[name] = _render(plan)
        except Exception as e:  # a plan that cannot be made says why
            out[name] = f"{type(e).__name__}: {e}"
    return out


def test_every_plan_step_by_step():
    match(outputs(), EXPECTED)


def test_requirements_and_constraints_text():
    plan = builder.plan_for(b.facts(packages=b.packages(b.stack(numpy="2.2.0"))), MATRIX,
                            lambda v: run_rules(make_context(b.facts(), MATRIX, "auto", v)), "A2",
                            builder.PlanOptions(installer=Pip()))
    text = builder.requirements_text(plan, ["https://mirror.example/simple"])
    assert text.splitlines()[:3] == ["# ascend-doctor fix: pins for vllm-ascend 0.11.0rc3 (matrix row v0.11.0rc3)",
                                     "# pip install --no-deps -r THIS_FILE installs the stack; pip install -c THIS_FILE keeps it",
                                     "--extra-index-url https://mirror.example/simple"]
    assert "numpy<2.0.0" in text.splitlines() and "torch==2.7.1+cpu" in text.splitlines()
    constraints = builder.constraints_text({"numpy": "<2.0.0", "torch": "2.7.1+cpu", "x": "any"}).splitlines()
    assert constraints == ["numpy<2.0.0", "torch==2.7.1+cpu"]
