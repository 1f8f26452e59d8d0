"""The curated knowledge, as validated plain data (see docs/matrix.md for the file format)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from doctor.matrix.schema import (
    Field,
    check_ascend,
    check_bool,
    check_date,
    check_pep440,
    check_requirement,
    check_specifier,
    check_text,
    one_of,
)

HARDWARE = ("A2", "A3", "310P", "A5")
ARCHES = ("x86_64", "aarch64")

# Fields of a release row that carry a fact and may name their own source in [release.sources].
RELEASE_FACTS = (
    "vllm", "vllm_alternatives", "python", "requires_python", "cann", "cann_by_hardware", "torch",
    "torch_npu", "torch_npu_recommended", "torchvision", "torchaudio", "triton_ascend",
    "triton_ascend_alternatives", "transformers", "numpy", "extra_requirements", "glibc_min",
    "glibc_by_arch", "hardware", "mooncake", "mooncake_install", "images", "extra_index_urls",
    "distribution", "official_row", "released",
)

KNOWN_PROBLEM = {
    "summary": Field(check_text, required=True, doc="what goes wrong, one sentence"),
    "source": Field(check_text, required=True, doc="issue URL or repo path@commit"),
    "workaround": Field(check_text, doc="what to do about it"),
}

RELEASE_SCHEMA: Dict[str, Field] = {
    "vllm_ascend": Field(check_pep440, required=True, doc="the vllm-ascend release"),
    "vllm": Field(check_pep440, required=True, doc="the vLLM release it is built and tested against"),
    "vllm_alternatives": Field(check_pep440, many=True, doc="other vLLM versions it supports"),
    "python": Field(check_specifier, required=True, doc="supported Python range (docs)"),
    "requires_python": Field(check_specifier, doc="Requires-Python of the wheel, when it differs"),
    "cann": Field(check_ascend, many=True, required=True, doc="supported CANN, recommended first"),
    "cann_by_hardware": Field(check_ascend, mapping=True, keys=HARDWARE, doc="per-hardware CANN"),
    "torch": Field(check_pep440, required=True),
    "torch_npu": Field(check_pep440, required=True, doc="torch-npu the wheel pins"),
    "torch_npu_recommended": Field(check_pep440, doc="post build the docs recommend"),
    "torchvision": Field(check_specifier),
    "torchaudio": Field(check_specifier),
    "triton_ascend": Field(check_pep440),
    "triton_ascend_alternatives": Field(check_pep440, many=True),
    "transformers": Field(check_specifier),
    "numpy": Field(check_specifier),
    "extra_requirements": Field(check_requirement, many=True, doc="other packages of the row"),
    "glibc_min": Field(check_pep440, required=True, doc="glibc the prebuilt wheel needs"),
    "glibc_by_arch": Field(check_pep440, mapping=True, keys=ARCHES,
                           doc="per-architecture glibc when the wheels' manylinux tags differ"),
    "hardware": Field(one_of(*HARDWARE), many=True, required=True),
    "mooncake": Field(check_pep440),
    "mooncake_install": Field(one_of("pip", "source")),
    "images": Field(check_text, many=True),
    "extra_index_urls": Field(check_text, many=True),
    "distribution": Field(one_of("wheel", "sdist"), default="wheel"),
    "official_row": Field(check_bool, default=True, doc="false: no row in the official matrix"),
    "curated": Field(check_bool, default=True, doc="false: generated from index metadata"),
    "released": Field(check_date),
    "known_problems": Field(check_text, table=KNOWN_PROBLEM),
    "deviations": Field(check_text, mapping=True, keys=RELEASE_FACTS,
                        doc="why a fact differs from the wheel's metadata"),
    "notes": Field(check_text),
    "source": Field(check_text, required=True, doc="default source of every fact in the row"),
    "sources": Field(check_text, mapping=True, keys=RELEASE_FACTS, doc="per-fact sources"),
}

CANN_DRIVER_SCHEMA: Dict[str, Field] = {
    "cann": Field(check_ascend, required=True),
    "drivers": Field(check_ascend, many=True, required=True,
                     doc="driver (HDK) lines it supports, as prefixes: 25.5 holds 25.5.1"),
    "paired": Field(check_ascend, doc="the HDK released with it"),
    "not_drivers": Field(check_ascend, many=True, doc="lines explicitly not supported"),
    "confirmed": Field(check_bool, default=True, doc="false: inferred, not from a release note"),
    "notes": Field(check_text),
    "source": Field(check_text, required=True),
}

TORCH_NPU_SCHEMA: Dict[str, Field] = {
    "version": Field(check_pep440, required=True),
    "torch": Field(check_pep440, required=True),
    "cann": Field(check_ascend, required=True, doc="CANN the build targets"),
    "python": Field(check_specifier, required=True),
    "extension": Field(check_text, doc="Ascend/pytorch branch suffix (7.2.0, 26.0.0 ...)"),
    "index": Field(one_of("pypi", "ascend-mirror", "obs"), default="pypi"),
    "arch": Field(one_of(*ARCHES), doc="the build exists for this architecture only"),
    "url": Field(check_text, doc="direct wheel URL when the build is on no index"),
    "glibc_min": Field(check_pep440, doc="glibc its wheels need (highest manylinux floor)"),
    "confirmed": Field(check_bool, default=True),
    "notes": Field(check_text),
    "source": Field(check_text, required=True),
}

TORCH_SCHEMA: Dict[str, Field] = {
    "torch": Field(check_pep440, required=True),
    "torchvision": Field(check_pep440, required=True),
    "torchaudio": Field(check_pep440, doc="absent when no torchaudio release pins this torch"),
    "python": Field(check_specifier, required=True),
    "notes": Field(check_text),
    "source": Field(check_text, required=True),
}


@dataclass(frozen=True)
class KnownProblem:
    summary: str
    source: str
    workaround: Optional[str] = None


@dataclass(frozen=True)
class Release:
    vllm_ascend: str
    vllm: str
    python: str
    cann: Tuple[str, ...]
    torch: str
    torch_npu: str
    glibc_min: str
    hardware: Tuple[str, ...]
    source: str
    glibc_by_arch: Dict[str, str] = field(default_factory=dict)
    vllm_alternatives: Tuple[str, ...] = ()
    requires_python: Optional[str] = None
    cann_by_hardware: Dict[str, str] = field(default_factory=dict)
    torch_npu_recommended: Optional[str] = None
    torchvision: Optional[str] = None
    torchaudio: Optional[str] = None
    triton_ascend: Optional[str] = None
    triton_ascend_alternatives: Tuple[str, ...] = ()
    transformers: Optional[str] = None
    numpy: Optional[str] = None
    extra_requirements: Tuple[str, ...] = ()
    mooncake: Optional[str] = None
    mooncake_install: Optional[str] = None
    images: Tuple[str, ...] = ()
    extra_index_urls: Tuple[str, ...] = ()
    distribution: str = "wheel"
    official_row: bool = True
    curated: bool = True
    released: Optional[str] = None
    known_problems: Tuple[KnownProblem, ...] = ()
    deviations: Dict[str, str] = field(default_factory=dict)
    notes: Optional[str] = None
    sources: Dict[str, str] = field(default_factory=dict)
    origin: str = ""  # "file:line" the row was loaded from

    @property
    def key(self) -> str:
        return "v" + self.vllm_ascend

    def source_of(self, fact: str) -> str:
        return self.sources.get(fact, self.source)

    @property
    def torch_npu_accepted(self) -> Tuple[str, ...]:
        return tuple(v for v in (self.torch_npu, self.torch_npu_recommended) if v)

    @property
    def triton_ascend_accepted(self) -> Tuple[str, ...]:
        if not self.triton_ascend:
            return ()
        return (self.triton_ascend,) + tuple(self.triton_ascend_alternatives)

    @property
    def vllm_accepted(self) -> Tuple[str, ...]:
        return (self.vllm,) + tuple(self.vllm_alternatives)

    def glibc_for(self, arch: Optional[str]) -> str:
        return self.glibc_by_arch.get(arch or "", self.glibc_min)

    def cann_for(self, hardware: Optional[str]) -> Tuple[str, ...]:
        if hardware and hardware in self.cann_by_hardware:
            return (self.cann_by_hardware[hardware],) + tuple(
                c for c in self.cann if c != self.cann_by_hardware[hardware])
        return self.cann


@dataclass(frozen=True)
class CannDriver:
    cann: str
    drivers: Tuple[str, ...]
    source: str
    paired: Optional[str] = None
    not_drivers: Tuple[str, ...] = ()
    confirmed: bool = True
    notes: Optional[str] = None


@dataclass(frozen=True)
class TorchNpu:
    version: str
    torch: str
    cann: str
    python: str
    source: str
    extension: Optional[str] = None
    index: str = "pypi"
    arch: Optional[str] = None
    url: Optional[str] = None
    glibc_min: Optional[str] = None
    confirmed: bool = True
    notes: Optional[str] = None


@dataclass(frozen=True)
class TorchRow:
    torch: str
    torchvision: str
    python: str
    source: str
    torchaudio: Optional[str] = None
    notes: Optional[str] = None


def _tuples(d: Dict) -> Dict:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in d.items()}


def release_from(d: Dict, origin: str) -> Release:
    d = dict(d)
    if d.get("released") is not None:
        d["released"] = str(d["released"])
    d["known_problems"] = tuple(KnownProblem(**kp) for kp in d.get("known_problems") or [])
    return Release(origin=origin, **_tuples(d))


def cann_driver_from(d: Dict) -> CannDriver:
    return CannDriver(**_tuples(d))


def torch_npu_from(d: Dict) -> TorchNpu:
    return TorchNpu(**d)


def torch_from(d: Dict) -> TorchRow:
    return TorchRow(**d)


def _check_regex(value) -> Optional[str]:
    import re

    if not isinstance(value, str) or not value:
        return "must be a non-empty regular expression"
    try:
        re.compile(value)
    except re.error as e:
        return f"invalid regular expression: {e}"
    return None


def _check_layer(value) -> Optional[str]:
    from doctor.layers import LAYERS

    return None if value in LAYERS else f"{value!r} is not a layer ({', '.join(LAYERS)})"


SIGNATURE_SCHEMA: Dict[str, Field] = {
    "id": Field(check_text, required=True, doc="stable id, layer.topic"),
    "pattern": Field(_check_regex, required=True, doc="Python regex searched in each log line"),
    "ignore_case": Field(check_bool, default=False),
    "unless": Field(_check_regex, doc="the signature does not fire when this matches anywhere"),
    "layer": Field(_check_layer, required=True),
    "finding": Field(check_text, doc="the check finding id that confirms the cause"),
    "benign": Field(check_bool, default=False, doc="expected noise, not a problem"),
    "cause_en": Field(check_text, required=True),
    "cause_zh": Field(check_text, required=True),
    "fix_en": Field(check_text, required=True),
    "fix_zh": Field(check_text, required=True),
    "cases": Field(check_text, many=True, doc="ids in facts/cases-public.json"),
    "source": Field(check_text, required=True),
}


@dataclass(frozen=True)
class Signature:
    id: str
    pattern: str
    layer: str
    cause_en: str
    cause_zh: str
    fix_en: str
    fix_zh: str
    source: str
    ignore_case: bool = False
    unless: Optional[str] = None
    finding: Optional[str] = None
    benign: bool = False
    cases: Tuple[str, ...] = ()


def signature_from(d: Dict) -> Signature:
    return Signature(**_tuples(d))


# ---------------------------------------------------------------------------------------------
# Tuning knowledge (matrices/tuning.toml, docs/tuning.md): which release reads, sets by default,
# recommends or rejects what. ``releases`` are PEP 440 specifiers over vllm-ascend versions.

TUNING_VAR_SCHEMA: Dict[str, Field] = {
    "name": Field(check_text, required=True, doc="environment variable"),
    "effect_en": Field(check_text, required=True, doc="what it does"),
    "effect_zh": Field(check_text, required=True),
    "default": Field(check_text, doc="the value in effect when it is unset"),
    "read_by": Field(check_specifier, many=True, doc="vllm-ascend releases whose code reads it"),
    "replaced_by": Field(check_text, doc="the variable or option that replaced it in later releases"),
    "source": Field(check_text, required=True),
}

TUNING_ADVICE_SCHEMA: Dict[str, Field] = {
    "id": Field(check_text, required=True, doc="stable id: VAR.who"),
    "var": Field(check_text, required=True),
    "value": Field(check_text, required=True, doc="the value this source recommends"),
    "accept": Field(check_text, many=True, doc="other values that satisfy the advice"),
    "releases": Field(check_specifier, many=True, required=True, doc="releases the advice applies to"),
    "level": Field(one_of("info", "warn"), default="info",
                   doc="warn: the source states what is lost without it; info: a recommendation"),
    "when": Field(one_of("always", "multi_npu", "multi_npu_graph", "no_cpu_binding", "no_sleep_mode"),
                  default="always", doc="condition on the serving setup"),
    "who_en": Field(check_text, required=True, doc="which source says so"),
    "who_zh": Field(check_text, required=True),
    "effect_en": Field(check_text, doc="the expected effect, when the source states one"),
    "effect_zh": Field(check_text),
    "disagrees_with": Field(check_text, many=True, doc="ids of advice for the same variable that says otherwise"),
    "source": Field(check_text, required=True),
}

TUNING_FACT_SCHEMA: Dict[str, Field] = {
    "id": Field(check_text, required=True, doc="the fact a rule looks up"),
    "releases": Field(check_specifier, many=True, required=True, doc="releases where it holds"),
    "value": Field(check_text, doc="a value that goes with it (a dtype, a block size ...)"),
    "note": Field(check_text),
    "source": Field(check_text, required=True),
}

TUNING_QUANT_SCHEMA: Dict[str, Field] = {
    "scheme": Field(check_text, required=True, doc="ModelSlim quant type (quant_model_description.json)"),
    "releases": Field(check_specifier, many=True, required=True, doc="releases whose registry has it"),
    "source": Field(check_text, required=True),
}


@dataclass(frozen=True)
class TuningVar:
    name: str
    effect_en: str
    effect_zh: str
    source: str
    default: Optional[str] = None
    read_by: Tuple[str, ...] = ()
    replaced_by: Optional[str] = None


@dataclass(frozen=True)
class TuningAdvice:
    id: str
    var: str
    value: str
    releases: Tuple[str, ...]
    who_en: str
    who_zh: str
    source: str
    accept: Tuple[str, ...] = ()
    when: str = "always"
    level: str = "info"
    effect_en: Optional[str] = None
    effect_zh: Optional[str] = None
    disagrees_with: Tuple[str, ...] = ()


@dataclass(frozen=True)
class TuningFact:
    id: str
    releases: Tuple[str, ...]
    source: str
    value: Optional[str] = None
    note: Optional[str] = None


@dataclass(frozen=True)
class TuningQuant:
    scheme: str
    releases: Tuple[str, ...]
    source: str


def tuning_var_from(d: Dict) -> TuningVar:
    return TuningVar(**_tuples(d))


def tuning_advice_from(d: Dict) -> TuningAdvice:
    return TuningAdvice(**_tuples(d))


def tuning_fact_from(d: Dict) -> TuningFact:
    return TuningFact(**_tuples(d))


def tuning_quant_from(d: Dict) -> TuningQuant:
    return TuningQuant(**_tuples(d))


@dataclass
class Matrix:
    releases: List[Release]
    cann_driver: List[CannDriver]
    torch_npu: List[TorchNpu]
    torch: List[TorchRow]
    signatures: List[Signature]
    files: List[str]
    tuning_vars: List[TuningVar] = field(default_factory=list)
    tuning_advice: List[TuningAdvice] = field(default_factory=list)
    tuning_facts: List[TuningFact] = field(default_factory=list)
    tuning_quant: List[TuningQuant] = field(default_factory=list)
    images: List = field(default_factory=list)  # matrix/images.py OfficialImage rows
