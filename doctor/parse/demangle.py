"""Just enough of the Itanium C++ ABI to name the owner of a missing symbol.

``undefined symbol: _ZN7c10_npu3acl20AclrtPeekAtLastErrorE17aclrtLastErrLevel`` is the loader's
way of saying "c10_npu::acl::AclrtPeekAtLastError(aclrtLastErrLevel)". The namespace tells which
component should define it (c10_npu: torch_npu; atb: NNAL; c10/at/torch: torch). We decode the
qualified name and leave parameter types alone, because the owner is all a diagnosis needs and
a full demangler (c++filt) is neither pure nor always installed.
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

_STD = {"St": "std", "Sa": "std::allocator", "Sb": "std::basic_string", "Ss": "std::string",
        "Si": "std::istream", "So": "std::ostream", "Sd": "std::iostream"}


def _source_name(s: str, i: int) -> Tuple[Optional[str], int]:
    m = re.match(r"\d+", s[i:])
    if not m:
        return None, i
    n = int(m.group())
    start = i + len(m.group())
    if n <= 0 or start >= len(s):
        return None, i
    return s[start: start + n], min(start + n, len(s))  # a pasted symbol may be cut short


def _skip_template_args(s: str, i: int) -> int:
    """``I ... E``: skip balanced template arguments (their content does not name the owner)."""
    depth = 0
    while i < len(s):
        c = s[i]
        if c == "I":
            depth += 1
        elif c == "E":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c.isdigit():
            name, j = _source_name(s, i)
            if name is not None:
                i = j
                continue
        i += 1
    return i


def qualified_name(symbol: str) -> Optional[str]:
    """``_ZN3atb15CreateOperationI...`` -> ``atb::CreateOperation``; a C name is returned as is;
    None when the mangling is not understood."""
    if not symbol.startswith("_Z"):
        return symbol if re.fullmatch(r"[A-Za-z_]\w*", symbol or "") else None
    s, i = symbol, 2
    if s.startswith("N", i):
        i += 1
        parts: List[str] = []
        while i < len(s) and s[i] != "E":
            c = s[i]
            if c in "rVKRO":  # cv- and ref-qualifiers of a member function
                i += 1
            elif s.startswith("St", i) or s[i: i + 2] in _STD:
                parts.append(_STD.get(s[i: i + 2], "std"))
                i += 2
            elif c == "S":  # substitution: refers to an earlier component
                j = s.find("_", i)
                if j < 0:
                    return None
                i = j + 1
            elif c == "I":
                i = _skip_template_args(s, i)
            elif c in "CD" and i + 1 < len(s) and s[i + 1].isdigit():  # constructor / destructor
                parts.append(("~" if c == "D" else "") + (parts[-1].split("::")[-1] if parts else "?"))
                i += 2
            elif c.isdigit():
                name, i2 = _source_name(s, i)
                if name is None:
                    return None
                parts.append(name)
                i = i2
            else:
                return "::".join(parts) if parts else None
        return "::".join(parts) if parts else None
    name, _ = _source_name(s, i)
    return name


def namespace(symbol: str) -> Optional[str]:
    """The outermost scope of a symbol: ``c10_npu``, ``atb``, ``std``; for a C symbol its name."""
    name = qualified_name(symbol)
    if not name:
        return None
    return name.split("::", 1)[0]
