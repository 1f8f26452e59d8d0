"""Every rule, in the order check runs them (the verdict orders findings by layer afterwards).

An explicit list, the way pre-commit's ``all_languages.py`` lists its languages: adding a rule
module means adding it here, and a module missing from this list is caught by a test, never
silently skipped. Rule modules import ``doctor.rules.base`` only, so there is no import circle.

``RULES`` imports every module; check asks ``rules_for(ctx)``, which imports only the modules
whose layer has input (doctor/rules/gates.py): the others would say nothing.
"""
from __future__ import annotations

import importlib
from typing import Any, Dict

from doctor.rules.base import Context, Rules

# within a layer, findings keep this order
NAMES = ("access", "cann", "env", "hardware", "hccn", "imports", "mooncake", "python", "stack", "tuning", "tuning_serve",
         "tuning_model")

_loaded: Dict[str, Rules] = {}


def rules_of(name: str) -> Rules:
    if name not in _loaded:
        _loaded[name] = importlib.import_module(f"doctor.rules.{name}").RULES
    return _loaded[name]


def rules_for(ctx: Context) -> Rules:
    """The rules of every module whose layer has input in ``ctx``, in the order of NAMES."""
    from doctor.rules.gates import wanted

    return tuple(r for name in wanted(ctx, NAMES) for r in rules_of(name))


def eager() -> Rules:
    """The modules without a gate (imported while the probes wait)."""
    from doctor.rules.gates import GATES

    return tuple(r for name in NAMES if name not in GATES for r in rules_of(name))


def __getattr__(name: str) -> Any:  # RULES and MODULES: every module, imported when asked
    if name == "RULES":
        return tuple(r for n in NAMES for r in rules_of(n))
    if name == "MODULES":
        return tuple(importlib.import_module(f"doctor.rules.{n}") for n in NAMES)
    raise AttributeError(name)
