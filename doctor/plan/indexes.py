"""Where the stack's files come from, and what works when a host cannot be reached. Pure data
with a public source for every address; :func:`remedies` turns a resolver failure into the
commands that get around it.

(Kept here until the matrix schema has an index table; matrices/ is the place for it then.)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from doctor.findings import Command, cmd
from doctor.i18n import T, Text
from doctor.parse.pipreport import CONFLICT, MISSING, PROXY, TLS, UNREACHABLE, Failure

TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
ASCEND_MIRROR = "https://mirrors.huaweicloud.com/ascend/repos/pypi"


@dataclass(frozen=True)
class Mirror:
    of: str  # the host it stands in for
    url: str
    option: str  # --index-url | --extra-index-url | --find-links
    source: str


MIRRORS = (
    # The PyTorch CPU wheels (torch X+cpu, torchvision, torchaudio), as a flat file list.
    Mirror("download.pytorch.org", "https://mirrors.aliyun.com/pytorch-wheels/cpu/", "--find-links",
           "https://developer.aliyun.com/mirror/pytorch-wheels"),
    # The public index, mirrored in China (torch-npu, vllm, vllm-ascend are there too).
    Mirror("pypi.org", "https://pypi.tuna.tsinghua.edu.cn/simple", "--index-url",
           "https://mirrors.tuna.tsinghua.edu.cn/help/pypi/"),
    Mirror("pypi.org", "https://mirrors.aliyun.com/pypi/simple/", "--index-url", "https://developer.aliyun.com/mirror/pypi"),
    Mirror("files.pythonhosted.org", "https://pypi.tuna.tsinghua.edu.cn/simple", "--index-url",
           "https://mirrors.tuna.tsinghua.edu.cn/help/pypi/"),
)
ASCEND_MIRROR_SOURCE = "https://vllm-ascend.readthedocs.io/en/latest/installation.html"


def _host(h: str) -> str:
    return h.split(":", 1)[0]


def mirrors_for(host: str) -> List[Mirror]:
    return [m for m in MIRRORS if m.of == _host(host)]


@dataclass
class Remedies:
    notes: List[Text]
    commands: List[Command]  # each runs as printed

    def to_json(self, lang: str = "en") -> dict:
        return {"notes": [n.text(lang) for n in self.notes], "commands": [c.to_json(lang) for c in self.commands]}


@dataclass(frozen=True)
class Route:
    """The options the bundle way's commands carry, so that they read, plan and repair what the
    failed plan was for (the interpreter and root judged, and every other option that shaped it),
    each only with options its command accepts: ``snapshot`` (``snapshot --output node.json``: the
    same target read), ``make`` (``fix --bundle ascend-bundle --from node.json``: planned the same
    way) and ``apply`` (``fix --apply --bundle ascend-bundle`` on the same target; None when
    --apply cannot be run on it: no interpreter, only directories)."""

    snapshot: Tuple[str, ...] = ()
    make: Tuple[str, ...] = ()
    apply: Optional[Tuple[str, ...]] = ()


def _host_of(url: str) -> str:
    from urllib.parse import urlparse

    return (urlparse(url).hostname or "").lower()


def mirrored(indexes: Sequence[str], down: Sequence[str], mirror: Mirror) -> List[str]:
    """The index options of a command that gets the same files with ``mirror`` in place of its
    host: every extra index the requirements need stays (the Ascend mirror's triton-ascend and
    torch-npu builds, the CPU torch), each host that did not answer replaced by a documented
    mirror (``mirror`` for its own, the first one for another; one default index at most, this
    command's when it replaces it)."""
    down_hosts = [_host(h) for h in down]
    chosen: List[Mirror] = []
    for host in dict.fromkeys(down_hosts):
        subs = mirrors_for(host)
        if host != mirror.of and subs:
            chosen.append(subs[0])
    chosen.append(mirror)  # last: the command is this mirror's
    out: List[str] = []
    for url in indexes:
        here = _host_of(url)
        if here not in down_hosts or not mirrors_for(here):
            out += ["--extra-index-url", url]  # no mirror of its own: kept (its requirements are only there)
    default = mirror if mirror.option == "--index-url" else next((m for m in chosen if m.option == "--index-url"), None)
    for m in chosen:
        if m.option == "--index-url" and m is not default:
            continue
        if not any(out[i] == m.option and out[i + 1] == m.url for i in range(0, len(out) - 1, 2)):
            out += [m.option, m.url]
    return out


def remedies(failure: Failure, requirements: Sequence[str],
             pip_install: Sequence[str] = ("python3", "-m", "pip", "install", "--no-deps"),
             indexes: Sequence[str] = (), route: Optional[Route] = Route()) -> Remedies:
    """What works instead: the same requirements from a documented mirror of the host that did
    not answer, the Ascend mirror for builds only it has, or a bundle made on a connected
    machine. ``pip_install`` is the plan's own install command up to the requirements (the
    doctor's pip with --python when the target has none) and ``indexes`` the extra indexes the
    requirements were asked with, so every command runs as printed; ``route``: the options of the
    bundle way's commands (None: no bundle way, an image's plan)."""
    notes: List[Text] = []
    out: List[Command] = []
    reqs = list(requirements)
    pip = list(pip_install)
    if failure.kind == UNREACHABLE:
        down = [h.host for h in failure.hosts]
        for h in failure.hosts:
            if h.how == PROXY:
                notes.append(T("plan.remedy.proxy", host=h.host))
            elif h.how == TLS:
                notes.append(T("plan.remedy.tls", host=h.host))
            for m in mirrors_for(h.host):
                out.append(cmd(*pip, *reqs, *mirrored(indexes, down, m),
                               label=T("plan.remedy.mirror", host=h.host, url=m.url, source=m.source)))
        if route is not None:
            out.append(cmd("ascend-doctor", "snapshot", "--output", "node.json", *route.snapshot,
                           label=T("plan.remedy.bundle_snapshot")))
            out.append(cmd("ascend-doctor", "fix", "--bundle", "ascend-bundle", "--from", "node.json", *route.make,
                           label=T("plan.remedy.bundle_make")))
            if route.apply is not None:
                out.append(cmd("ascend-doctor", "fix", "--apply", "--bundle", "ascend-bundle", *route.apply,
                               label=T("plan.remedy.bundle_apply")))
            else:
                notes.append(T("plan.remedy.bundle_apply_needs_python"))
    elif failure.kind == MISSING and failure.requirement:
        req = failure.requirement
        name = re.split(r"[=<>!~\[; ]", req, maxsplit=1)[0].strip().lower().replace("_", "-")
        if name in ("torch-npu", "triton-ascend"):
            out.append(cmd(*pip, req, "--extra-index-url", ASCEND_MIRROR,
                           label=T("plan.remedy.ascend_mirror", requirement=req, source=ASCEND_MIRROR_SOURCE)))
        elif name in ("torch", "torchvision", "torchaudio") and "+cpu" in req:
            out.append(cmd(*pip, req, "--extra-index-url", TORCH_CPU_INDEX, label=T("plan.remedy.cpu_index", requirement=req)))
        else:
            notes.append(T("plan.remedy.not_on_index", requirement=req))
    elif failure.kind == CONFLICT:
        notes.append(T("plan.remedy.conflict"))
    return Remedies(notes, out)


def index_of(url: str, indexes: Sequence[str]) -> Optional[str]:
    """Which of ``indexes`` a file URL was found on (by host and path prefix)."""
    for i in indexes:
        base = i.rstrip("/").rsplit("/simple", 1)[0]
        if url.startswith(base):
            return i
    return None
