"""The library classifiers on crafted long runs: the lookbehinds that start each try where a run
of name characters starts give the same groups as the plain patterns, in linear time (the plain
ones took 2.5 to 24 s on one 64 KiB line)."""
import re
import time

import pytest

from doctor.explain.classifiers import CLASSIFIERS

# the patterns as they were before the lookbehinds: the reference for what a match holds
PLAIN = {
    "classifier.missing_library": r"(?P<lib>[\w.+/-]*\.so(?:\.[\d.]+)?): cannot open shared object file",
    "classifier.undefined_symbol":
        r"(?:(?P<lib>/[^\s:'\"]+\.so[\w.]*)|[\w.+-]+\.so[\w.]*)?: undefined symbol: (?P<sym>[\w$.@]+)",
}
LINES = [
    "ImportError: libatb.so: cannot open shared object file: No such file or directory",
    "OSError: /usr/local/Ascend/nnal/atb/lib/libatb.so.1.2: cannot open shared object file",
    "x/y/libz.so.2: cannot open shared object file", "'a b.so': cannot open shared object file",
    "ImportError: /usr/lib/python3/site-packages/torch_npu/lib/libtorch_npu.so: undefined symbol: _ZN3atb",
    "libx.so.1: undefined symbol: foo", "abc/def.so: undefined symbol: _Z1", "a.so/b.so: undefined symbol: s",
    "'/p/q.so': undefined symbol: s", ": undefined symbol: bare", "x/y/z.so.2.1: undefined symbol: k",
    "/opt/a: b/c.so: undefined symbol: t", "libfoo.so.6 libbar.so: cannot open shared object file",
]


def _pattern(cid):
    return next(re.compile(c.pattern) for c in CLASSIFIERS if c.id == cid)


@pytest.mark.parametrize("cid", sorted(PLAIN))
def test_the_same_groups_as_the_plain_pattern(cid):
    new, old = _pattern(cid), re.compile(PLAIN[cid])
    for line in LINES:
        a, b = new.search(line), old.search(line)
        assert (a.groupdict() if a else None) == (b.groupdict() if b else None), line


@pytest.mark.parametrize("cid", sorted(PLAIN))
@pytest.mark.parametrize("run", ["q-" * 32000, "/q" * 32000, "/a" * 32000 + ".so", "q." * 32000 + "so"])
def test_a_crafted_long_run_is_read_in_linear_time(cid, run):
    needle = ": cannot open shared object file" if "missing" in cid else ": undefined symbol: x"
    pattern = _pattern(cid)
    started = time.process_time()
    for line in (run, run + needle):
        pattern.search(line)
    assert time.process_time() - started < 2.0  # the plain patterns: 2.5 to 24 s of CPU here
