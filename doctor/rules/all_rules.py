"""Every rule, in the order check runs them (the verdict orders findings by layer afterwards).

An explicit list, the way pre-commit's ``all_languages.py`` lists its languages: adding a rule
module means adding it here, and a module missing from this list is caught by a test, never
silently skipped. Rule modules import ``doctor.rules.base`` only, so there is no import circle.
"""
from __future__ import annotations

from doctor.rules import access, cann, env, hardware, hccn, imports, mooncake, python, stack, tuning, tuning_model, tuning_serve
from doctor.rules.base import Rules

MODULES = (access, cann, env, hardware, hccn, imports, mooncake, python, stack, tuning, tuning_serve, tuning_model)  # within a layer, findings keep this order

RULES: Rules = tuple(r for m in MODULES for r in m.RULES)
