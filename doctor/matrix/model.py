"""The curated knowledge, as validated plain data (see docs/matrix.md for the file format).

Each row type is declared once: a frozen record (doctor/record.py) whose fields carry their validation rule
(:func:`column`). The TOML schema (:func:`schema_of`) and the conversion of a validated table into
a row (:func:`row_from`) are derived from that declaration, so adding a field means adding one
line here (and its documentation in docs/matrix.md, which a test checks).
"""
from __future__ import annotations

import re
import sys

from doctor.record import field, fields_of, record, replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Type, TypeVar

from doctor.i18n import Words
from doctor.matrix.schema import (
    Field,
    check_ascend,
    check_bool,
    check_date,
    check_layer,
    check_pep440,
    check_regex,
    check_requirement,
    check_specifier,
    check_text,
    one_of,
)

HARDWARE = ("A2", "A3", "310P", "A5")
ARCHES = ("x86_64", "aarch64")
# official image variants: tag suffix after vX ("a2" is the plain tag) -> the Dockerfile it is built from
IMAGE_VARIANTS = {"a2": ("", "Dockerfile"), "openeuler": ("-openeuler", "Dockerfile.openEuler"),
                  "a3": ("-a3", "Dockerfile.a3"), "a3-openeuler": ("-a3-openeuler", "Dockerfile.a3.openEuler"),
                  "310p": ("-310p", "Dockerfile.310p"), "310p-openeuler": ("-310p-openeuler", "Dockerfile.310p.openEuler"),
                  "a5": ("-a5", "Dockerfile.a5"), "a5-openeuler": ("-a5-openeuler", "Dockerfile.a5.openEuler")}

_SPEC = "doctor.matrix.field"  # field metadata: the Field that validates it
_SOURCED = "doctor.matrix.sourced"  # the field is a fact that may name its own source
_ROW = "doctor.matrix.row"  # a table field: the row type of its items
SOURCED_FIELDS = ("<the fields of this row marked sourced>",)  # placeholder resolved by schema_of


def column(check: Callable[[Any], Optional[str]], *, required: bool = False, many: bool = False, mapping: bool = False,
           keys: Optional[Sequence[str]] = None, table: Optional[type] = None, default: Any = None,
           doc: str = "", sourced: bool = False) -> Any:
    """A record field that is also a column of the TOML schema.

    ``many``: a list of checked values (a tuple on the row); ``mapping``: a table of free keys
    with checked values (``keys`` limits them; :data:`SOURCED_FIELDS` means "the row's sourced
    fields"); ``table``: an array of sub-tables of another row type; ``sourced``: a fact that may
    name its own source in the row's ``sources`` table.
    """
    spec = Field(check, required=required, many=many, mapping=mapping, keys=keys,
                 table=schema_of(table) if table is not None else None, default=default, doc=doc)
    meta = {_SPEC: spec, _SOURCED: sourced, _ROW: table}
    if required:
        return field(metadata=meta)
    if many or table is not None:
        return field(default=(), metadata=meta)
    if mapping:
        return field(default_factory=dict, metadata=meta)
    return field(default=default, metadata=meta)


def schema_of(cls: type) -> Dict[str, Field]:
    """The TOML schema of a row type: its columns in declaration order."""
    sourced = sourced_fields(cls)
    out: Dict[str, Field] = {}
    for f in fields_of(cls):
        spec = f.metadata.get(_SPEC)
        if spec is None:
            continue
        if spec.keys is SOURCED_FIELDS:
            spec = replace(spec, keys=sourced)
        out[f.name] = spec
    return out


def sourced_fields(cls: type) -> Tuple[str, ...]:
    return tuple(f.name for f in fields_of(cls) if f.metadata.get(_SOURCED))


R = TypeVar("R")


def row_from(cls: Type[R], table: Dict[str, Any], **extra: Any) -> R:
    """A row from a validated table (lists become tuples, sub-tables rows, dates ISO strings)."""
    values: Dict[str, Any] = dict(extra)
    # a date can only come from a TOML parse, which imported datetime: rows from the JSON cache
    # (every check) need not import it
    dates = sys.modules.get("datetime")
    date_types = (dates.date, dates.datetime) if dates is not None else ()
    for name, how, sub in _columns_of(cls):
        if name not in table:
            continue
        value = table[name]
        if how == "rows":
            value = tuple(row_from(sub, item) for item in value or ())
        elif how == "many":
            value = tuple(value or ())
        elif how == "mapping":
            value = dict(value or {})
        elif date_types and isinstance(value, date_types):
            value = value.isoformat()
        values[name] = value
    return cls(**values)


