"""Check every [[tuning_var]] read_by window of matrices/tuning.toml against vllm-ascend's code.

A variable is READ by a release when a .py file under vllm_ascend/ other than vllm_ascend/envs.py
(its definition) names it in code: as a Python name (``envs.NAME`` / ``envs_ascend.NAME``, an import)
or as a string literal that is exactly the name (``os.getenv("NAME")``, ``os.environ["NAME"]``,
``_get_config_value(..., "NAME", ...)``). Comments, docstrings and longer strings (log messages) that
contain the name do not count; they are listed as mentions. Files under a tests/ folder do not count.
This is the fourth sample's rule (docs/facts-audit.md): "named outside envs.py at every tag of its
window and at none outside it". A hit in a module that no other module names (possibly never
imported) still counts, and is flagged ``orphan?`` for a human to look at.

Releases are the rows of matrices/vllm-ascend.toml in PEP 440 order: the git tags of the local mirror
(/work/.mirror/vllm-project+vllm-ascend/repo, bare) where a tag v<version> exists, else an unpacked sdist
(vllm_ascend-<version>/ next to vllm_ascend-<version>.tar.gz in /tmp/sdists, /tmp/sd, /tmp or
~/.cache, unpacked on the fly when only the tarball is there). Only local data is read.

    python bench/tuning_windows.py            # every variable; DISAGREE where the windows differ
    python bench/tuning_windows.py -v         # also the files named at each release
    python bench/tuning_windows.py NAME ...   # only these variables
    python bench/tuning_windows.py --quant [-v] [SCHEME ...]   # the [[tuning_quant]] windows instead
    python bench/tuning_windows.py --facts [-v] [ID ...]       # the mechanical [[tuning_fact]] windows

--quant: a release ACCEPTS a [[tuning_quant]] scheme when a .py file in a quantization/ folder under
vllm_ascend/ (vllm_ascend/quantization/, vllm_ascend/_310p/quantization/, vllm_ascend/torchair/quantization/,
...; not under a tests/ folder) has a string literal that is exactly the scheme in one of these places:

  register  an argument of ``register_scheme(...)`` (the ``@register_scheme("W8A8", "linear")`` registry,
            0.15 on);
  key       a dict display's key, ``"W8A8": W8A8Quantizer`` or ``"W8A8": {"linear": ...}`` (the
            SUPPORT_ASCEND_QUANTIZER_TYPE / ASCEND_QUANTIZATION_METHOD_MAP registries of 0.8 to 0.14);
  compare   an operand of ``==`` / ``!=``, a ``case`` pattern, or an element of the tuple, list or set after
            ``in`` / ``not in`` (``quant_description.get("kv_cache_type") == "C8"``, ``quant_type in
            ("W8A8", ...)``).

Not counted: other strings (``return "W8A8"`` in compressed_tensors_config.py maps another format's
schemes onto these names, ``get_scheme_class("W8A8_DYNAMIC", ...)`` looks a scheme up, assignments,
error messages, docstrings), comments, files outside a quantization/ folder (ascend_config.py's
VALID_QUANT_TYPES validates an additional_config option, torchair/utils.py only overrides existing
ASCEND_QUANTIZATION_METHOD_MAP entries, compilation/passes/ lists schemes it fuses), and
quantization/quant_parser.py (QuantTypeMapping: dtypes keyed by the MoE down_proj rollback type of an
MXFP checkpoint, not a registry of checkpoint schemes). A scheme registered through a constant is
not resolved: the only such registration, ``register_scheme(FP8_METHOD, ...)`` (0.23.0.post1 on),
registers "fp8" (``FP8_METHOD = "fp8"`` in vllm_ascend/utils.py), which is no row's scheme. Before
0.8.4rc2 quantizer.py hands every scheme to the external mindie_turbo package, so no release there
accepts a scheme by this rule. ``-v`` lists every hit with its kind.

--facts: a [[tuning_fact]] holds at a release when a .py file under vllm_ascend/ (not under tests/;
only the file named in FACT_PROBES when one is) matches the fact's regular expression in FACT_PROBES: the
error or log message the fact quotes, or the default or constant it states. Facts about docs, other
projects or the host are not mechanical and have no probe.
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import tarfile
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.9/3.10
    import tomli as tomllib

from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
MATRICES = ROOT / "matrices"
MIRROR = Path("/work/.mirror/vllm-project+vllm-ascend/repo")
SDIST_DIRS = [Path("/tmp/sdists"), Path("/tmp/sd"), Path("/tmp"), Path.home() / ".cache"]
DEFINITION = "vllm_ascend/envs.py"
# names vllm-ascend code reads without the VLLM_ASCEND_ prefix are found by this pattern
ENV_READ = re.compile(r"""os\.(?:getenv|environ(?:\.get)?)\s*[\(\[]\s*['"]([A-Z][A-Z0-9_]+)['"]""")


@dataclass
class Hit:
    path: str
    kind: str  # "code" (a Python name), "key" (a string that is the name), "set" (os.environ["NAME"] = ...),
    # "mention" (a longer string: docstring, log message), "comment"
    line: int
    text: str


@dataclass
class Release:
    version: str
    tag: str | None = None
    sdist: Path | None = None
    files: dict[str, str] = field(default_factory=dict)  # path -> text, only files naming some variable
    stems: set[str] = field(default_factory=set)  # module stems named by some file (for orphan?)

    @property
    def where(self) -> str:
        return self.tag or f"sdist {self.sdist}"


def git(*args: str) -> str:
    out = subprocess.run(["git", f"--git-dir={MIRROR}", *args], capture_output=True, text=True)
    if out.returncode not in (0, 1):  # git grep: 1 is "no match"
        raise SystemExit(f"git {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def releases() -> list[Release]:
    doc = tomllib.loads((MATRICES / "vllm-ascend.toml").read_text(encoding="utf-8"))
    versions = sorted({r["vllm_ascend"] for r in doc["release"]}, key=Version)
    tags = set(git("tag").split())
    out = []
    for v in versions:
        rel = Release(v)
        if f"v{v}" in tags:
            rel.tag = f"v{v}"
        else:
            rel.sdist = find_sdist(v)
        out.append(rel)
    return out


def find_sdist(version: str) -> Path | None:
    for d in SDIST_DIRS:
        tree = d / f"vllm_ascend-{version}"
        if (tree / "vllm_ascend").is_dir():
            return tree
    for d in SDIST_DIRS:
        tar = d / f"vllm_ascend-{version}.tar.gz"
        if tar.is_file():
            with tarfile.open(tar) as t:
                t.extractall(d, filter="data")
            return d / f"vllm_ascend-{version}"
    return None


def load(rel: Release, names: list[str]) -> None:
    """The text of every vllm_ascend/ .py file naming one of the names, and the module stems named."""
    if rel.tag:
        args = ["grep", "-l", "-w", "-F"] + [a for n in names for a in ("-e", n)]
        listed = git(*args, rel.tag, "--", "vllm_ascend/*.py").split()
        paths = [p.split(":", 1)[1] for p in listed]
        for p in paths:
            rel.files[p] = git("show", f"{rel.tag}:{p}")
        tree = git("ls-tree", "-r", "--name-only", rel.tag, "--", "vllm_ascend/").split()
        all_py = [p for p in tree if p.endswith(".py")]
        text_of = None
    else:
        if rel.sdist is None:
            return
        all_py = sorted(str(p.relative_to(rel.sdist)) for p in (rel.sdist / "vllm_ascend").rglob("*.py"))
        texts = {p: (rel.sdist / p).read_text(encoding="utf-8", errors="replace") for p in all_py}
        pat = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")
        rel.files = {p: t for p, t in texts.items() if pat.search(t)}
        text_of = texts
    rel.stems = set()
    if text_of is None:  # one git grep for the stems of the files with hits
        for p in rel.files:
            stem = Path(p).stem
            named = git("grep", "-l", "-w", "-F", "-e", stem, rel.tag, "--", "vllm_ascend/*.py").split()
            if any(q.split(":", 1)[1] != p for q in named):
                rel.stems.add(stem)
    else:
        for p in rel.files:
            stem = Path(p).stem
            pat = re.compile(rf"\b{re.escape(stem)}\b")
            if sum(1 for q, t in text_of.items() if q != p and pat.search(t)) >= 1:
                rel.stems.add(stem)


def classify(path: str, text: str, name: str) -> list[Hit]:
    hits: list[Hit] = []
    lines = text.splitlines()
    word = re.compile(rf"\b{re.escape(name)}\b")
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return [Hit(path, "code", i + 1, ln.strip()) for i, ln in enumerate(lines) if word.search(ln)]
    for i, tok in enumerate(toks):
        if not word.search(tok.string):
            continue
        src = lines[tok.start[0] - 1].strip() if tok.start[0] <= len(lines) else ""
        if tok.type == tokenize.NAME:
            kind = "code"
        elif tok.type == tokenize.COMMENT:
            kind = "comment"
        elif tok.type == tokenize.STRING:
            prefix = re.match(r"^[rRbBuUfF]*", tok.string).group(0)
            body = tok.string[len(prefix):].strip("'\"")
            nxt = [t.string for t in toks[i + 1:i + 3]]
            if body == name:  # os.environ["NAME"] = ... sets it, it does not read it
                kind = "set" if nxt == ["]", "="] else "key"
            elif "f" in prefix.lower() and any(word.search(e) for e in re.findall(r"\{([^{}]*)\}", body)):
                kind = "code"  # f"...{envs.NAME}..." (one STRING token before Python 3.12)
            else:
                kind = "mention"
        else:  # FSTRING_MIDDLE and the like (3.12+)
            kind = "mention"
        hits.append(Hit(path, kind, tok.start[0], src[:140]))
    return hits


# disagreements looked at by hand (docs/facts-audit.md, "Tuning windows, every variable"): still printed
REVIEWED = {
    "VLLM_ASCEND_MLA": "not a variable: the string is the name AscendMLABackend.get_name() returns",
    "VLLM_ASCEND_ENABLE_BATCH_MEMCPY": "a build-time switch: setup.py passes it to CMake; no module reads it at run time",
}


def counted(h: Hit) -> bool:
    return h.kind in ("code", "key") and h.path != DEFINITION and "/tests/" not in f"/{h.path}"


def windows(ordered: list[str], members: set[str]) -> list[str]:
    """The smallest list of specifier windows over the ordered releases that holds exactly members."""
    out, start = [], None
    for v in ordered + [None]:
        if v is not None and v in members:
            start = v if start is None else start
        elif start is not None:
            out.append(f">={start}" if v is None else f">={start},<{v}")
            start = None
    return out


def compare(name: str, stated: list[str], ordered: list[str], computed: set[str], seen: str,
            reviewed: str = "") -> bool:
    """Prints a row's stated releases beside the computed ones (and the releases in one and not
    the other); True when they are the same set."""
    same = members(ordered, stated) == computed
    verdict = "agree" if same else "DISAGREE" + (f" (reviewed: {reviewed})" if reviewed else "")
    print(f"\n{name}: {verdict}")
    print(f"  releases {stated}")
    print(f"  computed {windows(ordered, computed)}")
    if not same:
        print_difference(ordered, stated, computed, seen, "releases")
    return same


def print_difference(ordered: list[str], stated: list[str], computed: set[str], seen: str, field: str) -> None:
    """The releases in the computed set and not the stated windows, and the other way round."""
    extra = [v for v in ordered if v in computed and v not in members(ordered, stated)]
    lack = [v for v in ordered if v not in computed and v in members(ordered, stated)]
    if extra:
        print(f"  {seen} but outside {field}: {' '.join(extra)}")
    if lack:
        print(f"  in {field} but not {seen}:  {' '.join(lack)}")



def members(ordered: list[str], specs: list[str]) -> set[str]:
    sets = [SpecifierSet(s) for s in specs]
    return {v for v in ordered if any(s.contains(Version(v), prereleases=True) for s in sets)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--quant", action="store_true", help="check the [[tuning_quant]] windows instead")
    ap.add_argument("--facts", action="store_true", help="check the mechanical [[tuning_fact]] windows instead")
    args = ap.parse_args()
    if args.quant:
        return quant_main(args.names, args.verbose)
    if args.facts:
        return facts_main(args.names, args.verbose)

    tuning = tomllib.loads((MATRICES / "tuning.toml").read_text(encoding="utf-8"))
    rows = {r["name"]: r for r in tuning["tuning_var"]}
    rels = releases()
    missing = [r.version for r in rels if r.tag is None and r.sdist is None]
    if missing:
        print(f"no tag or sdist for: {', '.join(missing)} (pip download --no-deps --no-binary :all: "
              f"vllm-ascend==V -d /tmp/sdists); they count as not reading anything", file=sys.stderr)
    names = sorted(rows)
    for rel in rels:
        load(rel, names)
    # which other names (no VLLM_ASCEND_ prefix) does vllm-ascend's code read through os.getenv / os.environ?
    env_read: dict[str, set[str]] = {}
    for rel in rels:
        for t in rel.files.values():
            for m in ENV_READ.finditer(t):
                env_read.setdefault(m.group(1), set()).add(rel.version)
    chosen = args.names or [n for n in names if n.startswith("VLLM_ASCEND_") or n in env_read
                            or "read_by" in rows[n]]
    # rows without read_by (torch_npu / CANN variables) are shown when vllm-ascend's code reads them
    ordered = [r.version for r in rels]
    print(f"releases ({len(ordered)}): " + " ".join(f"{r.version}" + ("" if r.tag else "[sdist]") for r in rels))
    agree = disagree = 0
    for name in chosen:
        row = rows.get(name)
        if row is None:
            print(f"\n{name}: no [[tuning_var]] row")
            continue
        read: set[str] = set()
        per_rel: dict[str, list[Hit]] = {}
        orphans: dict[str, list[str]] = {}
        for rel in rels:
            hits = [h for p, t in rel.files.items() if re.search(rf"\b{re.escape(name)}\b", t)
                    for h in classify(p, t, name)]
            per_rel[rel.version] = hits
            good = [h for h in hits if counted(h)]
            if good:
                read.add(rel.version)
                lonely = sorted({h.path for h in good if Path(h.path).stem not in rel.stems})
                if lonely and len(lonely) == len({h.path for h in good}):
                    orphans[rel.version] = lonely
        computed = windows(ordered, read)
        has = "read_by" in row
        stated = list(row.get("read_by", []))
        same = has and members(ordered, stated) == read
        verdict = "agree" if same else ("DISAGREE" if has else "no read_by field (shown for information)")
        if has and not same and name in REVIEWED:
            verdict += f" (reviewed: {REVIEWED[name]})"
        if has:
            agree, disagree = agree + same, disagree + (not same)
        print(f"\n{name}: {verdict}")
        print(f"  read_by  {stated if has else '-'}")
        print(f"  computed {computed}")
        if has and not same:
            print_difference(ordered, stated, read, "read", "read_by")
        for v, paths in orphans.items():
            print(f"  orphan? {v}: only in {', '.join(paths)} (no other module names it)")
        if args.verbose or (has and not same):
            for rel in rels:
                hits = per_rel[rel.version]
                if not hits:
                    continue
                shown = sorted({(h.path, h.kind) for h in hits if h.path != DEFINITION})
                if not shown and not args.verbose:
                    continue
                desc = "; ".join(f"{p} [{k}]" for p, k in shown) or "envs.py only"
                print(f"    {rel.version:>13}: {desc}")
    print(f"\n{agree + disagree} variables with read_by checked: {agree} agree, {disagree} DISAGREE")
    return 0


# ---------------------------------------------------------------------------------------------
# --quant: the [[tuning_quant]] windows

QUANT_COUNTED = ("register", "key", "compare")
QUANT_SKIP = ("quantization/quant_parser.py",)
# disagreements looked at by hand (docs/facts-audit.md, "Tuning quant windows, every scheme"): still printed
QUANT_REVIEWED: dict[str, str] = {}


def quant_scope(path: str) -> bool:
    p = f"/{path}"
    return "/quantization/" in p and "/tests/" not in p and not path.endswith(QUANT_SKIP)


def quant_load(rel: Release, schemes: list[str]) -> None:
    """The text of every .py file in a quantization/ folder under vllm_ascend/ quoting a scheme."""
    rel.files = {}
    quoted = [f"{q}{n}{q}" for n in schemes for q in ('"', "'")]
    if rel.tag:
        args = ["grep", "-l", "-F"] + [a for n in quoted for a in ("-e", n)]
        paths = [p.split(":", 1)[1] for p in git(*args, rel.tag, "--", "vllm_ascend/*.py").split()]
        rel.files = {p: git("show", f"{rel.tag}:{p}") for p in paths if quant_scope(p)}
    elif rel.sdist is not None:
        for f in sorted((rel.sdist / "vllm_ascend").rglob("*.py")):
            p = str(f.relative_to(rel.sdist))
            if quant_scope(p):
                t = f.read_text(encoding="utf-8", errors="replace")
                if any(n in t for n in quoted):
                    rel.files[p] = t


def quant_classify(path: str, text: str, schemes: set[str]) -> list[tuple[str, Hit]]:
    """(scheme, hit) for every string literal that is exactly a scheme; kind as in the docstring."""
    try:
        toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)]
    except (tokenize.TokenError, SyntaxError):
        return []
    lines = text.splitlines()
    out = []
    for i, tok in enumerate(toks):
        if tok.type != tokenize.STRING:
            continue
        prefix = re.match(r"^[rRbBuU]*", tok.string).group(0)
        body = tok.string[len(prefix):]
        if len(body) < 2 or body[0] != body[-1] or body[:3] in ('"""', "\'\'\'"):
            continue
        body = body[1:-1]
        if body not in schemes:
            continue
        prev = toks[i - 1].string if i else ""
        nxt = toks[i + 1].string if i + 1 < len(toks) else ""
        kind = "other"
        # the call this string is an argument of: walk back to the unclosed "("
        depth, j = 0, i - 1
        while j >= 0:
            s = toks[j].string
            if s in (")", "]", "}"):
                depth += 1
            elif s in ("(", "[", "{"):
                if depth == 0:
                    break
                depth -= 1
            j -= 1
        opener = toks[j].string if j >= 0 else ""
        before = toks[j - 1].string if j >= 1 else ""
        if opener == "(" and before == "register_scheme":
            kind = "register"
        elif prev == "case":
            kind = "compare"
        elif prev in ("==", "!=") or nxt in ("==", "!="):
            kind = "compare"
        elif opener in ("(", "[", "{") and before == "in" and all(
                t.type == tokenize.STRING or t.string == "," for t in toks[j + 1:i]):
            kind = "compare"
        elif nxt == ":" and opener == "{":
            kind = "key"
        src = lines[tok.start[0] - 1].strip() if tok.start[0] <= len(lines) else ""
        out.append((body, Hit(path, kind, tok.start[0], src[:140])))
    return out


def quant_main(only: list[str], verbose: bool) -> int:
    tuning = tomllib.loads((MATRICES / "tuning.toml").read_text(encoding="utf-8"))
    rows = {r["scheme"]: r for r in tuning["tuning_quant"]}
    rels = releases()
    missing = [r.version for r in rels if r.tag is None and r.sdist is None]
    if missing:
        print(f"no tag or sdist for: {', '.join(missing)}; they count as accepting nothing", file=sys.stderr)
    schemes = sorted(rows)
    for rel in rels:
        quant_load(rel, schemes)
    ordered = [r.version for r in rels]
    print(f"releases ({len(ordered)}): " + " ".join(f"{r.version}" + ("" if r.tag else "[sdist]") for r in rels))
    hits: dict[str, dict[str, list[Hit]]] = {n: {} for n in schemes}
    for rel in rels:
        for p, t in rel.files.items():
            for name, h in quant_classify(p, t, set(schemes)):
                hits[name].setdefault(rel.version, []).append(h)
    agree = disagree = 0
    for name in only or schemes:
        row = rows.get(name)
        if row is None:
            print(f"\n{name}: no [[tuning_quant]] row")
            continue
        accepted = {v for v, hs in hits[name].items() if any(h.kind in QUANT_COUNTED for h in hs)}
        same = compare(name, list(row["releases"]), ordered, accepted, "accepted", QUANT_REVIEWED.get(name, ""))
        agree, disagree = agree + same, disagree + (not same)
        for rel in rels:
            hs = hits[name].get(rel.version, [])
            if not hs or not (verbose or not same):
                continue
            if verbose:
                for h in hs:
                    print(f"    {rel.version:>13}: {h.path}:{h.line} [{h.kind}] {h.text}")
            else:
                shown = sorted({(h.path, h.kind) for h in hs})
                print(f"    {rel.version:>13}: " + "; ".join(f"{p} [{k}]" for p, k in shown))
    print(f"\n{agree + disagree} schemes checked: {agree} agree, {disagree} DISAGREE")
    return 0


# ---------------------------------------------------------------------------------------------
# --facts: the [[tuning_fact]] windows whose claim is a string or a constant in vllm_ascend/

# id -> (file the probe is limited to or None, fixed string git grep looks for, regular expression)
FACT_PROBES: dict[str, tuple[str | None, str, str]] = {
    "v0_engine_rejected": (None, "does not support V0 engine", r"does not support V0 engine"),
    "launch_blocking_graph_rejected": (None, "ASCEND_LAUNCH_BLOCKING",
                                       r"ACL graph is incompatible with ASCEND_LAUNCH_BLOCKING"),
    "flashcomm1_needs_tp": (None, "only supported when tp_size > 1",
                            r"Flash Comm v1.{0,30}only supported when tp_size > 1"),
    # the assertion must read PYTORCH_NPU_ALLOC_CONF (the variable the rule tests): 0.7.3 to 0.9.0rc2 and the
    # v0.9.1 branch (0.9.1rc2 to 0.9.1) read PYTORCH_CUDA_ALLOC_CONF (fifteenth sample, #31)
    "sleep_mode_rejects_expandable": ("vllm_ascend/device_allocator/camem.py", "Expandable segments",
                                      r'os\.environ\.get\("PYTORCH_NPU_ALLOC_CONF", ""\)\s*'
                                      r'assert "expandable_segments:True" not in conf,\s*\\?\s*\(?\s*'
                                      r'"Expandable segments are not compatible with memory pool'),
    "alloc_conf_set_by_release": ("vllm_ascend/platform.py", "expandable_segments:True",
                                  r"expandable_segments:True"),
    "cpu_binding_default_on": ("vllm_ascend/ascend_config.py", "enable_cpu_binding",
                               r"""["']enable_cpu_binding["']\s*,\s*True|\benable_cpu_binding: bool = True"""),
    "cpu_binding_opt_in": ("vllm_ascend/ascend_config.py", "enable_cpu_binding",
                           r"""["']enable_cpu_binding["']\s*,\s*False|\benable_cpu_binding: bool = False"""),
    "cpu_binding_min_cpus.v0_15": (None, "at least 3 CPUs", r"Each NPU requires at least 3 CPUs"),
    "cpu_binding_min_cpus.v0_16": (None, "MIN_CPUS_PER_NPU", r"MIN_CPUS_PER_NPU\s*=\s*5\b"),
    "block_size_prefix_rejected": (None, "block size must be set to 128",
                                   r"raise ValueError\(\s*\"If prefix caching is enabled, block size must be set to 128"),
    "block_size_forced_prefix": (None, "block size must be set to 128",
                                 r"logger\.\w+\(\s*\"If prefix caching is enabled, block size must be set to 128"),
    "block_size_forced_any": (None, "block size must be set to 128",
                              r"If chunked prefill or prefix caching is enabled, block size must be set to 128"),
    "block_size_forced_chunked": (None, "Block size is set to 128",
                                  r"Block size is set to 128 if prefix cache or chunked prefill is enabled"),
    "quant_auto_detect": (None, "maybe_auto_detect_quantization", r"def maybe_auto_detect_quantization\("),
    # the message is split over several string literals
    "aiv_capture_warning": (None, "HCCL_OP_EXPANSION_MODE=AIV", r"limits the range of runtime \"\s*\"shapes"),
}


def facts_main(only: list[str], verbose: bool) -> int:
    tuning = tomllib.loads((MATRICES / "tuning.toml").read_text(encoding="utf-8"))
    rows = {r["id"]: r for r in tuning["tuning_fact"]}
    rels = releases()
    ordered = [r.version for r in rels]
    chosen = only or list(FACT_PROBES)
    print(f"releases ({len(ordered)}): " + " ".join(f"{r.version}" + ("" if r.tag else "[sdist]") for r in rels))
    agree = disagree = 0
    for fid in chosen:
        if fid not in FACT_PROBES or fid not in rows:
            print(f"\n{fid}: no probe or no [[tuning_fact]] row")
            continue
        where, fixed, rx = FACT_PROBES[fid]
        pat = re.compile(rx)
        held: dict[str, list[str]] = {}
        for rel in rels:
            if rel.tag:
                paths = [q.split(":", 1)[1] for q in git("grep", "-l", "-F", "-e", fixed, rel.tag, "--",
                                                          "vllm_ascend/*.py").split()]
                texts = {q: git("show", f"{rel.tag}:{q}") for q in paths
                         if "/tests/" not in f"/{q}" and (where is None or q == where)}
            elif rel.sdist is not None:
                texts = {}
                for f in (rel.sdist / "vllm_ascend").rglob("*.py"):
                    q = str(f.relative_to(rel.sdist))
                    if "/tests/" in f"/{q}" or (where is not None and q != where):
                        continue
                    t = f.read_text(encoding="utf-8", errors="replace")
                    if fixed in t:
                        texts[q] = t
            else:
                texts = {}
            found = sorted(q for q, t in texts.items() if pat.search(t))
            if found:
                held[rel.version] = found
        same = compare(fid, list(rows[fid]["releases"]), ordered, set(held), "found")
        agree, disagree = agree + same, disagree + (not same)
        if verbose or not same:
            for v in ordered:
                if v in held:
                    print(f"    {v:>13}: {', '.join(held[v])}")
    print(f"\n{agree + disagree} facts checked: {agree} agree, {disagree} DISAGREE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
