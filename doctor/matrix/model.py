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


def _check_prefilterable(value) -> Optional[str]:
    """A log pattern must compile and hold literal text every match contains (the streaming
    prefilter of `explain` finds candidate lines by that text)."""
    err = _check_regex(value)
    if err:
        return err
    from doctor.parse.logscan import PatternError, required

    try:
        required(value)
    except PatternError as e:
        return str(e)
    return None


def _check_code_ref(value) -> Optional[str]:
    err = check_text(value)
    if err:
        return err
    family, _, code = value.partition(":")
    if family not in CODE_FAMILIES or not code:
        return f"must be family:code with family one of {', '.join(CODE_FAMILIES)}"
    return None


def check_signature_row(row: Dict) -> Optional[Tuple[str, str]]:
    """Checks across keys of one [[signature]]: (key, message) when it fails."""
    if not row.get("pattern") and not row.get("codes"):
        return ("pattern", "a signature needs a `pattern`, `codes`, or both")
    return None


def _check_lookback(value) -> Optional[str]:
    return None if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 60 else "must be 1..60 lines"


# Answers that only a look at the host can tell apart: "libatb.so not found" with NNAL absent is
# one cause, with NNAL installed but not sourced another (explain --check picks the one whose
# finding the host reports as a problem).
CONFIRM_SCHEMA: Dict[str, Field] = {
    "finding": Field(check_text, required=True, doc="the check finding id that tells this cause"),
    "cause_en": Field(check_text, required=True),
    "cause_zh": Field(check_text, required=True),
    "fix_en": Field(check_text),
    "fix_zh": Field(check_text),
}

SIGNATURE_SCHEMA: Dict[str, Field] = {
    "id": Field(check_text, required=True, doc="stable id, layer.topic"),
    "pattern": Field(_check_prefilterable, doc="Python regex searched in each log line (this or `codes`)"),
    "codes": Field(_check_code_ref, many=True,
                   doc="vendor codes (family:code, matrices/error-codes.toml) this signature explains wherever a code form finds them"),
    "ignore_case": Field(check_bool, default=False),
    "unless": Field(_check_prefilterable, doc="the signature does not fire when any line matches this"),
    "requires": Field(_check_prefilterable, doc="the signature fires only when some line matches this"),
    "context": Field(_check_regex, doc="must match the matching line or one of the `lookback` lines above it"),
    "lookback": Field(_check_lookback, default=30, doc="lines above the match searched for `context`"),
    "layer": Field(_check_layer, required=True),
    "finding": Field(check_text, doc="the check finding id that confirms the cause"),
    "benign": Field(check_bool, default=False, doc="expected noise, not a problem"),
    "victim": Field(check_bool, default=False, doc="usually the consequence of an error elsewhere"),
    "cause_en": Field(check_text, required=True),
    "cause_zh": Field(check_text, required=True),
    "fix_en": Field(check_text, required=True),
    "fix_zh": Field(check_text, required=True),
    "confirm": Field(check_text, table=CONFIRM_SCHEMA, doc="host findings that tell causes apart"),
    "cases": Field(check_text, many=True, doc="ids in tests/data/case_public_cases.json"),
    "example": Field(check_text, doc="a real log line it must explain"),
    "example_source": Field(check_text, doc="where the example comes from, when not `source`"),
    "near_miss": Field(check_text, many=True, doc="real-looking lines it must not explain"),
    "source": Field(check_text, required=True),
}


@dataclass(frozen=True)
class Confirm:
    finding: str
    cause_en: str
    cause_zh: str
    fix_en: Optional[str] = None
    fix_zh: Optional[str] = None


@dataclass(frozen=True)
class Signature:
    id: str
    layer: str
    cause_en: str
    cause_zh: str
    fix_en: str
    fix_zh: str
    source: str
    pattern: Optional[str] = None
    codes: Tuple[str, ...] = ()
    ignore_case: bool = False
    unless: Optional[str] = None
    requires: Optional[str] = None
    context: Optional[str] = None
    lookback: int = 30
    finding: Optional[str] = None
    benign: bool = False
    victim: bool = False
    confirm: Tuple[Confirm, ...] = ()
    cases: Tuple[str, ...] = ()
    example: Optional[str] = None
    example_source: Optional[str] = None
    near_miss: Tuple[str, ...] = ()


def signature_from(d: Dict) -> Signature:
    d = dict(d)
    d["confirm"] = tuple(Confirm(**c) for c in d.get("confirm") or [])
    return Signature(**_tuples(d))


# ---------------------------------------------------------------------------------------------
# vendor code tables (matrices/error-codes.toml): what a code seen in a log means

CODE_FAMILIES = ("acl", "hccl", "cann_msg", "dcmi", "adxl", "pta", "rt_internal")

_EXAMPLE_FIELDS: Dict[str, Field] = {
    "example": Field(check_text, required=True, doc="a real log line the entry must explain"),
    "example_source": Field(check_text, doc="where the example comes from, when not `source`"),
    "near_miss": Field(check_text, many=True, required=True, doc="lines it must not explain"),
}

CODE_FORM_SCHEMA: Dict[str, Field] = {
    "id": Field(check_text, required=True, doc="form id, family.topic"),
    "family": Field(one_of(*CODE_FAMILIES), required=True),
    "pattern": Field(_check_prefilterable, required=True, doc="regex with a (?P<code>...) group"),
    "source": Field(check_text, required=True),
    **_EXAMPLE_FIELDS,
}

