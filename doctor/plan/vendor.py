"""The vendor part of a plan: which Ascend layers (HDK driver and firmware; CANN toolkit, ops and
NNAL) a release needs changed on this host, in the order they go in, and which release is
reachable by changing the fewest of them. Pure: facts and matrix in, paths out.

A host too old for every release gets a path, not a refusal: for every release that runs on its
Python, architecture and hardware, count the vendor layers to upgrade (CANN: toolkit, ops, NNAL;
the HDK line that CANN is documented with: driver, firmware), and take the newest release among
the cheapest. The others are offered with what each costs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from doctor.facts import Facts
from doctor.i18n import T, Text
from doctor.matrix.model import CannDriver, Matrix, Release
from doctor.matrix.query import INCOMPATIBLE, cann_row, cann_supports_driver, nearest_pairing, release_misfits
from doctor.versions import AscendVersion

CANN_LAYERS = ("toolkit", "ops", "nnal")
HDK_LAYERS = ("driver", "firmware")
VENDOR_DOCS = "https://www.hiascend.com/document"


@dataclass
class VendorPath:
    release: Release
    cann_from: Optional[str]
    cann_to: Optional[str]  # None: the installed CANN stays
    hdk_from: Optional[str]
    hdk_to: Optional[str]  # None: the installed driver/firmware stay
    layers: List[str] = field(default_factory=list)
    hdk_nearest: Optional[str] = None  # the CANN of the nearest documented pairing, when hdk_to comes from it

    @property
    def cost(self) -> int:
        return len(self.layers)

    def describe(self) -> Text:
        parts: List[Text] = []
        if self.hdk_to:
            parts.append(T("plan.vendor.cost_hdk", frm=self.hdk_from or T("plan.vendor.none"), to=self.hdk_to))
        if self.cann_to:
            parts.append(T("plan.vendor.cost_cann", frm=self.cann_from or T("plan.vendor.none"), to=self.cann_to))
        if not parts:
            return T("plan.vendor.cost_none", release=self.release.vllm_ascend)
        return T("plan.vendor.cost", release=self.release.vllm_ascend, n=self.cost, what=parts)

    def to_json(self) -> dict:
        return {"target": self.release.vllm_ascend, "cann": {"from": self.cann_from, "to": self.cann_to},
                "hdk": {"from": self.hdk_from, "to": self.hdk_to}, "layers": list(self.layers), "cost": self.cost}


def _installed(facts: Facts) -> Tuple[Optional[str], Optional[str]]:
    cann = facts.cann.version if facts.cann and facts.cann.found and facts.cann.version else None
    driver = facts.driver.version if facts.driver and facts.driver.found and facts.driver.version else None
    return cann, driver


def path_to(matrix: Matrix, facts: Facts, row: Release, hardware: Optional[str]) -> VendorPath:
    """What this host must change at the vendor level to run ``row``."""
    cann, driver = _installed(facts)
    wanted = row.cann_for(hardware)
    cann_ok = cann is not None and any(AscendVersion(c) == AscendVersion(cann) for c in wanted)
    use = cann if cann is not None and cann_ok else wanted[0]
    layers: List[str] = []
    cann_to = None
    if not cann_ok:
        cann_to = use
        layers += list(CANN_LAYERS)
    hdk_to = None
    cd = cann_row(matrix, use)
    if driver is None:
        # No driver seen: a container or a build stage uses the host's (nothing to plan here);
        # a bare machine getting its first CANN gets the HDK that CANN is documented with.
        if cann_to is not None and not facts.host.in_container:
            hdk_to = _documented_hdk(matrix, cd, use, None)
    else:
        status, _ = cann_supports_driver(matrix, use, driver)
        # The CANN that stays asks for a new HDK only on a documented incompatibility ("not
        # documented" is not "too old"). A CANN being installed goes in with an HDK it is
        # documented with when the driver is below every line its row names.
        lines = cd.documented if cd is not None and cd.documented else _nearest_lines(matrix, use, driver)
        below = bool(lines) and all(AscendVersion(driver) < AscendVersion(p) for p in lines)
        if (cd is not None and status in INCOMPATIBLE) or (cann_to is not None and below):
            hdk_to = _documented_hdk(matrix, cd, use, driver)
    nearest = None
    if hdk_to is not None:
        layers = list(HDK_LAYERS) + layers
        if cd is None or not (cd.paired or cd.documented):
            near = nearest_pairing(matrix, use, driver or "0")
            nearest = near.cann if near is not None else None
    return VendorPath(row, cann, cann_to, driver, hdk_to, layers, nearest)


def _nearest_lines(matrix: Matrix, cann: str, driver: Optional[str]) -> Tuple[str, ...]:
    """A CANN whose notes list no HDK: the line of the nearest documented pairing (as check
    names it), so an undocumented CANN never looks cheaper than a documented one."""
    near = nearest_pairing(matrix, cann, driver or "0")
    return (near.driver,) if near is not None else ()


def _documented_hdk(matrix: Matrix, cd: Optional[CannDriver], cann: str, driver: Optional[str]) -> Optional[str]:
    """The HDK a CANN goes in with: its paired HDK, else its first documented line, else the
    nearest documented pairing's."""
    if cd is not None and (cd.paired or cd.documented):
        return cd.paired or cd.documented[0]
    lines = _nearest_lines(matrix, cann, driver)
    return lines[0] if lines else None


