"""Where the stack's files come from, and what works when a host cannot be reached. Pure data
with a public source for every address; :func:`remedies` turns a resolver failure into the
commands that get around it.

(Kept here until the matrix schema has an index table; matrices/ is the place for it then.)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Sequence

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


def remedies(failure: Failure, requirements: Sequence[str],
             pip_install: Sequence[str] = ("python3", "-m", "pip", "install", "--no-deps")) -> Remedies:
    """What works instead: the same requirements from a documented mirror of the host that did
    not answer, the Ascend mirror for builds only it has, or a bundle made on a connected
    machine. ``pip_install`` is the plan's own install command up to the requirements (the
    doctor's pip with --python when the target has none), so every command runs as printed."""
    notes: List[Text] = []
    out: List[Command] = []
    reqs = list(requirements)
    pip = list(pip_install)
    if failure.kind == UNREACHABLE:
        for h in failure.hosts:
            if h.how == PROXY:
                notes.append(T("plan.remedy.proxy", host=h.host))
            elif h.how == TLS:
                notes.append(T("plan.remedy.tls", host=h.host))
            for m in mirrors_for(h.host):
                out.append(cmd(*pip, *reqs, m.option, m.url, label=T("plan.remedy.mirror", host=h.host, url=m.url,
                                                                      source=m.source)))
        out.append(cmd("ascend-doctor", "snapshot", "--output", "node.json", label=T("plan.remedy.bundle_snapshot")))
        out.append(cmd("ascend-doctor", "fix", "--bundle", "ascend-bundle", "--from", "node.json",
                       label=T("plan.remedy.bundle_make")))
        out.append(cmd("ascend-doctor", "fix", "--apply", "--bundle", "ascend-bundle", label=T("plan.remedy.bundle_apply")))
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
