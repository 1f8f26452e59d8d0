"""What every tuning rule reads: the release to judge against, the serving environment, the
serve command, the knowledge rows of matrices/tuning.toml. Pure: facts and matrix in."""
from __future__ import annotations

import re
from doctor.record import record
from typing import Dict, List, Optional, Sequence

from doctor.facts import Chip, ModelFacts, ServeFacts, TuningFacts
from doctor.i18n import Text
from doctor.matrix.model import TuningAdvice, TuningFact, TuningVar
from doctor.parse.serving import ServeSpec, spec
from doctor.rules.base import Context
from doctor.versions import pep440, satisfies

GIB = 1 << 30


@record(frozen=True)
class Words(Text):
    """Words the matrix holds in both languages (who recommends what), rendered like a
    catalogue Text in the language of the output."""

    key: str = ""
    en: str = ""
    zh: str = ""

    def text(self, lang: str = "en") -> str:
        return self.zh if lang == "zh" else self.en


@record
class View:
    ctx: Context
    version: Optional[str]  # the vllm-ascend release judged against
    env: Dict[str, str]  # Context.env: the process environment plus the exports of the launch script
    serve: Optional[ServeFacts]
    spec: Optional[ServeSpec]  # None without --serve-args / --serve-args-file
    host: Optional[TuningFacts]
    model: Optional[ModelFacts]

    @property
    def runtime(self) -> bool:
        return not self.ctx.build

    @property
    def machine(self) -> str:
        return self.ctx.facts.host.machine

    def fact(self, fid: str) -> Optional[TuningFact]:
        """The row of a release fact that holds for this release (id, or id.variant), or None.
        Facts for every release (">=0") hold even when the release is unknown."""
        for row in self.ctx.matrix.tuning_facts:
            if row.id != fid and not row.id.startswith(fid + "."):
                continue
            if row.releases == (">=0",):
                return row
            if self.version is not None and any(satisfies(self.version, r) for r in row.releases):
                return row
        return None

    def any_fact(self, fid: str) -> Optional[TuningFact]:
        """The row whatever the release (for its source and wording)."""
        return next((r for r in self.ctx.matrix.tuning_facts if r.id == fid or r.id.startswith(fid + ".")), None)

    def var(self, name: str) -> Optional[TuningVar]:
        return next((v for v in self.ctx.matrix.tuning_vars if v.name == name), None)

    def advice(self) -> List[TuningAdvice]:
        if self.version is None:
            return []
        return [a for a in self.ctx.matrix.tuning_advice if any(satisfies(self.version, r) for r in a.releases)]

    @property
    def checked_through(self) -> Optional[str]:
        row = self.any_fact("checked_through")
        return row.value if row else None

    def within_checked(self) -> bool:
        """The release is not newer than the newest tag whose code was read for the matrix."""
        top, here = pep440(self.checked_through), pep440(self.version)
        return top is not None and here is not None and here <= top

    def chips(self) -> List[Chip]:
        d = self.ctx.facts.devices
        info = d.npu_smi_info if d else None
        return sorted(info.chips, key=lambda c: (c.npu, c.chip)) if info else []

    def device_count(self) -> Optional[int]:
        """Devices the runtime can open here: the /dev/davinciN nodes present (a container sees
        the ones it was given), else the chips npu-smi lists."""
        d = self.ctx.facts.devices
        nodes = [n for n in d.davinci if n.exists] if d else []
        if nodes:
            return len(nodes)
        chips = self.chips()
        return len(chips) or None


def view(ctx: Context) -> View:
    cached = ctx.memo.get("tuning.view")
    if isinstance(cached, View):
        return cached
    facts = ctx.facts
    host = facts.tuning
    serve = host.serve if host else None
    env = ctx.env
    version = ctx.release.vllm_ascend if ctx.release else facts.version_of("vllm-ascend")
    sp = spec(serve.options, serve.model) if serve is not None and not serve.error else None
    v = View(ctx=ctx, version=version, env=env, serve=serve, spec=sp, host=host, model=facts.model)
    ctx.memo["tuning.view"] = v
    return v


def visible_ids(raw: str) -> Optional[List[int]]:
    """ASCEND_RT_VISIBLE_DEVICES as the runtime reads it: None when it is malformed."""
    parts = raw.split(",")
    if not raw or any(not p.isdigit() for p in parts):
        return None
    return [int(p) for p in parts]


def used_chips(v: View) -> List[int]:
    """Indices (in npu-smi order, which is the logical device order) of the chips this instance
    will use: the first tp x pp x dp of the visible ones (all of them without a serve command)."""
    chips = v.chips()
    order = list(range(len(chips)))
    raw = v.env.get("ASCEND_RT_VISIBLE_DEVICES")
    ids = visible_ids(raw) if raw else None
    if ids is not None:
        order = [i for i in ids if i < len(chips)]
    if v.spec is not None:
        order = order[:v.spec.ranks]
    return order


def gib(n_bytes: float) -> str:
    return f"{n_bytes / GIB:.1f}"


def joined(items: Sequence[object]) -> str:
    return ",".join(str(i) for i in items)


def compact_cpus(cpus: Sequence[int]) -> str:
    """[0, 1, 2, 5] -> '0-2,5'."""
    out: List[str] = []
    run: List[int] = []
    for c in sorted(set(cpus)):
        if run and c == run[-1] + 1:
            run.append(c)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [c]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


def kernel_tuple(release: Optional[str]) -> Optional[tuple]:
    m = re.match(r"^(\d+)\.(\d+)", release or "")
    return (int(m.group(1)), int(m.group(2))) if m else None
