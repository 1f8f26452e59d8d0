"""The command the user ran, rebuilt from its parsed options, so that what the doctor suggests next
("carry it out": ``--apply``; "or prefer the other way": ``--prefer keep-cann``) is the same
command on the same target with one option changed, runnable as printed."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from doctor.findings import Command, cmd
from doctor.i18n import Text

Rerun = Callable[..., Command]
# how the output looks, not what is done: a suggested command leaves them to the reader
PRESENTATION = ("as_json", "lang", "verbose")


def _option(param) -> Optional[str]:
    longs = [o for o in param.opts if o.startswith("--")]
    return (longs or list(param.opts) or [None])[0]


def rebuild(ctx, changes: Dict[str, Any]) -> List[str]:
    """argv for ``ctx``'s command with ``changes`` applied (parameter name -> value; None or False
    removes an option). Options left at their defaults are not repeated."""
    argv: List[str] = []
    for param in ctx.command.params:
        if param.param_type_name != "option" or param.name is None or param.name in PRESENTATION:
            continue
        value = changes[param.name] if param.name in changes else ctx.params.get(param.name)
        if value is None or value is False or value == () or value == []:
            continue
        if param.name not in changes and value == param.default:
            continue
        opt = _option(param)
        if opt is None:
            continue
        if getattr(param, "is_flag", False):
            if value:
                argv.append(opt)
            continue
        for v in (value if getattr(param, "multiple", False) else [value]):
            argv += [opt, str(v)]
    return argv


def rerun_of(ctx) -> Rerun:
    """``rerun(label=None, **changes)``: this command again with ``changes``."""
    path = ctx.command_path.split()

    def rerun(label: Optional[Text] = None, **changes: Any) -> Command:
        return cmd(*path, *rebuild(ctx, changes), label=label)

    return rerun

