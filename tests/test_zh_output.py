"""The Chinese reports say everything in Chinese (issue 10): on every kit scenario, check's text
and JSON (titles, hints, command labels) and fix's plan leave no English word but what a Chinese
engineer reads as a name: products and packages, versions, finding ids and layer names, paths,
URLs, options, commands on their own lines, and quoted output of other tools ("…"). Punctuation
is full-width next to Chinese, and no report cites a path of the doctor's own development.
"""
from __future__ import annotations

import json
import re

import pytest
from kitrun import kit_run, names, normalise

from doctor.i18n import HERE, load_files

# Names, not words: products, packages, tools and the terms Ascend's own Chinese documentation
# leaves in English.
NAMES = set("""
    vllm vLLM torch torchvision torchaudio torch_npu triton xformers flashinfer numpy transformers memfabric
    memcache hybrid pip wheel Python python CPU CUDA NPU HBM GB MB KB CANN HDK NNAL ATB ops kernels toolkit Ascend
    ascend glibc Mooncake mooncake KV Cache PD Dockerfile ENV entrypoint docker GitHub DCMI root HwHiAiUser Atlas
    Duo OK Warning Alarm Critical ON any empty source import dist info nvidia ROCm
    driver firmware cann devices env tuning smoke hccn runtime build PYTHONPATH shell site-packages Version reboot
""".split())
# a program followed by its subcommand, named in prose
COMMAND_NAMES = re.compile(r"\b(pip (check|install)|npu-smi info|docker run|ascend-doctor \w+|source)\b")
TOKENS = re.compile(
    r"https?://\S+"                 # URLs
    r"|“[^”]*”|\"[^\"]*\"|'[^']*'|`[^`]*`"  # quoted output of other tools, code
    r"|[^\s（），、；：]*<[^<>\s]+>[^\s（），、；：]*"  # words with placeholders (file name patterns)
    r"|\[[a-z/]+\]"                 # plan step kinds
    r"|(?<![\w/])[~.]?/[^\s（），、；：]*"  # paths
    r"|--?[A-Za-z][\w-]*(=\S*)?"    # options
    r"|\S*=\S*"                     # VAR=value
    r"|[\w.+-]*\d[\w.+<>=!*-]*"     # versions and ids with digits
    r"|\b[A-Za-z_]+[._:][\w.:-]*"   # finding ids, modules, entry points, file names
    r"|\b[\w-]+-[\w-]+\b"           # package names with hyphens
)
CJK = re.compile(r"[\u3400-\u9fff]")


def english_words(line: str):
    line = re.sub(r"^[✓✗!i-] ", " ", line)  # the status symbol of a report line
    line = COMMAND_NAMES.sub(" ", TOKENS.sub(" ", line))
    return [w for w in re.findall(r"[A-Za-z]+", line) if w not in NAMES]


def zh_texts(name: str):
    """(where, text) for everything a zh report shows in words."""
    run = kit_run(name)
    commands = set()
    doc = json.loads(run.out["check.zh.json"][1])
    for f in doc["findings"]:
        for c in f.get("commands", []):
            commands.add(c["shell"])
            if c.get("label"):
                yield f"check.zh.json {f['id']} label", c["label"]
        yield f"check.zh.json {f['id']} title", f["title"]
        if f["hint"]:
            yield f"check.zh.json {f['id']} hint", f["hint"]
    plan = json.loads(run.out["fix.json"][1])
    for s in plan["steps"]:
        if s.get("command"):
            commands.add(s["command"])
        if s.get("argv"):
            commands.add(" ".join(s["argv"]))
    for a in plan.get("alternatives") or []:
        commands.add(a["command"])
    for key in ("check.zh.txt", "fix.zh.txt"):
        for line in run.out[key][1].splitlines():
            stripped = line.strip()
            if re.match(r"^((\S*/)?ascend-doctor |source |export |unset |npu-smi |RUN |FROM |\S*/python\S* -m pip |python3 -m pip )", stripped):
                continue  # a command line (tests/test_printed_commands.py runs it)
            if re.match(r"^\S+\s{2,}\S+$", line.strip()) and not CJK.search(line):
                continue  # a pin of the plan: name and version
            yield key, line


@pytest.mark.parametrize("name", names())
def test_no_english_left_in_the_chinese_reports(name):
    bad = [f"{where}: {words} in {text!r}" for where, text in zh_texts(name) for words in [english_words(text)] if words]
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("name", names())
def test_no_report_cites_the_doctors_own_development(name):
    run = kit_run(name)
    for key, (_, text, err) in run.out.items():
        text, err = (normalise(x, run.fake) for x in (text, err))  # the scenario's own directory aside
        for internal in ("tests/data", "tests/fakehost", "facts/", "shared/", "seed 00", "seed_00"):
            assert internal not in text + err, f"{name}/{key} cites {internal}"


def test_the_check_catches_english():
    assert english_words("只有预期内的残留：vllm 0.11.0 requires torch==2.8.0, but you have torch 2.7.1") == \
        ["requires", "but", "you", "have"]
    assert english_words("需要 2.7.1 or 2.7.1.post1") == ["or"]
    assert english_words("npu-smi info 执行失败：“dcmi module initialize failed. ret is -8005”") == []
    assert english_words("✓ driver、firmware、cann（7 项检查）") == []


def test_chinese_messages_use_full_width_punctuation():
    """Next to Chinese text: （）rather than (), ，；：rather than ,;: — code, placeholders and
    quoted literals aside."""
    bad = []
    for key, entry in load_files(HERE.glob("*.toml")).items():
        zh = re.sub(r"\{[^{}]*\}|`[^`]*`|“[^”]*”|'[^']*'|\"[^\"]*\"", "X", entry["zh"])
        zh = re.sub(r"\w+\(\)", "X", zh)  # get_ip(), bool(): code
        if re.search(r"[\u3400-\u9fff][,;!?]|[\u3400-\u9fff]: ", zh) or re.search(r"\([^()]*[\u3400-\u9fff][^()]*\)", zh):
            bad.append(f"{key}: {entry['zh']}")
    assert not bad, "\n".join(bad)
