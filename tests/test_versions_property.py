"""Version parsing and ordering never raise and are total orders, on every version string we
know: CANN / driver / firmware strings from the matrix and from facts/formats.md (copied to
tests/data/ascend-version-strings.txt), and the PEP 440 strings of the matrix."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from shipped import matrix as shipped_matrix

from doctor.versions import AscendVersion, in_version_range, pep440

DATA = Path(__file__).parent / "data"


def _ascend_strings():
    lines = (DATA / "ascend-version-strings.txt").read_text(encoding="utf-8").splitlines()
    found = {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    m = shipped_matrix()
    for r in m.cann_driver:
        found.update([r.cann, *r.compatible, *r.incompatible] + ([r.paired] if r.paired else []))
    for r in m.releases:
        found.update(r.cann)
        found.update(r.cann_by_hardware.values())
    for n in m.torch_npu:
        found.update([n.cann] if n.cann else [])
    return sorted(found)


def _pep440_strings():
    m = shipped_matrix()
    out = set()
    for r in m.releases:
        out.update([r.vllm_ascend, r.vllm, r.torch, r.torch_npu, r.glibc_min, *r.vllm_alternatives,
                    *r.triton_ascend_alternatives, *r.glibc_by_arch.values()])
        out.update(v for v in (r.torch_npu_recommended, r.triton_ascend, r.mooncake) if v)
    for n in m.torch_npu:
        out.update([n.version, n.torch])
    for t in m.torch:
        out.update(v for v in (t.torch, t.torchvision, t.torchaudio) if v)
    return sorted(out)


def _specifiers():
    m = shipped_matrix()
    out = set()
    for r in m.releases:
        out.update(s for s in (r.python, r.requires_python, r.transformers, r.numpy, r.torchvision, r.torchaudio) if s)
    for n in m.torch_npu:
        out.add(n.python)
    return sorted(out)


ASCEND = _ascend_strings()
PEP440 = _pep440_strings()
SPECS = _specifiers()


def test_the_lists_are_substantial():
    assert len(ASCEND) > 100 and {"8.2.RC1", "9.1.0-beta.1", "25.0.rc1.1", "7.7.0.1.231", "23.0.rc1.b070"} <= set(ASCEND)
    assert len(PEP440) > 100 and "2.9.0.post1+git4c901a4" in PEP440


def test_every_string_parses():
    for s in ASCEND:
        v = AscendVersion(s)
        assert v.key and str(v) == s and hash(v) == hash(AscendVersion(s))
    for s in PEP440:
        assert pep440(s) == Version(s)
    for s in SPECS:
        SpecifierSet(s)


ascend = st.sampled_from(ASCEND).map(AscendVersion)
any_text = st.text(alphabet="0123456789.-_+ rRcCaAbBlphetx", max_size=16)


@settings(max_examples=600, deadline=None)
@given(ascend, ascend)
@pytest.mark.slow  # ~0.5 s of CPU or more: a property test of hundreds of generated versions
def test_ascend_order_is_total_and_antisymmetric(a, b):
    relations = [a < b, a == b, b < a]
    assert relations.count(True) == 1, (a, b)
    assert (a <= b) == (not b < a)
    if a == b:
        assert hash(a) == hash(b)


@settings(max_examples=600, deadline=None)
@given(ascend, ascend, ascend)
@pytest.mark.slow  # ~0.5 s of CPU or more: a property test of hundreds of generated versions
def test_ascend_order_is_transitive(a, b, c):
    if a <= b and b <= c:
        assert a <= c
    if a < b and b < c:
        assert a < c


@settings(max_examples=300, deadline=None)
@given(any_text, any_text)
@pytest.mark.slow  # ~0.5 s of CPU or more: a property test of hundreds of generated versions
def test_arbitrary_text_never_raises(x, y):
    a, b = AscendVersion(x), AscendVersion(y)
    assert [a < b, a == b, b < a].count(True) == 1
    a.has_prefix(y)
    in_version_range(x, "7.0.0", "7.7.99")


def test_sorting_the_known_strings_does_not_depend_on_input_order():
    ordered = sorted(ASCEND, key=AscendVersion)
    again = sorted(reversed(ordered), key=AscendVersion)
    assert [AscendVersion(s) for s in again] == [AscendVersion(s) for s in ordered]  # "0.00" == "00.0"
    for a, b in zip(ordered, ordered[1:]):
        assert not AscendVersion(b) < AscendVersion(a)


@pytest.mark.parametrize("lo,hi", [
    ("8.0.RC1", "8.0.RC3"), ("8.0.RC3", "8.0.0"), ("8.0.0", "8.1.RC1"), ("8.2.RC1.alpha002", "8.2.RC1"),
    ("9.1.0-beta.1", "9.1.0-beta.3"), ("9.1.0-beta.3", "9.1.0"), ("24.1.rc2", "24.1.rc2.2"),
    ("24.1.rc3", "24.1.0"), ("25.0.rc1", "25.0.rc1.1"), ("25.5.0", "25.5.1"), ("26.0.rc1", "26.0.rc3"),
    ("7.5.0.1.129", "7.7.0.1.231"),
])
def test_known_orderings(lo, hi):
    assert AscendVersion(lo) < AscendVersion(hi)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(PEP440), st.sampled_from(PEP440), st.sampled_from(PEP440))
@pytest.mark.slow  # ~0.5 s of CPU or more: a property test of hundreds of generated versions
def test_pep440_order_is_total_and_transitive(x, y, z):
    a, b, c = Version(x), Version(y), Version(z)
    assert [a < b, a == b, b < a].count(True) == 1
    if a <= b <= c:
        assert a <= c