_COLUMNS: Dict[type, Tuple[Tuple[str, str, Any], ...]] = {}


def _columns_of(cls: type) -> Tuple[Tuple[str, str, Any], ...]:
    """(name, how to convert, sub-row class) of each column, worked out once per class: every
    check builds hundreds of rows, and the field list plus metadata lookups per row cost
    more than the rows themselves."""
    known = _COLUMNS.get(cls)
    if known is None:
        out = []
        for f in fields_of(cls):
            spec = f.metadata.get(_SPEC)
            if spec is None:
                continue
            sub = f.metadata.get(_ROW)
            how = "rows" if sub is not None else "many" if spec.many else "mapping" if spec.mapping else "value"
            out.append((f.name, how, sub))
        known = _COLUMNS[cls] = tuple(out)
    return known


# ---------------------------------------------------------------------------------------------
# [[release]] (matrices/vllm-ascend.toml)


@record(frozen=True)
class KnownProblem:
    summary: str = column(check_text, required=True, doc="what goes wrong, one sentence")
    source: str = column(check_text, required=True, doc="issue URL or repo path@commit")
    workaround: Optional[str] = column(check_text, doc="what to do about it")
    summary_zh: Optional[str] = column(check_text, doc="the summary in Chinese (shown with --lang zh)")
    workaround_zh: Optional[str] = column(check_text, doc="the workaround in Chinese")

    @property
    def summary_words(self) -> Words:
        return Words(self.summary, self.summary_zh)

    @property
    def workaround_words(self) -> Optional[Words]:
        return Words(self.workaround, self.workaround_zh) if self.workaround else None


@record(frozen=True)
class Release:
    vllm_ascend: str = column(check_pep440, required=True, doc="the vllm-ascend release")
    vllm: str = column(check_pep440, required=True, sourced=True,
                       doc="the vLLM release it is built and tested against")
    python: str = column(check_specifier, required=True, sourced=True, doc="supported Python range (docs)")
    cann: Tuple[str, ...] = column(check_ascend, many=True, required=True, sourced=True,
                                   doc="supported CANN, recommended first")
    torch: str = column(check_pep440, required=True, sourced=True)
    torch_npu: str = column(check_pep440, required=True, sourced=True, doc="torch-npu the wheel pins")
    glibc_min: str = column(check_pep440, required=True, sourced=True, doc="glibc the prebuilt wheel needs")
    hardware: Tuple[str, ...] = column(one_of(*HARDWARE), many=True, required=True, sourced=True)
    source: str = column(check_text, required=True, doc="default source of every fact in the row")
    vllm_alternatives: Tuple[str, ...] = column(check_pep440, many=True, sourced=True,
                                                doc="other vLLM versions it supports")
    requires_python: Optional[str] = column(check_specifier, sourced=True,
                                            doc="Requires-Python of the wheel, when it differs")
    cann_by_hardware: Dict[str, str] = column(check_ascend, mapping=True, keys=HARDWARE, sourced=True,
                                              doc="per-hardware CANN")
    torch_npu_recommended: Optional[str] = column(check_pep440, sourced=True,
                                                  doc="post build the docs recommend")
    torchvision: Optional[str] = column(check_specifier, sourced=True)
    torchaudio: Optional[str] = column(check_specifier, sourced=True)
    triton_ascend: Optional[str] = column(check_pep440, sourced=True)
    triton_ascend_alternatives: Tuple[str, ...] = column(check_pep440, many=True, sourced=True)
    transformers: Optional[str] = column(check_specifier, sourced=True)
    numpy: Optional[str] = column(check_specifier, sourced=True)
    extra_requirements: Tuple[str, ...] = column(check_requirement, many=True, sourced=True,
                                                 doc="other packages of the row")
    glibc_by_arch: Dict[str, str] = column(check_pep440, mapping=True, keys=ARCHES, sourced=True,
                                           doc="per-architecture glibc when the wheels' manylinux tags differ")
    mooncake: Optional[str] = column(check_pep440, sourced=True)
    mooncake_install: Optional[str] = column(one_of("pip", "source"), sourced=True)
    images: Tuple[str, ...] = column(check_text, many=True, sourced=True)
    vllm_by_image: Dict[str, str] = column(check_pep440, mapping=True, keys=tuple(IMAGE_VARIANTS), sourced=True,
                                           doc="the vLLM an official image variant builds when it is not `vllm` "
                                               "(its Dockerfile's ARG VLLM_TAG)")
    extra_index_urls: Tuple[str, ...] = column(check_text, many=True, sourced=True)
    distribution: str = column(one_of("wheel", "sdist"), default="wheel", sourced=True)
    official_row: bool = column(check_bool, default=True, sourced=True,
                                doc="false: no row in the official matrix")
    curated: bool = column(check_bool, default=True, doc="false: generated from index metadata")
    released: Optional[str] = column(check_date, sourced=True)
    known_problems: Tuple[KnownProblem, ...] = column(check_text, table=KnownProblem)
    deviations: Dict[str, str] = column(check_text, mapping=True, keys=SOURCED_FIELDS,
                                        doc="why a fact differs from the wheel's metadata")
    notes: Optional[str] = column(check_text)
    sources: Dict[str, str] = column(check_text, mapping=True, keys=SOURCED_FIELDS, doc="per-fact sources")
    origin: str = ""  # "file:line" the row was loaded from (not a column)

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


