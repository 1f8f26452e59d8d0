"""The library classifiers on crafted long runs: the lookbehinds that start each try where a run
of name characters starts give the same groups as the plain patterns, in linear time (the plain
ones took 2.5 to 24 s on one 64 KiB line, and 34 s on a path of 20,000 ".so")."""
import random
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
    # at least one character between the '/' (or the name's start) and ".so"
    "/.so: undefined symbol: s", "/.so.so: undefined symbol: s", "x/.so: undefined symbol: s", ".so: undefined symbol: s",
    "a.so: undefined symbol: s", "/a+.so: undefined symbol: s", "/a.so+: undefined symbol: s", "-.so: undefined symbol: s",
    "lib-1.so.2+x: undefined symbol: s", "/a/b.so.1-x: undefined symbol: s", "/p/é.so: undefined symbol: s",
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
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.slow  # ~1 s of CPU or more: random names
def test_the_same_groups_on_random_names(cid, seed):
    """Short random lines of the characters the patterns turn on (path and name characters,
    separators, ".so", the messages): the plain patterns are quick on them."""
    new, old = _pattern(cid), re.compile(PLAIN[cid])
    rnd = random.Random(seed)
    parts = ["/", ".", "s", "o", ".so", ".1", "a", "+", "-", "_", "9", ":", " ", "'", '"', "é", "lib",
             ": undefined symbol: ", ": cannot open shared object file"]
    for _ in range(30000):
        line = "".join(rnd.choice(parts) for _ in range(rnd.randint(0, 16)))
        if rnd.random() < 0.7:
            line += rnd.choice([": undefined symbol: x", ": cannot open shared object file", ""])
        a, b = new.search(line), old.search(line)
        assert (a.groupdict() if a else None) == (b.groupdict() if b else None), line


@pytest.mark.parametrize("cid", sorted(PLAIN))
@pytest.mark.parametrize("run", ["q-" * 32000, "/q" * 32000, "/a" * 32000 + ".so", "q." * 32000 + "so",
                                 "/" + ".so" * 20000, "q" + ".so" * 20000, "/a" + ".so" * 20000 + "!",
                                 "-" + ".so" * 20000 + "+x", ".so" * 20000 + ".1" * 5000])
def test_a_crafted_long_run_is_read_in_linear_time(cid, run):
    needle = ": cannot open shared object file" if "missing" in cid else ": undefined symbol: x"
    pattern = _pattern(cid)
    started = time.process_time()
    for line in (run, run + needle):
        pattern.search(line)
    assert time.process_time() - started < 2.0  # the plain patterns: 2.5 to 24 s of CPU here