CODE_SCHEMA: Dict[str, Field] = {
    "family": Field(one_of(*CODE_FAMILIES), required=True),
    "code": Field(check_text, required=True, doc="as printed: 507035, EI0006, -8005, 9, ERR02005"),
    "name": Field(check_text, doc="the vendor's symbolic name"),
    "layer": Field(_check_layer, required=True),
    "finding": Field(check_text, doc="the check finding id that confirms a host-side cause"),
    "victim": Field(check_bool, default=False, doc="usually the consequence of an error elsewhere"),
    "wrapper": Field(check_bool, default=False, doc="only wraps another error; never the cause"),
    "meaning_en": Field(check_text, required=True, doc="what the vendor says the code means"),
    "meaning_zh": Field(check_text, required=True),
    "fix_en": Field(check_text, required=True, doc="what to run or read next"),
    "fix_zh": Field(check_text, required=True),
    "source": Field(check_text, required=True),
    **_EXAMPLE_FIELDS,
}

def _check_prefix(value) -> Optional[str]:
    return None if isinstance(value, str) else "must be a string ('' for every code of the family)"


CODE_CLASS_SCHEMA: Dict[str, Field] = {
    "family": Field(one_of(*CODE_FAMILIES), required=True),
    "prefix": Field(_check_prefix, required=True, doc="codes starting with this belong to the class ('' = any)"),
    "layer": Field(_check_layer, required=True),
    "meaning_en": Field(check_text, required=True),
    "meaning_zh": Field(check_text, required=True),
    "fix_en": Field(check_text, required=True),
    "fix_zh": Field(check_text, required=True),
    "source": Field(check_text, required=True),
    **_EXAMPLE_FIELDS,
}

COMPONENT_SCHEMA: Dict[str, Field] = {
    "id": Field(check_text, required=True, doc="torch_npu, cann, nnal, driver, ..."),
    "layer": Field(_check_layer, required=True),
    "name": Field(check_text, required=True, doc="how users call it"),
    "paths": Field(_check_regex, doc="a library path inside this component matches this"),
    "symbols": Field(_check_regex, doc="a (demangled) symbol this component defines matches this"),
    "finding": Field(check_text, doc="the check finding that judges its version"),
    "source": Field(check_text, required=True),
    "example": Field(check_text, doc="a real log line naming a library or symbol of this component"),
    "example_source": Field(check_text),
    "near_miss": Field(check_text, many=True),
}

LIBRARY_SCHEMA: Dict[str, Field] = {
    "name": Field(check_text, required=True, doc="file name without version suffix: libatb.so"),
    "component": Field(check_text, required=True, doc="the component id that ships it"),
    "layer": Field(_check_layer, required=True),
    "finding": Field(check_text),
    "benign": Field(check_bool, default=False),
    "cause_en": Field(check_text, required=True),
    "cause_zh": Field(check_text, required=True),
    "fix_en": Field(check_text, required=True),
    "fix_zh": Field(check_text, required=True),
    "confirm": Field(check_text, table=CONFIRM_SCHEMA),
    "source": Field(check_text, required=True),
    **_EXAMPLE_FIELDS,
}


@dataclass(frozen=True)
class CodeForm:
    id: str
    family: str
    pattern: str
    source: str
    example: str
    near_miss: Tuple[str, ...]
    example_source: Optional[str] = None


@dataclass(frozen=True)
class VendorCode:
    family: str
    code: str
    layer: str
    meaning_en: str
    meaning_zh: str
    fix_en: str
    fix_zh: str
    source: str
    example: str
    near_miss: Tuple[str, ...]
    name: Optional[str] = None
    finding: Optional[str] = None
    victim: bool = False
    wrapper: bool = False
    example_source: Optional[str] = None

    @property
    def key(self) -> str:
        return f"{self.family}:{self.code}"


@dataclass(frozen=True)
class CodeClass:
    family: str
    prefix: str
    layer: str
    meaning_en: str
    meaning_zh: str
    fix_en: str
    fix_zh: str
    source: str
    example: str
    near_miss: Tuple[str, ...]
    example_source: Optional[str] = None

    @property
    def key(self) -> str:
        return f"{self.family}:{self.prefix}"


@dataclass(frozen=True)
class Component:
    id: str
    layer: str
    name: str
    source: str
    paths: Optional[str] = None
    symbols: Optional[str] = None
    finding: Optional[str] = None
    example: Optional[str] = None
    example_source: Optional[str] = None
    near_miss: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Library:
    name: str
    component: str
    layer: str
    cause_en: str
    cause_zh: str
    fix_en: str
    fix_zh: str
    source: str
    example: str
    near_miss: Tuple[str, ...]
    finding: Optional[str] = None
    benign: bool = False
    confirm: Tuple[Confirm, ...] = ()
    example_source: Optional[str] = None


def code_form_from(d: Dict) -> CodeForm:
    return CodeForm(**_tuples(d))


def vendor_code_from(d: Dict) -> VendorCode:
    return VendorCode(**_tuples(d))


def code_class_from(d: Dict) -> CodeClass:
    return CodeClass(**_tuples(d))


def component_from(d: Dict) -> Component:
    return Component(**_tuples(d))


def library_from(d: Dict) -> Library:
    d = dict(d)
    d["confirm"] = tuple(Confirm(**c) for c in d.get("confirm") or [])
    return Library(**_tuples(d))


@dataclass
class Matrix:
    releases: List[Release]
    cann_driver: List[CannDriver]
    torch_npu: List[TorchNpu]
    torch: List[TorchRow]
    signatures: List[Signature]
    files: List[str]
    code_forms: List[CodeForm] = field(default_factory=list)
    codes: List[VendorCode] = field(default_factory=list)
    code_classes: List[CodeClass] = field(default_factory=list)
    components: List[Component] = field(default_factory=list)
    libraries: List[Library] = field(default_factory=list)