# ---------------------------------------------------------------------------------------------
# [[cann]] (matrices/cann-driver.toml)


@record(frozen=True)
class CannDriver:
    """What Huawei documents about one CANN release and the NPU driver (Ascend HDK): the lines
    its release notes mark compatible (Y) and not compatible (N). A line they do not mention is
    undocumented, which the query reports as unknown, never as too old."""

    cann: str = column(check_ascend, required=True, doc="the CANN release")
    source: str = column(check_text, required=True,
                         doc="where the pairing is documented (default source of every line)")
    paired: Optional[str] = column(check_ascend, doc="the HDK released with it (its notes' mapping table)")
    compatible: Tuple[str, ...] = column(check_ascend, many=True,
                                         doc="driver (HDK) lines documented compatible (Y), as prefixes: "
                                             "25.5 holds 25.5.1, 26.0.rc1 holds 26.0.rc1.2")
    incompatible: Tuple[str, ...] = column(check_ascend, many=True,
                                           doc="driver lines documented not compatible (N)")
    sources: Dict[str, str] = column(check_text, mapping=True,
                                     doc="driver line -> its source, when it is not the row's source")
    notes: Optional[str] = column(check_text)

    @property
    def documented(self) -> Tuple[str, ...]:
        """Every line documented compatible: the paired HDK and the Y lines."""
        lines = tuple(self.compatible)
        if self.paired and self.paired not in lines:
            lines = (self.paired,) + lines
        return lines

    def source_of(self, line: Optional[str]) -> str:
        if line and line in self.sources:
            return self.sources[line]
        return self.source


# ---------------------------------------------------------------------------------------------
# [[torch_npu]] and [[torch]] (matrices/torch-npu.toml)


@record(frozen=True)
class TorchNpu:
    version: str = column(check_pep440, required=True)
    torch: str = column(check_pep440, required=True)
    python: str = column(check_specifier, required=True)
    source: str = column(check_text, required=True)
    cann: Optional[str] = column(check_ascend, doc="CANN the build targets; absent when no document says")
    torch_x86_64: Optional[str] = column(check_pep440, doc="the torch its x86_64 wheels require when it is not "
                                         "`torch` itself (2.7.1+cpu: PyTorch's CPU build; aarch64 wheels require "
                                         "plain `torch`), from the wheels' METADATA")
    extension: Optional[str] = column(check_text, doc="Ascend/pytorch branch suffix (7.2.0, 26.0.0 ...)")
    index: str = column(one_of("pypi", "ascend-mirror", "obs"), default="pypi")
    arch: Optional[str] = column(one_of(*ARCHES), doc="the build exists for this architecture only")
    url: Optional[str] = column(check_text, doc="direct wheel URL when the build is on no index")
    glibc_min: Optional[str] = column(check_pep440, doc="glibc its wheels need (highest manylinux floor)")
    confirmed: bool = column(check_bool, default=True, doc="false: its CANN is inferred, not documented")
    notes: Optional[str] = column(check_text)


