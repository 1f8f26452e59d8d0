from doctor.facts import Distribution
from doctor.rules.pipcheck import check, marker_applies, parse

LINUX_X86 = {"python_version": "3.11", "python_full_version": "3.11.7", "platform_machine": "x86_64",
             "platform_system": "Linux", "sys_platform": "linux", "os_name": "posix",
             "implementation_name": "cpython", "platform_python_implementation": "CPython",
             "implementation_version": "3.11.7", "platform_release": "", "platform_version": ""}


def dist(name, version, *requires):
    return name, Distribution(name=name, version=version, requires=list(requires))


def test_conflicts_and_missing_like_pip_check():
    dists = dict([
        dist("torch-npu", "2.7.1", "torch==2.7.1"),
        dist("torch", "2.8.0"),
        dist("vllm", "0.11.0", "torch==2.8.0", "xformers==0.0.32.post1; platform_system == \"Linux\" and platform_machine == \"x86_64\"",
             "pandas; extra == \"bench\"", "importlib_metadata; python_version < \"3.10\""),
        dist("vllm-ascend", "0.11.0rc3", "numpy<2.0.0", "torch==2.7.1"),
        dist("numpy", "2.1.0"),
    ])
    found = {(c.requirer, c.required, c.installed) for c in check(dists, LINUX_X86)}
    assert found == {
        ("torch-npu", "torch", "2.8.0"),
        ("vllm", "xformers", None),
        ("vllm-ascend", "numpy", "2.1.0"),
        ("vllm-ascend", "torch", "2.8.0"),
    }


def test_markers_follow_the_target_interpreter():
    arm = dict(LINUX_X86, platform_machine="aarch64")
    dists = dict([dist("vllm", "0.11.0", "xformers==0.0.32; platform_machine == \"x86_64\"")])
    assert check(dists, arm) == []
    assert len(check(dists, LINUX_X86)) == 1


def test_local_versions_and_prereleases_satisfy_like_pip():
    dists = dict([dist("torch-npu", "2.7.1", "torch==2.7.1"), dist("torch", "2.7.1+cpu"),
                  dist("x", "1", "vllm-ascend>=0.11.0rc1"), dist("vllm-ascend", "0.11.0rc3")])
    assert check(dists, LINUX_X86) == []


def test_parse_forms():
    assert parse("torch (==2.7.1)") == ("torch", "==2.7.1", None, False)
    assert parse("Foo_Bar[x,y]>=1.0; python_version>'3.8'")[:3] == ("foo-bar", ">=1.0", "python_version>'3.8'")
    assert parse("pkg @ https://example.invalid/pkg.whl")[3] is True
    assert marker_applies('extra == "dev"', LINUX_X86) is False
    # an "or" with another clause: evaluated, with no extra requested
    assert marker_applies("python_version >= '3.8' or extra == \"dev\"", LINUX_X86) is True


def _facts(dists, markers):
    from doctor.facts import Facts, HostFacts, PackagesFacts, PythonFacts

    return Facts(tool_version="t", collected_at="now", host=HostFacts(root="/", cwd="/", uid=0, gids=[0]),
                 python=PythonFacts(source="interpreter", markers=markers), packages=PackagesFacts(dists=dists))


def test_results_are_cached_by_their_inputs(tmp_path, monkeypatch):
    """The check use case caches pip check's answer on disk; the rule itself stays pure."""
    from doctor.usecases.check import cached_pip_conflicts

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    dists = dict([dist("torch-npu", "2.7.1", "torch==2.7.1"), dist("torch", "2.8.0")])
    first = cached_pip_conflicts(_facts(dists, LINUX_X86))
    assert first == check(dists, LINUX_X86)
    assert list((tmp_path / "ascend-doctor" / "pipcheck").glob("*.json"))
    assert cached_pip_conflicts(_facts(dists, LINUX_X86)) == first and first[0].installed == "2.8.0"
    # another environment is another key: the fixed torch gives no conflict, not the cached one
    fixed = dict([dist("torch-npu", "2.7.1", "torch==2.7.1"), dist("torch", "2.7.1")])
    assert cached_pip_conflicts(_facts(fixed, LINUX_X86)) == []
    assert cached_pip_conflicts(_facts(dists, dict(LINUX_X86, platform_machine="aarch64"))) == first
    assert len(list((tmp_path / "ascend-doctor" / "pipcheck").glob("*.json"))) == 3
