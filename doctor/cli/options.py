"""The declared options (doctor/cli/params.py) as typer parameters: ``takes(*options)`` gives a
command exactly those options, in that order, after its own parameters (a typer.Context, its
arguments), and the command reads them as ``**params``. Every float option refuses nan, inf and
more than MAX_OPTION_SECONDS."""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, TypeVar, get_type_hints

import typer

from doctor.cli import params as p
from doctor.cli.params import Opt

F = TypeVar("F", bound=Callable[..., Any])
TYPES = {"str": Optional[str], "flag": bool, "list": List[str], "seconds": float, "int": Optional[int], "paths": List[Path]}


def _finite(value: Optional[float]) -> Optional[float]:
    why = p.out_of_range(value)
    if why:
        raise typer.BadParameter(why)
    return value


def typer_option(opt: Opt) -> Any:
    default: Any = list(opt.default) if isinstance(opt.default, list) else opt.default
    extra: Dict[str, Any] = {"metavar": opt.metavar} if opt.metavar else {}
    if opt.hidden:
        extra["hidden"] = True
    if opt.min is not None:
        extra["min"] = opt.min
    if opt.kind == "seconds":  # a number of seconds, never nan nor inf
        extra["callback"] = _finite
    return typer.Option(default, *opt.flags, help=opt.help, **extra)


def _annotation(opt: Opt) -> Any:
    if opt.kind == "str" and opt.default is not None:
        return str
    if opt.kind == "int" and opt.default is not None:
        return int
    if opt.kind == "seconds" and opt.default is None:
        return Optional[float]
    if opt.kind == "flag" and opt.default is None:  # unset, as against given: a configuration file may set it
        return Optional[bool]
    return TYPES[opt.kind]


def takes(*options: Opt) -> Callable[[F], F]:
    """The command's parameters: its own (a typer.Context, arguments), then ``options`` in
    order; the function receives the options' values as keyword arguments (``**params``)."""

    def wrap(fn: F) -> F:
        hints = get_type_hints(fn)
        own = [q.replace(annotation=hints.get(q.name, q.annotation))
               for q in inspect.signature(fn).parameters.values() if q.kind is not q.VAR_KEYWORD]
        declared = [inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=typer_option(o),
                                      annotation=_annotation(o)) for o in options]
        fn.__signature__ = inspect.Signature(own + declared, return_annotation=None)  # type: ignore[attr-defined]
        return fn

    return wrap