@record(frozen=True)
class TorchRow:
    torch: str = column(check_pep440, required=True)
    torchvision: str = column(check_pep440, required=True)
    python: str = column(check_specifier, required=True)
    source: str = column(check_text, required=True)
    torchaudio: Optional[str] = column(check_pep440, doc="absent when no torchaudio release pins this torch")
    notes: Optional[str] = column(check_text)


# ---------------------------------------------------------------------------------------------
# [[signature]] (matrices/signatures.toml)


def _check_prefilterable(value: Any) -> Optional[str]:
    """A log pattern must compile and hold literal text every match contains (the streaming
    prefilter of `explain` finds candidate lines by that text)."""
    err = check_regex(value)
    if err:
        return err
    from doctor.parse.logscan import PatternError, required

    try:
        required(value)
    except PatternError as e:
        return str(e)
    return None


CODE_FAMILIES = ("acl", "hccl", "cann_msg", "dcmi", "adxl", "pta", "rt_internal")


def _check_code_ref(value: Any) -> Optional[str]:
    err = check_text(value)
    if err:
        return err
    family, _, code = value.partition(":")
    if family not in CODE_FAMILIES or not code:
        return f"must be family:code with family one of {', '.join(CODE_FAMILIES)}"
    return None


def _check_lookback(value: Any) -> Optional[str]:
    ok = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 60
    return None if ok else "must be 1..60 lines"


def _check_prefix(value: Any) -> Optional[str]:
    return None if isinstance(value, str) else "must be a string ('' for every code of the family)"


def check_signature_row(row: Dict) -> Optional[Tuple[str, str]]:
    """Checks across keys of one [[signature]]: (key, message) when it fails."""
    if not row.get("pattern") and not row.get("codes"):
        return ("pattern", "a signature needs a `pattern`, `codes`, or both")
    return None


@record(frozen=True)
class Confirm:
    """A cause that only a look at the host can tell apart: "libatb.so not found" with NNAL
    absent is one cause, with NNAL installed but not sourced another (explain --check picks the
    one whose finding the host reports as a problem)."""

    finding: str = column(check_text, required=True, doc="the check finding id that tells this cause")
    cause_en: str = column(check_text, required=True, doc="the cause when that finding is a problem")
    cause_zh: str = column(check_text, required=True, doc="the cause (Chinese)")
    fix_en: Optional[str] = column(check_text, doc="what to do then")
    fix_zh: Optional[str] = column(check_text, doc="what to do then (Chinese)")


@record(frozen=True)
class Signature:
    id: str = column(check_text, required=True, doc="stable id, layer.topic")
    layer: str = column(check_layer, required=True, doc="the layer the cause lies in")
    cause_en: str = column(check_text, required=True, doc="what it means")
    cause_zh: str = column(check_text, required=True, doc="what it means (Chinese)")
    fix_en: str = column(check_text, required=True, doc="what to do")
    fix_zh: str = column(check_text, required=True, doc="what to do (Chinese)")
    source: str = column(check_text, required=True, doc="where the knowledge comes from")
    pattern: Optional[str] = column(_check_prefilterable, doc="Python regex searched in each log line (this or `codes`)")
    codes: Tuple[str, ...] = column(_check_code_ref, many=True,
                                    doc="vendor codes (family:code, matrices/error-codes.toml) this signature "
                                        "explains wherever a code form finds them")
    ignore_case: bool = column(check_bool, default=False, doc="match without case")
    unless: Optional[str] = column(_check_prefilterable, doc="the signature does not fire when any line matches this")
    requires: Optional[str] = column(_check_prefilterable, doc="the signature fires only when some line matches this")
    context: Optional[str] = column(check_regex, doc="must match the matching line or one of the `lookback` lines above it")
    lookback: int = column(_check_lookback, default=30, doc="lines above the match searched for `context`")
    finding: Optional[str] = column(check_text, doc="the check finding id that confirms the cause")
    benign: bool = column(check_bool, default=False, doc="expected noise, not a problem")
    victim: bool = column(check_bool, default=False, doc="usually the consequence of an error elsewhere")
    confirm: Tuple[Confirm, ...] = column(check_text, table=Confirm, doc="host findings that tell causes apart")
    cases: Tuple[str, ...] = column(check_text, many=True, doc="ids in tests/data/case_public_cases.json")
    example: Optional[str] = column(check_text, doc="a real log line it must explain")
    example_source: Optional[str] = column(check_text, doc="where the example comes from, when not `source`")
    near_miss: Tuple[str, ...] = column(check_text, many=True, doc="real-looking lines it must not explain")



