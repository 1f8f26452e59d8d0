"""doctor/rules/python.py: the target interpreter."""
import pytest

from doctor.rules import python as rules

from .build import absent, context, expect, facts, judge, python, release


def test_site_packages_only_is_information():
    ctx = context(facts(python=python(source="site-packages", found=False, sys_path=["/sp"])))
    f = expect(judge(rules.python_interpreter, ctx), "python.interpreter", "info")
    assert f.observed == "/sp"
    absent(judge(rules.python_version, ctx), "python.version")
    absent(judge(rules.python_arch, ctx), "python.arch")
    absent(judge(rules.python_glibc, ctx), "python.glibc")
    for check in (rules.python_version, rules.python_arch, rules.python_glibc):
        assert judge(check, ctx) == []


def test_an_interpreter_that_does_not_run_fails():
    ctx = context(facts(python=python(found=False, error="exec format error")))
    f = expect(judge(rules.python_interpreter, ctx), "python.interpreter", "fail")
    assert f.fixable == "manual" and f.observed == "exec format error"
    for check in (rules.python_version, rules.python_arch, rules.python_glibc):
        assert judge(check, ctx) == []


def test_a_running_interpreter_has_no_interpreter_finding():
    absent(judge(rules.python_interpreter, context()), "python.interpreter")
    assert judge(rules.python_interpreter, context(facts(python=None))) == []


@pytest.mark.parametrize("version,status", [("3.11.7", "ok"), ("3.9.0", "ok"), ("3.12.1", "fail")])
def test_version_against_the_release(version, status):
    row = release(python=">=3.9,<3.12", requires_python=">=3.9,<3.12")
    f = expect(judge(rules.python_version, context(facts(python=python(version=version)), row=row)), "python.version", status)
    assert f.observed == version


def test_version_outside_the_docs_range_but_installable_warns():
    row = release(python=">=3.10,<3.12", requires_python=">=3.9")
    f = expect(judge(rules.python_version, context(facts(python=python(version="3.9.18")), row=row)), "python.version", "warn")
    assert f.expected == ">=3.10,<3.12"


def test_version_without_a_release_is_information():
    f = expect(judge(rules.python_version, context(row=None)), "python.version", "info")
    assert "/env/bin/python" in f.title.text("en")


@pytest.mark.parametrize("machine,status", [("x86_64", "ok"), ("aarch64", "ok"), ("ppc64le", "fail")])
def test_arch(machine, status):
    expect(judge(rules.python_arch, context(facts(python=python(machine=machine)))), "python.arch", status)


def test_glibc():
    expect(judge(rules.python_glibc, context()), "python.glibc", "ok")
    f = expect(judge(rules.python_glibc, context(facts(python=python(glibc="2.28")), row=release(glibc_min="2.34"))),
               "python.glibc", "warn")
    assert f.expected == ">=2.34" and f.fixable == "manual"
    expect(judge(rules.python_glibc, context(facts(python=python(glibc="2.34")), row=release(glibc_min="2.34"))),
           "python.glibc", "ok")
    expect(judge(rules.python_glibc, context(facts(python=python(glibc=None)))), "python.glibc", "info")