def candidates(matrix: Matrix, facts: Facts, hardware: Optional[str]) -> List[VendorPath]:
    """Every wheel-published release that runs on this Python/arch/hardware/glibc, newest first,
    with its vendor cost."""
    py = facts.python
    python = py.version if py and py.version else None
    arch = (py.machine if py and py.machine else None) or facts.host.machine or None
    glibc = py.glibc if py and py.glibc else None
    hw = hardware if hardware in ("A2", "A3", "310P", "A5") else None
    out: List[VendorPath] = []
    for row in reversed(matrix.releases):
        if row.distribution == "sdist":
            continue
        if release_misfits(matrix, row, python=python, hardware=hw, arch=arch, glibc=glibc):
            continue
        out.append(path_to(matrix, facts, row, hardware))
    return out


def cheapest(matrix: Matrix, facts: Facts, hardware: Optional[str]) -> Tuple[Optional[VendorPath], List[VendorPath]]:
    """The newest release among those needing the fewest vendor layers changed, and for every
    other cost the newest release at that cost (what each alternative costs)."""
    paths = candidates(matrix, facts, hardware)
    if not paths:
        return None, []
    best_cost = min(p.cost for p in paths)
    best = next(p for p in paths if p.cost == best_cost)
    # the other ways: the newest release of every other vendor target (CANN line, HDK line)
    others: List[VendorPath] = []
    seen = {(best.cann_to, best.hdk_to)}
    for p in paths:
        key = (p.cann_to, p.hdk_to)
        if key not in seen and len(others) < 4:
            seen.add(key)
            others.append(p)
    return best, others


def vendor_steps(path: VendorPath, facts: Facts) -> List[Tuple[str, Text]]:
    """(layer, why) for each vendor layer to change, in the order they go in: the HDK (driver,
    firmware) the CANN needs, then CANN's toolkit, ops and NNAL."""
    out: List[Tuple[str, Text]] = []
    if path.hdk_to:
        if path.hdk_nearest:  # the target CANN's notes list no HDK: say whose pairing this is
            out.append(("driver", T("plan.vendor.driver_nearest", frm=path.hdk_from or T("plan.vendor.none"),
                                    to=path.hdk_to, cann=path.cann_to or path.cann_from or "-",
                                    near=path.hdk_nearest)))
        else:
            out.append(("driver", T("plan.vendor.driver", frm=path.hdk_from or T("plan.vendor.none"), to=path.hdk_to,
                                    cann=path.cann_to or path.cann_from or "-")))
        out.append(("firmware", T("plan.vendor.firmware", to=path.hdk_to)))
    if path.cann_to:
        out.append(("toolkit", T("plan.vendor.toolkit", frm=path.cann_from or T("plan.vendor.none"), to=path.cann_to)))
        out.append(("ops", T("plan.vendor.ops", to=path.cann_to)))
        out.append(("nnal", T("plan.vendor.nnal", to=path.cann_to)))
    return out