def _check_keywords(value: Any) -> Optional[str]:
    """One keyword group of a [[prose]]: a regex (matched without case) that cannot match
    an empty string, so a group always needs a word of the paste."""
    problem = check_regex(value)
    if problem:
        return problem
    if re.search(value, "", re.I) is not None:
        return "must not match an empty string"
    return None


def _check_window(value: Any) -> Optional[str]:
    ok = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 10
    return None if ok else "must be 1..10 lines"


def check_description_row(row: Dict) -> Optional[Tuple[str, str]]:
    """Checks across keys of one [[prose]]: (key, message) when it fails."""
    if len(row.get("words", ())) < 2:
        return ("words", "a description needs at least two keyword groups that must co-occur")
    if not row.get("signature"):
        missing = [k for k in ("answer", "layer", "cause_en", "cause_zh", "fix_en", "fix_zh") if not row.get(k)]
        if missing:
            return (missing[0], "a description without `signature` needs its own answer, layer, cause and fix")
    return None


@record(frozen=True)
class Description:
    """A cause as a person describes it in words (an issue title, a question, a PR's motivation)
    rather than as a log prints it: keyword groups that must all occur within a few lines of a
    short paste (doctor/explain/describe.py). Read only on short inputs, never by the log scan."""

    id: str = column(check_text, required=True, doc="stable id, describe.<topic>")
    words: Tuple[str, ...] = column(_check_keywords, many=True, required=True,
                                    doc="keyword groups (regexes, matched without case): each must match within `within` lines")
    source: str = column(check_text, required=True, doc="where the knowledge comes from (a public URL)")
    example: str = column(check_text, required=True, doc="a description it must explain")
    near_miss: Tuple[str, ...] = column(check_text, many=True, required=True, doc="texts it must not explain")
    signature: Optional[str] = column(check_text, doc="the [[signature]] whose id, cause and fix the answer takes")
    none: Tuple[str, ...] = column(_check_keywords, many=True, doc="words that rule it out when they occur in the same lines")
    within: int = column(_check_window, default=3, doc="lines the keyword groups must fall within")
    answer: Optional[str] = column(check_text, doc="the answer's id, when no signature holds the cause")
    layer: Optional[str] = column(check_layer, doc="the layer the cause lies in (without `signature`)")
    cause_en: Optional[str] = column(check_text, doc="what it means (without `signature`)")
    cause_zh: Optional[str] = column(check_text, doc="what it means, Chinese (without `signature`)")
    fix_en: Optional[str] = column(check_text, doc="what to do (without `signature`)")
    fix_zh: Optional[str] = column(check_text, doc="what to do, Chinese (without `signature`)")
    benign: Optional[bool] = column(check_bool, doc="expected noise (default: the signature's)")
    example_source: Optional[str] = column(check_text, doc="where the example comes from, when not `source`")


# ---------------------------------------------------------------------------------------------
# vendor code tables (matrices/error-codes.toml): what a code seen in a log means


@record(frozen=True)
class CodeForm:
    id: str = column(check_text, required=True, doc="form id, family.topic")
    family: str = column(one_of(*CODE_FAMILIES), required=True, doc="the code family it finds")
    pattern: str = column(_check_prefilterable, required=True, doc="regex with a (?P<code>...) group")
    source: str = column(check_text, required=True, doc="where the format is documented")
    example: str = column(check_text, required=True, doc="a real log line the entry must explain")
    near_miss: Tuple[str, ...] = column(check_text, many=True, required=True, doc="lines it must not explain")
    example_source: Optional[str] = column(check_text, doc="where the example comes from, when not `source`")


