"""Everything explain knows, compiled once: signatures, code tables and classifiers as matchers
for the log scanner, and the interpretation of each hit as an answer."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, TypedDict

from doctor.explain.answers import CODE, CODE_CLASS, HIGH, LOW, MEDIUM, SIGNATURE, Answer, Bi
from doctor.explain.classifiers import CLASSIFIERS, Classifier, Tables
from doctor.i18n import T, Text, tr
from doctor.matrix.model import CodeClass, CodeForm, Matrix, Signature, VendorCode
from doctor.parse.logscan import Compiled, Hit, Matcher

# Version lines that tell which vLLM produced the log (for "the pair that fits").
FACT_VLLM = Matcher("fact:vllm_version",
                    r"(?:vLLM API server version |LLM engine \(v|vLLM version[:= ]+v?)(?P<version>\d+\.\d+\.\d+[\w.+]*)",
                    key="version", max_keys=4)


# Lines in which HCCL names the rank this one waits for or lost (see doctor.parse.logtime).
FACT_WAITED = Matcher("fact:waited",
                      r"(?P<w>from remote rank[: ]*\[\d+\]|Remote rank: \[\d+\]|crimer rank \[[\d.]+/\d+\]|"
                      r"Cluster Exception Location\[IP/ID\]:\[[\d.]+/\d+\]|remoteRank\[\d+\]|"
                      r"Failed to connect agent\[[\d,]+)", key="w", max_keys=256)


@dataclass
class Catalog:
    signatures: List[Signature]
    forms: List[CodeForm]
    codes: Dict[str, VendorCode]
    classes: List[CodeClass]
    classifiers: Sequence[Classifier]
    tables: Tables
    matchers: List[Matcher] = field(default_factory=list)
    # family:code -> the signatures keyed on it, in file order: the first whose `requires` and
    # `unless` fit the log explains the code (507033 with E30006 is another cause than with EL0004)
    by_code: Dict[str, List[Signature]] = field(default_factory=dict)
    # what users write instead of a log (doctor/explain/describe.py), read on short inputs only:
    # compiled when first read (~160 regexes, ~0.1 s), so a long log never pays for them
    description_rows: List[Any] = field(default_factory=list)
    _descriptions: Optional[List[Any]] = None
    _compiled: Optional[Compiled] = None
    # where the scanner keeps what it builds from the matchers between runs (doctor.shell.host.cache)
    cache: Any = None

    @property
    def descriptions(self) -> List[Any]:
        if self._descriptions is None:
            from doctor.explain.describe import compile_descriptions

            self._descriptions = compile_descriptions(self.description_rows, self.signatures)
        return self._descriptions

    @property
    def compiled(self) -> Compiled:
        """The matchers compiled for scanning (once per catalog)."""
        if self._compiled is None:
            self._compiled = Compiled(self.matchers, cache=self.cache)
        return self._compiled

    @classmethod
    def from_matrix(cls, matrix: Matrix, classifiers: Sequence[Classifier] = CLASSIFIERS) -> "Catalog":
        tables = Tables(libraries={lib.name: lib for lib in matrix.libraries}, components=list(matrix.components))
        cat = cls(signatures=list(matrix.signatures), forms=list(matrix.code_forms),
                  codes={c.key: c for c in matrix.codes}, classes=sorted(matrix.code_classes, key=lambda c: -len(c.prefix)),
                  classifiers=list(classifiers), tables=tables)
        cat.by_code = {}
        for sig in cat.signatures:
            for ref in sig.codes:
                family, _, code = ref.partition(":")
                cat.by_code.setdefault(f"{family}:{normalise_code(family, code)}", []).append(sig)
        cat.matchers = cat._matchers()
        cat.description_rows = list(matrix.descriptions)
        return cat

    def describe(self, text: str, log_answers: Sequence[Answer], file: Optional[str] = None) -> List[Answer]:
        """The description pass over ``text`` (empty past its bound on size): answers from a
        person's words, never on a line ``log_answers`` explain."""
        from doctor.explain.describe import describe, short_enough

        if not text.strip() or not short_enough(len(text.encode("utf-8", errors="replace")), text.count("\n") + 1):
            return []
        return describe(text, self.descriptions, log_answers, file=file)

    def explain_text(self, text: str) -> List[Answer]:
        """One short text (a paste) explained as the command does: the log scan's answers, chosen,
        then the description pass's (tests and the API use it)."""
        from doctor.explain.answers import select
        from doctor.parse.logscan import scan_text

        chosen = select(self.answers(scan_text(text, self.compiled)))
        return chosen + self.describe(text, chosen)

    # -- matchers --

    def _matchers(self) -> List[Matcher]:
        out: List[Matcher] = []
        for s in self.signatures:
            if s.pattern:
                out.append(Matcher(f"sig:{s.id}", s.pattern, s.ignore_case,
                                   lookback=s.lookback if s.context else 0, context=s.context))
            if s.unless:  # only whether they match counts
                out.append(Matcher(f"unless:{s.id}", s.unless, s.ignore_case, once=True))
            if s.requires:
                out.append(Matcher(f"requires:{s.id}", s.requires, s.ignore_case, once=True))
        for f in self.forms:
            out.append(Matcher(f"form:{f.id}", f.pattern, key="code"))
        for c in self.classifiers:
            out.append(Matcher(f"cls:{c.id}", c.pattern, c.ignore_case, key=c.key,
                               lookback=c.lookback, context=c.context))
        out.append(FACT_VLLM)
        out.append(FACT_WAITED)
        return out

    # -- interpretation --

    def answers(self, hits: Sequence[Hit]) -> List[Answer]:
        """Every hit interpreted; signatures' unless/requires applied over the whole log."""
        seen = {h.matcher for h in hits}
        by_id = {s.id: s for s in self.signatures}
        forms = {f.id: f for f in self.forms}
        classifiers = {c.id: c for c in self.classifiers}
        out: List[Answer] = []
        for hit in hits:
            kind, _, name = hit.matcher.partition(":")
            if kind == "sig":
                sig = by_id[name]
                if f"unless:{name}" in seen:
                    continue
                if sig.requires and f"requires:{name}" not in seen:
                    continue
                out.append(self._signature(sig, hit))
            elif kind == "form":
                form = forms[name]
                keyed = self.by_code.get(f"{form.family}:{normalise_code(form.family, hit.key)}")
                if keyed:  # a signature knows more about this code than the table
                    known = next((k for k in keyed if f"unless:{k.id}" not in seen
                                  and (not k.requires or f"requires:{k.id}" in seen)), None)
                    if known is not None:
                        out.append(self._signature(known, hit, code=normalise_code(form.family, hit.key)))
                        continue
                    # none of them fits this log: the table's generic meaning still applies
                answer = self._code(form, hit)
                if answer is not None:
                    out.append(answer)
            elif kind == "cls":
                answer = classifiers[name].build(hit, self.tables)
                if answer is not None:
                    out.append(answer)
        return out

    def _signature(self, sig: Signature, hit: Hit, code: Optional[str] = None) -> Answer:
        return Answer(id=sig.id, kind=SIGNATURE, layer=sig.layer, cause=Bi(sig.cause_en, sig.cause_zh), code=code,
                      fix=Bi(sig.fix_en, sig.fix_zh), source=sig.source, confidence=HIGH, line=hit.line,
                      text=hit.text, before=hit.before, after=hit.after, count=hit.count, benign=sig.benign,
                      victim=sig.victim, finding=sig.finding, confirm=sig.confirm)

    def lookup(self, family: str, code: str) -> Tuple[Optional[VendorCode], Optional[CodeClass]]:
        exact = self.codes.get(f"{family}:{code}")
        if exact is not None:
            return exact, None
        for klass in self.classes:  # longest prefix first
            if klass.family == family and code.startswith(klass.prefix):
                return None, klass
        return None, None

    def _code(self, form: CodeForm, hit: Hit) -> Optional[Answer]:
        code = normalise_code(form.family, hit.key)
        exact, klass = self.lookup(form.family, code)
        common = _Where(line=hit.line, text=hit.text, before=hit.before, after=hit.after, count=hit.count, code=code)
        if exact is not None:
            return Answer(id=f"{exact.family}.{exact.code}", kind=CODE, layer=exact.layer,
                          cause=Bi(exact.meaning_en, exact.meaning_zh), fix=Bi(exact.fix_en, exact.fix_zh),
                          source=exact.source, confidence=HIGH, victim=exact.victim, wrapper=exact.wrapper, generic=exact.generic,
                          finding=exact.finding, **common)
        if klass is not None:
            return Answer(id=f"{klass.family}.{klass.prefix}*", kind=CODE_CLASS, layer=klass.layer,
                          cause=Bi(tr("explain.code.class", "en", code=code, meaning=klass.meaning_en),
                                   tr("explain.code.class", "zh", code=code, meaning=klass.meaning_zh)),
                          fix=Bi(klass.fix_en, klass.fix_zh), source=klass.source, confidence=MEDIUM, **common)
        return Answer(id=f"{form.family}.unknown", kind=CODE_CLASS, layer="cann",
                      cause=T("explain.code.unknown", code=code, family=form.family),
                      fix=T("explain.code.unknown_fix"), source=form.source, confidence=LOW, **common)


