"""The commands findings offer, built from the facts: each a :class:`doctor.findings.Command` that
runs as printed (shlex-quoted, one per line, with the index options it needs, naming the
interpreter that was judged rather than whatever ``pip`` is first on PATH).

A command list is read in groups: a command with a label starts a group ("repair it with the
plan:", "or by hand:"), the commands after it without a label belong to the same group and run
in order. Pure: facts and the matrix only.
"""
from __future__ import annotations

import re
from doctor.record import replace
from typing import List, Optional, Sequence, Tuple

from doctor.findings import Command, cmd
from doctor.i18n import T, Text
from doctor.matrix.query import torch_npu_row
from doctor.rules.base import Context
from doctor.versions import local_label, pep440

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
ASCEND_MIRROR = "https://mirrors.huaweicloud.com/ascend/repos/pypi"
TORCH_FAMILY = ("torch", "torchvision", "torchaudio")
MIRRORED = ("torch-npu", "triton-ascend")  # builds a release row's extra indexes are named for


def python(ctx: Context) -> str:
    """The judged interpreter (an image's as it is inside the image), else ``python3``."""
    p = ctx.facts.python
    return p.executable if p is not None and p.executable else "python3"


def arch(ctx: Context) -> Optional[str]:
    p = ctx.facts.python
    return (p.machine if p is not None and p.machine else None) or ctx.facts.host.machine or None


def image_args(ctx: Context) -> Tuple[str, ...]:
    """The options naming the image this check read (``--image-tar FILE`` / ``--image REF``)."""
    img = ctx.facts.image
    if img is None:
        return ()
    out: Tuple[str, ...] = ("--image-tar" if img.source == "tar" else "--image", img.ref)
    if len(img.available_platforms) > 1 and img.platform:
        out += ("--platform", img.platform)
    return out


def target_args(ctx: Context) -> Tuple[str, ...]:
    """The options that make another doctor command judge what this one judged: the image, or
    the root and the interpreter (named explicitly: the shell the command is pasted into may
    have another environment active), and every other option that shaped the verdict
    (``ctx.follow_up``: --npu-smi, --stage, --target ...)."""
    if ctx.facts.image is not None:
        return image_args(ctx) + ctx.follow_up
    out: Tuple[str, ...] = ()
    if ctx.facts.host.root not in ("", "/"):
        out += ("--root", ctx.facts.host.root)
    p = ctx.facts.python
    if p is not None and p.source == "interpreter" and p.executable:
        out += ("--python", p.executable)
    return out + ctx.follow_up


def doctor(ctx: Context, *argv: str, label: Optional[Text] = None) -> Command:
    """``ascend-doctor COMMAND ...`` on the same target."""
    return cmd("ascend-doctor", *argv, *target_args(ctx), label=label)


def fix_apply(ctx: Context, *extra: str, label: Optional[Text] = None) -> Command:
    """The plan, carried out; for an image (never changed in place) the plan that prints the
    Dockerfile lines."""
    if ctx.facts.image is not None:
        return doctor(ctx, "fix", *extra, label=label if label is not None else T("cmd.fix_image"))
    return doctor(ctx, "fix", "--apply", *extra, label=label if label is not None else T("cmd.fix_apply"))


def pip(ctx: Context, *args: str, label: Optional[Text] = None) -> Command:
    """The target's own pip; for a target without pip (a uv venv), the doctor's pip driving it
    with --python, as the fix plan does (doctor.shell.install.installer.choose). In an image, a RUN line
    of a Dockerfile built on it (the interpreter is the image's)."""
    target = python(ctx)
    if ctx.facts.image is not None:
        return cmd("RUN", target, "-m", "pip", *args, label=label)
    pk = ctx.facts.packages
    py = ctx.facts.python
    own = pk is None or "pip" in pk.dists or not ctx.doctor_python
    if args and args[0] in ("install", "uninstall") and py is not None and py.externally_managed:
        from doctor.pep668 import break_system

        # PEP 668: the judged interpreter is the system's; pip's documented override
        version = pk.dists["pip"].version if pk is not None and "pip" in pk.dists else ctx.doctor_pip
        args = (args[0], *break_system(True, version), *args[1:])
    if not own and ctx.doctor_python:
        return cmd(ctx.doctor_python, "-m", "pip", "--python", target, *args, label=label)
    return cmd(target, "-m", "pip", *args, label=label)


def _name_and_pin(spec: str) -> Tuple[str, Optional[str]]:
    m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:==\s*([^\s;,]+))?", spec)
    if not m:
        return spec, None
    return m.group(1).lower().replace("_", "-"), m.group(2)


def install_specs(ctx: Context, specs: Sequence[str]) -> Tuple[List[str], List[str]]:
    """The requirements as pip must be given them here, and the indexes they need: torch and its
    companions as ``X+cpu`` from the PyTorch CPU index on x86_64 (PyPI's x86_64 torch is a CUDA
    build), torch-npu builds from the Ascend mirror or their direct URL, and the mirrors the
    release row names."""
    out: List[str] = []
    indexes: List[str] = []

    def need(url: str) -> None:
        if url not in indexes:
            indexes.append(url)

    for spec in specs:
        name, pin = _name_and_pin(spec)
        if name in TORCH_FAMILY and pin and arch(ctx) == "x86_64" and pep440(pin) is not None and not local_label(pin):
            spec = f"{name}=={pin}+cpu"
        if name in TORCH_FAMILY and "+cpu" in spec:
            need(CPU_INDEX)
        if name == "torch-npu" and pin:
            row = torch_npu_row(ctx.matrix, pin)
            if row is not None and row.url and row.index == "obs":
                spec = row.url  # on no index: the wheel itself
            elif row is not None and row.index == "ascend-mirror":
                need(ASCEND_MIRROR)
        if name in MIRRORED and ctx.release is not None:
            for url in ctx.release.extra_index_urls:  # the row names where its builds are
                need(url)
        out.append(spec)
    return out, indexes


def pip_install(ctx: Context, *specs: str, no_deps: bool = True, force: bool = False,
                label: Optional[Text] = None) -> Command:
    reqs, indexes = install_specs(ctx, specs)
    options: List[str] = (["--no-deps"] if no_deps else []) + (["--force-reinstall"] if force else [])
    for url in indexes:
        options += ["--extra-index-url", url]
    return pip(ctx, "install", *options, *reqs, label=label)


def pip_uninstall(ctx: Context, *names: str, label: Optional[Text] = None) -> Command:
    return pip(ctx, "uninstall", "-y", *names, label=label)


def by_hand(commands: Sequence[Command]) -> List[Command]:
    """The hand commands as the group after ``fix --apply``: the first carries the label."""
    out = list(commands)
    if out and out[0].label is None:
        out[0] = replace(out[0], label=T("cmd.by_hand"))
    return out


def source(path: str, label: Optional[Text] = None) -> Command:
    """``source FILE``: a shell builtin, so it runs in the user's shell as printed (``.`` in sh)."""
    return cmd("source", path, label=label)