@record(frozen=True)
class VendorCode:
    family: str = column(one_of(*CODE_FAMILIES), required=True, doc="the code family")
    code: str = column(check_text, required=True, doc="as printed: 507035, EI0006, -8005, 9, ERR02005")
    layer: str = column(check_layer, required=True, doc="the layer the cause lies in")
    meaning_en: str = column(check_text, required=True, doc="what the vendor says the code means")
    meaning_zh: str = column(check_text, required=True, doc="the meaning (Chinese)")
    fix_en: str = column(check_text, required=True, doc="what to run or read next")
    fix_zh: str = column(check_text, required=True, doc="what to do (Chinese)")
    source: str = column(check_text, required=True, doc="the vendor's table")
    example: str = column(check_text, required=True, doc="a real log line the entry must explain")
    near_miss: Tuple[str, ...] = column(check_text, many=True, required=True, doc="lines it must not explain")
    name: Optional[str] = column(check_text, doc="the vendor's symbolic name")
    finding: Optional[str] = column(check_text, doc="the check finding id that confirms a host-side cause")
    victim: bool = column(check_bool, default=False, doc="usually the consequence of an error elsewhere")
    wrapper: bool = column(check_bool, default=False, doc="only wraps another error; never the cause")
    generic: bool = column(check_bool, default=False,
                           doc="names only the kind of failure (a rejected parameter): the message printed with it gives the reason")
    example_source: Optional[str] = column(check_text, doc="where the example comes from, when not `source`")

    @property
    def key(self) -> str:
        return f"{self.family}:{self.code}"


@record(frozen=True)
class CodeClass:
    family: str = column(one_of(*CODE_FAMILIES), required=True, doc="the code family")
    prefix: str = column(_check_prefix, required=True, doc="codes starting with this belong to the class ('' = any)")
    layer: str = column(check_layer, required=True, doc="the layer the cause lies in")
    meaning_en: str = column(check_text, required=True, doc="what the class means")
    meaning_zh: str = column(check_text, required=True, doc="the meaning (Chinese)")
    fix_en: str = column(check_text, required=True, doc="what to do")
    fix_zh: str = column(check_text, required=True, doc="what to do (Chinese)")
    source: str = column(check_text, required=True, doc="the vendor's table")
    example: str = column(check_text, required=True, doc="a real log line the entry must explain")
    near_miss: Tuple[str, ...] = column(check_text, many=True, required=True, doc="lines it must not explain")
    example_source: Optional[str] = column(check_text, doc="where the example comes from, when not `source`")

    @property
    def key(self) -> str:
        return f"{self.family}:{self.prefix}"


@record(frozen=True)
class Component:
    id: str = column(check_text, required=True, doc="torch_npu, cann, nnal, driver, ...")
    layer: str = column(check_layer, required=True, doc="its layer")
    name: str = column(check_text, required=True, doc="how users call it")
    source: str = column(check_text, required=True, doc="where its files are documented")
    paths: Optional[str] = column(check_regex, doc="a library path inside this component matches this")
    symbols: Optional[str] = column(check_regex, doc="a (demangled) symbol this component defines matches this")
    finding: Optional[str] = column(check_text, doc="the check finding that judges its version")
    example: Optional[str] = column(check_text, doc="a real log line naming a library or symbol of this component")
    example_source: Optional[str] = column(check_text, doc="where the example comes from")
    near_miss: Tuple[str, ...] = column(check_text, many=True, doc="lines it must not explain")


@record(frozen=True)
class Library:
    name: str = column(check_text, required=True, doc="file name without version suffix: libatb.so")
    component: str = column(check_text, required=True, doc="the component id that ships it")
    layer: str = column(check_layer, required=True, doc="the layer the cause lies in")
    cause_en: str = column(check_text, required=True, doc="why it is missing")
    cause_zh: str = column(check_text, required=True, doc="why (Chinese)")
    fix_en: str = column(check_text, required=True, doc="what to do")
    fix_zh: str = column(check_text, required=True, doc="what to do (Chinese)")
    source: str = column(check_text, required=True, doc="where the knowledge comes from")
    example: str = column(check_text, required=True, doc="a real log line the entry must explain")
    near_miss: Tuple[str, ...] = column(check_text, many=True, required=True, doc="lines it must not explain")
    finding: Optional[str] = column(check_text, doc="the check finding that confirms it")
    benign: bool = column(check_bool, default=False, doc="expected noise, not a problem")
    confirm: Tuple[Confirm, ...] = column(check_text, table=Confirm, doc="host findings that tell causes apart")
    example_source: Optional[str] = column(check_text, doc="where the example comes from, when not `source`")