class _Where(TypedDict):
    """The fields of an Answer that say where in the log it was found."""

    line: int
    text: str
    before: List[str]
    after: List[str]
    count: int
    code: str


def normalise_code(family: str, raw: str) -> str:
    raw = raw.strip()
    if family == "rt_internal":
        return "0x" + raw[2:].lower().lstrip("0") if raw.lower().startswith("0x") else raw
    if family in ("cann_msg", "pta"):
        return raw.upper()
    if family == "hccl":
        return str(int(raw)) if raw.isdigit() else raw
    return raw


def vllm_versions(hits: Sequence[Hit]) -> List[str]:
    return [h.key for h in hits if h.matcher == FACT_VLLM.id]


def pair_note(matrix: Matrix, vllm: Optional[str] = None, vllm_ascend: Optional[str] = None) -> Optional[Text]:
    """Which vllm / vllm-ascend pair fits, from the release matrix: the vllm that an installed
    vllm-ascend was built for, or the vllm-ascend releases built for a vllm seen in the log."""
    if vllm_ascend:
        row = next((r for r in matrix.releases if r.vllm_ascend == vllm_ascend), None)
        if row is not None:
            return T("explain.pair.for_ascend", vllm_ascend=vllm_ascend, vllm=" / ".join(row.vllm_accepted))
    if vllm:
        base = re.split(r"[+]", vllm)[0]
        rows = [r.vllm_ascend for r in matrix.releases if base in r.vllm_accepted]
        if rows:
            return T("explain.pair.for_vllm", vllm=base, vllm_ascend=", ".join(rows[-3:]))
        return T("explain.pair.none", vllm=base)
    return None
