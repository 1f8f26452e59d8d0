"""Generic causes that generalise past any list of signatures.

Each classifier is one record: a structural pattern over the key error line, the function that
turns a hit into an answer (with the vendor tables of matrices/error-codes.toml: which component
ships a library, which component defines a symbol), one real excerpt it must explain and a
near-miss it must not (tests/test_explain_classifiers.py runs both).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from doctor.explain.answers import CLASSIFIER, HIGH, LOW, MEDIUM, Answer, Bi
from doctor.findings import cmd
from doctor.i18n import T
from doctor.layers import LAYERS
from doctor.matrix.model import Component, Library
from doctor.parse.demangle import qualified_name
from doctor.parse.logscan import Hit


@dataclass(frozen=True)
class Tables:
    """The parts of the matrix the classifiers read."""

    libraries: Dict[str, Library]
    components: Sequence[Component]

    def component(self, cid: Optional[str]) -> Optional[Component]:
        return next((c for c in self.components if c.id == cid), None)

    def by_path(self, path: str) -> Optional[Component]:
        return next((c for c in self.components if c.paths and re.search(c.paths, path)), None)

    def by_symbol(self, name: str) -> Optional[Component]:
        return next((c for c in self.components if c.symbols and re.search(c.symbols, name)), None)


Build = Callable[[Hit, Tables], Optional[Answer]]


@dataclass(frozen=True)
class Classifier:
    id: str
    pattern: str
    build: Build
    example: str
    example_source: str
    near_miss: Tuple[str, ...]
    key: Optional[str] = None
    ignore_case: bool = False
    context: Optional[str] = None
    lookback: int = 0


def _answer(hit: Hit, aid: str, layer: str, cause, fix, source: str, confidence: str, **kw) -> Answer:
    return Answer(id=aid, kind=CLASSIFIER, layer=layer, cause=cause, fix=fix, source=source,
                  confidence=confidence, line=hit.line, text=hit.text, before=hit.before,
                  after=hit.after, count=hit.count, **kw)


def _lower_layer(*layers: str) -> str:
    return min(layers, key=LAYERS.index)


# ---------------------------------------------------------------------------------------------
# X: cannot open shared object file -> which component ships X

SO_RE = re.compile(r"^(lib[\w+-]*?|[\w+-]+?)(\.so)(?:\.[\d.]+)?$")


def library_base(name: str) -> str:
    """``/a/b/libcudart.so.12`` -> ``libcudart.so``."""
    base = name.rsplit("/", 1)[-1]
    m = SO_RE.match(base)
    return (m.group(1) + m.group(2)) if m else base


def _missing_library(hit: Hit, tables: Tables) -> Optional[Answer]:
    name = library_base(hit.groups.get("lib", ""))
    lib = tables.libraries.get(name)
    if lib is not None:
        return _answer(hit, f"library.{name}", lib.layer, Bi(lib.cause_en, lib.cause_zh), Bi(lib.fix_en, lib.fix_zh),
                       lib.source, HIGH, finding=lib.finding, benign=lib.benign, confirm=lib.confirm, code=name)
    # Unknown library: say how to find its owner instead of guessing.
    return _answer(hit, f"library.unknown.{name}", "env", T("explain.lib.unknown.cause", lib=name),
                   T("explain.lib.unknown.fix", lib=name),
                   "https://man7.org/linux/man-pages/man8/ld.so.8.html", LOW, code=name,
                   commands=[cmd("find", "/", "-xdev", "-name", name + "*", label=T("explain.lib.unknown.find")),
                             cmd("apt-file", "search", name, label=T("explain.lib.unknown.apt")),
                             cmd("dnf", "provides", "*/" + name + "*", label=T("explain.lib.unknown.dnf"))])


# ---------------------------------------------------------------------------------------------
# undefined symbol: S in a library of P -> P was built against another version of S's owner


def _undefined_symbol(hit: Hit, tables: Tables) -> Optional[Answer]:
    symbol = hit.groups.get("sym", "")
    path = hit.groups.get("lib") or ""
    name = qualified_name(symbol) or symbol
    needer = tables.by_path(path) if path else None
    provider = tables.by_symbol(name)
    if needer is not None and provider is not None and needer.id == provider.id:
        provider = None  # a component missing its own symbol: a broken or mixed install
    src = "https://itanium-cxx-abi.github.io/cxx-abi/abi.html#mangling"
    params = dict(symbol=name, library=path or "?")
    if needer and provider:
        layer = _lower_layer(needer.layer, provider.layer)
        finding = provider.finding or needer.finding
        cause = T("explain.abi.pair.cause", needer=needer.name, provider=provider.name, **params)
        fix = T("explain.abi.pair.fix", needer=needer.name, provider=provider.name)
        confidence = MEDIUM
    elif needer or provider:
        known = needer or provider
        assert known is not None
        layer, finding = known.layer, known.finding
        key = "needer" if needer else "provider"
        cause = T(f"explain.abi.{key}.cause", component=known.name, **params)
        fix = T(f"explain.abi.{key}.fix", component=known.name)
        confidence = LOW
    else:
        layer, finding, confidence = "env", None, LOW
        cause = T("explain.abi.unknown.cause", **params)
        fix = T("explain.abi.unknown.fix")
    aid = f"abi.{needer.id if needer else 'unknown'}.{provider.id if provider else 'unknown'}"
    return _answer(hit, aid, layer, cause, fix, src, confidence, finding=finding, code=name)


# ---------------------------------------------------------------------------------------------
# vllm / vllm-ascend API drift


def _vllm_api(hit: Hit, tables: Tables) -> Optional[Answer]:
    module, attr = hit.groups.get("mod", ""), hit.groups.get("attr", "?")
    src = "https://docs.vllm.ai/projects/ascend/en/latest/community/versioning_policy.html"
    if module == "vllm" and attr.startswith("__"):
        # `import vllm` found a directory without __init__ data: a source tree shadows the install
        return _answer(hit, "env.vllm_namespace_shadow", "env", T("explain.vllm_shadow.cause", what=attr),
                       T("explain.vllm_shadow.fix"), "https://github.com/vllm-project/vllm-ascend/issues/725",
                       MEDIUM, finding="env.cwd_shadow")
    what = f"{module}.{attr}" if module else attr
    return _answer(hit, "vllm.api_drift", "vllm", T("explain.vllm_api.cause", what=what),
                   T("explain.vllm_api.fix"), src, MEDIUM, finding="vllm.version")


def _vllm_patch_attr(hit: Hit, tables: Tables) -> Optional[Answer]:
    """An AttributeError raised with vllm_ascend frames above it: vllm-ascend patches vllm's
    internals, so a missing attribute there is most often a vllm / vllm-ascend mismatch."""
    return _answer(hit, "vllm.api_drift_in_plugin", "vllm", T("explain.vllm_api.cause", what=hit.groups.get("what", "?")),
                   T("explain.vllm_api.fix"),
                   "https://docs.vllm.ai/projects/ascend/en/latest/community/versioning_policy.html", LOW,
                   finding="vllm.version")


def _vllm_ascend_import(hit: Hit, tables: Tables) -> Optional[Answer]:
    what = hit.groups.get("name") or hit.groups.get("module") or "?"
    if hit.groups.get("amod"):  # a submodule of this release lacks what the caller uses (vllm-omni, verl...)
        what = f"{hit.groups['amod']}.{hit.groups.get('attr', '?')}"
    return _answer(hit, "vllm_ascend.api_drift", "vllm_ascend", T("explain.vllm_ascend_api.cause", what=what),
                   T("explain.vllm_ascend_api.fix"),
                   "https://docs.vllm.ai/projects/ascend/en/latest/community/versioning_policy.html",
                   MEDIUM, finding="vllm_ascend.installed")


# ---------------------------------------------------------------------------------------------
# out of memory


_SIZE_UNITS = {"B": 0, "KiB": 1, "MiB": 2, "GiB": 3, "TiB": 4, "PiB": 5, "EiB": 6, "EB": 6}


def _npu_oom(hit: Hit, tables: Tables) -> Optional[Answer]:
    size = hit.groups.get("size") or ""
    unit = size.split()[-1] if size else ""
    if _SIZE_UNITS.get(unit, 0) >= 4 or "EB" in hit.text:  # terabytes on one NPU: a corrupted size
        return _answer(hit, "oom.npu_absurd_size", "vllm_ascend", T("explain.oom.absurd.cause", size=size or "1EB"),
                       T("explain.oom.absurd.fix"),
                       "https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/torch_npu/csrc/core/npu/NPUCachingAllocator.cpp",
                       MEDIUM)
    return _answer(hit, "oom.npu", "vllm_ascend", T("explain.oom.npu.cause", size=size or "?"),
                   T("explain.oom.npu.fix"),
                   "https://docs.vllm.ai/projects/ascend/en/latest/faqs.html", HIGH,
                   commands=[cmd("npu-smi", "info", label=T("explain.oom.npu.smi"))])


def _host_oom(hit: Hit, tables: Tables) -> Optional[Answer]:
    return _answer(hit, "oom.host", "env", T("explain.oom.host.cause"), T("explain.oom.host.fix"),
                   "https://man7.org/linux/man-pages/man5/proc.5.html", MEDIUM,
                   commands=[cmd("dmesg", "-T", label=T("explain.oom.host.dmesg")),
                             cmd("free", "-g", label=T("explain.oom.host.free"))])


# ---------------------------------------------------------------------------------------------
# HCCL waits that time out: a symptom of another rank


def _hccl_timeout(hit: Hit, tables: Tables) -> Optional[Answer]:
    return _answer(hit, "hccl.timeout", "cann", T("explain.hccl_timeout.cause"), T("explain.hccl_timeout.fix"),
                   "https://github.com/hicann/hccl/blob/09300b70df9a031339f08e5f2ca06d7bf294d009/docs/zh/user_guide/fault_diagnosis/debug_thinking.md",
                   MEDIUM, victim=True)


# ---------------------------------------------------------------------------------------------
# hardware the build does not support


def _soc(hit: Hit, tables: Tables) -> Optional[Answer]:
    have = hit.groups.get("have") or hit.groups.get("soc") or "?"
    built = hit.groups.get("built")
    key = "explain.soc.built" if built else "explain.soc.cause"
    return _answer(hit, "devices.soc_mismatch", "devices", T(key, soc=have, built=built or "?"),
                   T("explain.soc.fix"),
                   "https://docs.vllm.ai/projects/ascend/en/latest/installation.html", MEDIUM,
                   finding="devices.hardware_support", commands=[cmd("npu-smi", "info", "-m")])


# ---------------------------------------------------------------------------------------------
# Python and C library gates


def _python_gate(hit: Hit, tables: Tables) -> Optional[Answer]:
    have = hit.groups.get("have") or "?"
    want = (hit.groups.get("want") or hit.groups.get("want2") or "?").strip()
    return _answer(hit, "python.requires_python", "python", T("explain.python_gate.cause", have=have, want=want),
                   T("explain.python_gate.fix"),
                   "https://packaging.python.org/en/latest/specifications/core-metadata/#requires-python",
                   MEDIUM, finding="python.version")


def _glibc(hit: Hit, tables: Tables) -> Optional[Answer]:
    which = hit.groups.get("which", "GLIBC")
    version = hit.groups.get("v", "?")
    owner = hit.groups.get("owner") or "?"
    if which == "GLIBCXX":
        return _answer(hit, "env.glibcxx_too_old", "env", T("explain.glibcxx.cause", version=version, owner=owner),
                       T("explain.glibcxx.fix"),
                       "https://gcc.gnu.org/onlinedocs/libstdc++/manual/abi.html", MEDIUM)
    return _answer(hit, "python.glibc_too_old", "python", T("explain.glibc.cause", version=version, owner=owner),
                   T("explain.glibc.fix"), "https://peps.python.org/pep-0600/", MEDIUM, finding="python.glibc",
                   commands=[cmd("ldd", "--version")])


# ---------------------------------------------------------------------------------------------
# numpy / transformers API removals


def _numpy_attr(hit: Hit, tables: Tables) -> Optional[Answer]:
    attr = hit.groups.get("attr", "?")
    return _answer(hit, "vllm_ascend.numpy_api", "vllm_ascend", T("explain.numpy_api.cause", attr=attr),
                   T("explain.numpy_api.fix", attr=attr), "https://numpy.org/doc/stable/release/1.24.0-notes.html", MEDIUM,
                   finding="vllm_ascend.numpy")


def _transformers_import(hit: Hit, tables: Tables) -> Optional[Answer]:
    name = hit.groups.get("name", "?")
    return _answer(hit, "vllm_ascend.transformers_api", "vllm_ascend", T("explain.transformers_api.cause", name=name),
                   T("explain.transformers_api.fix"),
                   "https://docs.vllm.ai/projects/ascend/en/latest/community/versioning_policy.html", MEDIUM,
                   finding="vllm_ascend.transformers")


CLASSIFIERS: Tuple[Classifier, ...] = (
    Classifier(
        "classifier.missing_library",
        # the name starts where its run of name characters starts (the lookbehind): the same
        # match as without it, tried once per run instead of at every character of a long run
        r"(?<![\w.+/-])(?P<lib>[\w.+/-]*\.so(?:\.[\d.]+)?): cannot open shared object file",
        _missing_library,
        example="ImportError: libatb.so: cannot open shared object file: No such file or directory",
        example_source="https://github.com/vllm-project/vllm-ascend/issues/152",
        near_miss=("FileNotFoundError: [Errno 2] No such file or directory: '/data/models/config.json'",
                   "INFO 06-16 02:47:10 loading libatb.so from /usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1/lib"),
        key="lib",
    ),
    Classifier(
        "classifier.undefined_symbol",
        # The plain form, (?:(?P<lib>/[^\s:'"]+\.so[\w.]*)|[\w.+-]+\.so[\w.]*)?: undefined symbol: ...,
        # backtracks over every '/' and character of a long run and, inside it, over every ".so"
        # (34 s of CPU on "/" + ".so" * 20000). Here each alternative is tried where its run of path
        # (or name) characters starts (the lookbehinds), and read without backtracking: what
        # precedes ':' is that whole run (after its first '/'), made of P, up to its last
        # character outside [\w.] (none: P is empty), then S, all [\w.] (taken whole: the
        # lookahead-and-backreference pairs are atomic groups), and the plain form matches
        # exactly when S holds a ".so" with at least one character between it and the '/' (or
        # the run's start): when P is not empty, or else when S has one past its first character.
        r"(?:(?<![^\s:'\"])[^\s:'\"/]*(?P<lib>/(?:(?=([^\s:'\"]*[^\w.\s:'\"]))\2(?=[\w.]*?\.so)|(?=[\w.]+?\.so))"
        r"(?=([\w.]*))\3)"
        r"|(?<![\w.+-])(?:(?=([\w.+-]*[+-]))\4(?=[\w.]*?\.so)|(?=[\w.]+?\.so))(?=([\w.]*))\5)?"
        r": undefined symbol: (?P<sym>[\w$.@]+)",
        _undefined_symbol,
        example="ImportError: /usr/local/python3.10.14/lib/python3.10/site-packages/torch_npu/lib/libtorch_npu.so: "
                "undefined symbol: _ZN3atb15CreateOperationINS_5infer14GroupTopkParamEEEiRKT_PPNS_9OperationE",
        example_source="https://github.com/vllm-project/vllm-ascend/issues/117",
        near_miss=("hccl_transport_mem_c.h:39:10: fatal error: transport_mem.h: No such file or directory",
                   "WARNING symbol table of libtorch_npu.so has 12045 entries"),
        key="sym",
    ),
    Classifier(
        "classifier.vllm_api",
        r"module '(?P<mod>vllm(?:\.\w+)*)' has no attribute '(?P<attr>\w+)'",
        _vllm_api,
        example="AttributeError: module 'vllm' has no attribute '__version__'",
        example_source="https://github.com/vllm-project/vllm-ascend/issues/718",
        near_miss=("AttributeError: module 'vllm_ascend' has no attribute 'register'",
                   "AttributeError: module 'triton.language' has no attribute 'constexpr_function'"),
        key="attr",
    ),
    Classifier(
        "classifier.vllm_ascend_attr",
        r"AttributeError: (?P<what>(?:type object )?'?[\w.]+'? (?:object )?has no attribute '\w+')",
        _vllm_patch_attr,
        # the frame line comes from the traceback, the error line from its title
        example='  File "/vllm-workspace/vllm-ascend/vllm_ascend/__init__.py", line 34, in _ensure_global_patch\n'
                "AttributeError: type object 'Glm47MoeModelToolParser' has no attribute '_extract_tool_call_regions'.",
        example_source="https://github.com/vllm-project/vllm-ascend/issues/11488",
        near_miss=('  File "/opt/conda/lib/python3.11/site-packages/transformers/modeling_utils.py", line 10, in f\n'
                   "AttributeError: 'NoneType' object has no attribute 'shape'",),
        context=r'File "[^"]*/vllm_ascend/',
        lookback=12,
        key="what",
    ),
    Classifier(
        "classifier.vllm_ascend_import",
        r"(?:cannot import name '(?P<name>\w+)' from 'vllm_ascend(?:\.[\w.]+)?'(?! \(unknown location\))|"
        r"No module named '(?P<module>vllm_ascend\.[\w.]+)'|"
        r"module '(?P<amod>vllm_ascend\.[\w.]+)' has no attribute '(?P<attr>\w+)')",
        _vllm_ascend_import,
        example="ModuleNotFoundError: No module named 'vllm_ascend.distributed'",
        example_source="https://github.com/modelscope/ms-swift/issues/4886",
        near_miss=("ImportError: cannot import name 'register' from 'vllm_ascend' (unknown location)",
                   "AttributeError: module 'vllm_ascend' has no attribute 'register'"),
        key="name",
    ),
    Classifier(
        "classifier.npu_oom",
        r"NPU out of memory\. Tried to allocate (?P<size>(?:more than )?[\d.]+ ?[KMGTPE]i?B)",
        _npu_oom,
        example="RuntimeError: NPU out of memory. Tried to allocate 3.47 GiB (NPU 0; 60.97 GiB total capacity; "
                "58.92 GiB already allocated; 58.92 GiB current active; 1.66 GiB free; 58.95 GiB reserved in total by PyTorch)",
        example_source="https://github.com/vllm-project/vllm-ascend/issues/1987",
        near_miss=("INFO 03-06 01:16:37 worker.py:203] NPU memory usage 58.92 GiB of 60.97 GiB",),
    ),
    Classifier(
        "classifier.host_oom",
        r"(?:^\s*Killed\s*$|exited with code 137\b|Out of memory: Killed process|\bstd::bad_alloc\b|^\s*MemoryError\b)",
        _host_oom,
        example="Inference server exited with code 137",
        example_source="https://github.com/gpustack/gpustack/issues/2021",
        near_miss=("INFO:     Killed 3 idle connections", "Inference server exited with code 1"),
    ),
    Classifier(
        "classifier.hccl_timeout",
        r"\[ERROR\](?: HCCL|HCCL)\(\d+,[^)]*\):.*\b(?:timeout|time out|timed out)\b",
        _hccl_timeout,
        example="[ERROR] HCCL(17528,python3):2026-03-18-10:33:52.113.403 [hccl_socket_manager.cc:797] [18744]"
                "[Wait][LinkEstablish]wait socket establish timeout, role[1] rank[1] timeout[120 s]",
        example_source="https://github.com/hicann/hccl/blob/09300b70df9a031339f08e5f2ca06d7bf294d009/docs/zh/user_guide/fault_diagnosis/param_link_stage.md",
        near_miss=("[INFO] HCCL(1595259,alltoall_test):2026-01-06-15:38:29.881.877 [externalinput.cc:598] "
                   "[1595259][HCCL_ENV] HCCL_CONNECT_TIMEOUT set by default to [120]s",),
        ignore_case=False,
    ),
    Classifier(
        "classifier.soc",
        r"(?:(?:Unsupported|Can not support|not support(?:ed)?)\W+soc[_ ]?version\W+(?P<soc>[\w.]+)|"
        r"the socversion (?P<built>\w+) of bin package does not match the current device socverison (?P<have>\w+))",
        _soc,
        example="..[ERROR] the socversion Ascend910B1 of bin package does not match the current device socverison "
                "Ascend310P3. Please modify default socversion in run.sh or execute run.sh with socversion parameter.",
        example_source="https://github.com/vllm-project/vllm-ascend/issues/2725",
        near_miss=("INFO 09-01 08:01:59 [platform.py:120] soc_version: Ascend910B1",),
        ignore_case=True,
    ),
    Classifier(
        "classifier.python_gate",
        r"(?:requires a different Python: (?P<have>[\d.]+) not in '(?P<want>[^']+)'|"
        r"Ignored the following versions that require a different python version: [^;]*Requires-Python (?P<want2>[^;]+))",
        _python_gate,
        example="  ERROR: Ignored the following versions that require a different python version: 0.52.0 "
                "Requires-Python >=3.6,<3.9; 0.52.0rc3 Requires-Python >=3.6,<3.9",
        example_source="https://github.com/vllm-project/vllm-ascend/issues/9794",
        near_miss=("Requirement already satisfied: python-json-logger in /usr/local/lib/python3.11/site-packages (4.0.0)",),
    ),
    Classifier(
        "classifier.glibc",
        r"version `(?P<which>GLIBC|GLIBCXX)_(?P<v>[\d.]+)' not found(?: \(required by (?P<owner>[^)]+)\))?",
        _glibc,
        example="WARNING:root:Failed to import 'vllm_ascend.vllm_ascend_C': /lib/aarch64-linux-gnu/libc.so.6: "
                "version `GLIBC_2.32' not found (required by /vllm-ascend-env/lib/python3.11/site-packages/vllm_ascend/"
                "vllm_ascend_C.cpython-311-aarch64-linux-gnu.so). All custom ops will be disabled. ",
        example_source="https://github.com/vllm-project/vllm-ascend/issues/1249",
        near_miss=("Libc version: glibc-2.35",),
    ),
    Classifier(
        "classifier.numpy_api",
        r"module 'numpy' has no attribute '(?P<attr>\w+)'",
        _numpy_attr,
        example="AttributeError: module 'numpy' has no attribute 'float'.",
        example_source="https://github.com/thuml/Transfer-Learning-Library/issues/253",
        near_miss=("AttributeError: module 'numpy.typing' has no attribute 'NDArray'",),
        key="attr",
    ),
    Classifier(
        "classifier.transformers_import",
        r"cannot import name '(?P<name>\w+)' from 'transformers(?:\.[\w.]+)?'(?! \(unknown location\))",
        _transformers_import,
        example="ImportError: cannot import name 'DeepseekV2Config' from 'transformers' "
                "(/home/sss/miniconda3/envs/vllm/lib/python3.10/site-packages/transformers/__init__.py)",
        example_source="https://github.com/vllm-project/vllm-ascend/pull/2365",
        near_miss=("ImportError: cannot import name 'notf' from 'tensorboard.compat'",),
        key="name",
    ),
)


def by_id() -> Dict[str, Classifier]:
    return {c.id: c for c in CLASSIFIERS}


def unknown_ids(answers: Sequence[Answer]) -> List[str]:
    return [a.id for a in answers if a.id.startswith("library.unknown.")]