# ---------------------------------------------------------------------------------------------
# [[mooncake_key]], [[threshold]], [[package_set]]: knowledge the checks apply (matrices/mooncake.toml,
# matrices/vllm-ascend.toml)

KEY_SCOPES = ("config", "p2p", "layerwise", "store", "store_backend")


@record(frozen=True)
class MooncakeKey:
    """Which vllm-ascend releases read a key of a Mooncake config or connector extra config."""

    scope: str = column(one_of(*KEY_SCOPES), required=True,
                        doc="config (MOONCAKE_CONFIG_PATH JSON), p2p / layerwise / store "
                            "(kv_connector_extra_config of a connector family), store_backend")
    key: str = column(check_text, required=True)
    source: str = column(check_text, required=True, doc="the file that reads it, at the release it appears in")
    since: Optional[str] = column(check_pep440, doc="first vllm-ascend that reads it (absent: every release)")
    until: Optional[str] = column(check_pep440, doc="first vllm-ascend that no longer reads it")
    notes: Optional[str] = column(check_text)

    @property
    def window(self) -> Tuple[Optional[str], Optional[str]]:
        return self.since, self.until


@record(frozen=True)
class Threshold:
    """One version a check compares with (the first release that has or needs something)."""

    name: str = column(check_text, required=True, doc="area_topic (no dot: not a finding id), looked up by the checks")
    version: str = column(check_pep440, required=True)
    meaning: str = column(check_text, required=True)
    source: str = column(check_text, required=True)
    package: Optional[str] = column(check_text, doc="what the version is a version of")


@record(frozen=True)
class PackageSet:
    """A named list of package-name patterns (fnmatch) the checks or the planner use."""

    name: str = column(check_text, required=True)
    packages: Tuple[str, ...] = column(check_text, many=True, required=True)
    meaning: str = column(check_text, required=True)
    source: str = column(check_text, required=True)


# ---------------------------------------------------------------------------------------------
# schemas and constructors (derived from the declarations above)

RELEASE_FACTS = sourced_fields(Release)
KNOWN_PROBLEM = schema_of(KnownProblem)
RELEASE_SCHEMA = schema_of(Release)
CANN_DRIVER_SCHEMA = schema_of(CannDriver)
TORCH_NPU_SCHEMA = schema_of(TorchNpu)
TORCH_SCHEMA = schema_of(TorchRow)
SIGNATURE_SCHEMA = schema_of(Signature)


def release_from(d: Dict, origin: str) -> Release:
    return row_from(Release, d, origin=origin)


def cann_driver_from(d: Dict) -> CannDriver:
    return row_from(CannDriver, d)


def torch_npu_from(d: Dict) -> TorchNpu:
    return row_from(TorchNpu, d)


def torch_from(d: Dict) -> TorchRow:
    return row_from(TorchRow, d)


def signature_from(d: Dict) -> Signature:
    return row_from(Signature, d)


# ---------------------------------------------------------------------------------------------
# Tuning knowledge (matrices/tuning.toml, docs/tuning.md): which release reads, sets by default,
# recommends or rejects what. ``releases`` are PEP 440 specifiers over vllm-ascend versions.

# ---------------------------------------------------------------------------------------------
# matrices/tuning.toml


@record(frozen=True)
class TuningVar:
    name: str = column(check_text, required=True, doc="environment variable")
    effect_en: str = column(check_text, required=True, doc="what it does")
    effect_zh: str = column(check_text, required=True, doc="what it does (Chinese)")
    source: str = column(check_text, required=True, doc="where this is read")
    default: Optional[str] = column(check_text, doc="the value in effect when it is unset")
    read_by: Tuple[str, ...] = column(check_specifier, many=True, doc="vllm-ascend releases whose code reads it")
    replaced_by: Optional[str] = column(check_text, doc="the variable or option that replaced it in later releases")
    upstream: Tuple[str, ...] = column(check_specifier, many=True,
                                       doc="releases whose vllm-ascend code does not read it but whose vLLM may: "
                                           "not reported as ignored")
    overridden: Tuple[str, ...] = column(check_specifier, many=True,
                                         doc="releases that overwrite any value the user sets, at import")
    built_by: Tuple[str, ...] = column(check_specifier, many=True,
                                       doc="releases whose source build (setup.py, CMake) reads it; the serving "
                                           "process does not")


