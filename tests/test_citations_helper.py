from citations import unresolved


def test_urls_and_repository_files_resolve():
    assert unresolved("https://github.com/vllm-project/vllm-ascend/issues/5710") == []
    assert unresolved("matrices/vllm-ascend.toml#v0.11.0rc3; https://example.org/x") == []
    assert unresolved("README.md") == []


def test_internal_and_missing_paths_do_not():
    assert unresolved("shared/facts/formats.md 3") == ["shared/facts/formats.md 3"]
    assert unresolved("facts/mooncake.md §4") == ["facts/mooncake.md §4"]
    assert unresolved("seed 001") == ["seed 001"]
    assert unresolved("docs/sources/nothing-here.md") == ["docs/sources/nothing-here.md"]
    assert unresolved("hiascend CANN 8.5.0 release notes") == ["hiascend CANN 8.5.0 release notes"]