@record(frozen=True)
class TuningAdvice:
    id: str = column(check_text, required=True, doc="stable id: VAR.who")
    var: str = column(check_text, required=True, doc="the variable advised on")
    value: str = column(check_text, required=True, doc="the value this source recommends")
    releases: Tuple[str, ...] = column(check_specifier, many=True, required=True, doc="releases the advice applies to")
    who_en: str = column(check_text, required=True, doc="which source says so")
    who_zh: str = column(check_text, required=True, doc="which source says so (Chinese)")
    source: str = column(check_text, required=True, doc="where this is read")
    accept: Tuple[str, ...] = column(check_text, many=True, doc="other values that satisfy the advice")
    when: str = column(one_of("always", "multi_npu", "multi_npu_graph", "no_cpu_binding", "no_sleep_mode"),
                       default="always", doc="condition on the serving setup")
    level: str = column(one_of("info", "warn"), default="info",
                        doc="warn: the source states what is lost without it; info: a recommendation")
    effect_en: Optional[str] = column(check_text, doc="the expected effect, when the source states one")
    effect_zh: Optional[str] = column(check_text, doc="the expected effect (Chinese)")
    disagrees_with: Tuple[str, ...] = column(check_text, many=True,
                                             doc="ids of advice for the same variable that says otherwise")


@record(frozen=True)
class TuningFact:
    id: str = column(check_text, required=True, doc="the fact a rule looks up")
    releases: Tuple[str, ...] = column(check_specifier, many=True, required=True, doc="releases where it holds")
    source: str = column(check_text, required=True, doc="where this is read")
    value: Optional[str] = column(check_text, doc="a value that goes with it (a dtype, a block size ...)")
    note: Optional[str] = column(check_text, doc="a remark")


@record(frozen=True)
class ChipWindow:
    """A quantization scheme's window on some chips whose registry differs from the shared one
    (the 310P's own registry from vllm-ascend 0.15.0rc1): it replaces the row's ``releases`` there."""

    hardware: Tuple[str, ...] = column(one_of(*HARDWARE), many=True, required=True, doc="the chips it is for")
    releases: Tuple[str, ...] = column(check_specifier, many=True, required=True,
                                       doc="releases whose registry on these chips has it (empty: none)")
    source: str = column(check_text, required=True, doc="where this is read")
    moe_only: Tuple[str, ...] = column(check_specifier, many=True,
                                       doc="releases whose registry on these chips has it for MoE expert layers "
                                           "only (linear layers with it fail to load)")
    note: Optional[str] = column(check_text, doc="a remark")


@record(frozen=True)
class TuningQuant:
    scheme: str = column(check_text, required=True, doc="ModelSlim quant type (quant_model_description.json)")
    releases: Tuple[str, ...] = column(check_specifier, many=True, required=True,
                                       doc="releases whose registry has it (on every chip without a chips entry)")
    source: str = column(check_text, required=True, doc="where this is read")
    hardware: Tuple[str, ...] = column(one_of(*HARDWARE), many=True,
                                       doc="the only chips whose registry has it (empty: not bound to a chip)")
    chips: Tuple[ChipWindow, ...] = column(check_text, table=ChipWindow,
                                           doc="per-chip windows that replace releases on their chips "
                                               "(the 310P's own registry)")

    def window(self, chip: Optional[str]) -> Optional[ChipWindow]:
        """The chips entry for ``chip``, or None (then ``releases`` holds there)."""
        return next((c for c in self.chips if chip is not None and chip in c.hardware), None)


@record
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
    mooncake_keys: List[MooncakeKey] = field(default_factory=list)
    thresholds: List[Threshold] = field(default_factory=list)
    package_sets: List[PackageSet] = field(default_factory=list)
    code_forms: List[CodeForm] = field(default_factory=list)
    codes: List[VendorCode] = field(default_factory=list)
    code_classes: List[CodeClass] = field(default_factory=list)
    components: List[Component] = field(default_factory=list)
    libraries: List[Library] = field(default_factory=list)
    descriptions: List[Description] = field(default_factory=list)
