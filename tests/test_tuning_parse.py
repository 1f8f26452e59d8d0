"""Pure parsers of the tuning layer: /proc and /sys text, the serve command, safetensors
headers, and the launch-script patcher (fix --tuning-patch)."""
import json
import struct

import pytest

from doctor.findings import Edit
from doctor.parse import procfs, safetensors, serving
from doctor.parse.serveargs import parse_command
from doctor.plan.tuning_patch import PatchError, apply_edits, unified_diff
from fakehost import fixture
from fakehost.tuning import DOCKER_SHM, limits, meminfo, mounts


def test_recorded_limits_meminfo_and_mounts():
    assert procfs.parse_limits(fixture("proc/limits-dev.txt")) == {"nofile": [20000, 20000], "memlock": [8388608, 8388608]}
    assert procfs.parse_limits(limits(nofile=(1024, None), memlock=(None, None))) == {
        "nofile": [1024, None], "memlock": [None, None]}
    info = procfs.parse_meminfo(meminfo(swap_kb=4096, hugepages=10, hugepages_free=3))
    assert (info["SwapTotal"], info["HugePages_Total"], info["HugePages_Free"], info["Hugepagesize"]) == (4096, 10, 3, 2048)
    assert procfs.parse_mount(mounts(), "/dev/shm")["size_bytes"] == 24683656 * 1024
    docker = procfs.parse_mount(mounts(DOCKER_SHM), "/dev/shm")
    assert docker["fstype"] == "tmpfs" and docker["size_bytes"] == 64 * 1024 * 1024
    assert procfs.parse_mount(mounts(), "/nowhere") is None


def test_small_sysfs_values():
    assert procfs.parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert procfs.parse_cpulist("garbage,2") == [2]
    assert procfs.thp_choice("always [madvise] never\n") == "madvise"
    assert procfs.hypervisor(fixture("proc/cpuinfo-x86-kvm.txt")) is True
    assert procfs.hypervisor("processor : 0\nflags : fpu sse2\n") is False
    assert procfs.hypervisor("processor\t: 0\nFeatures\t: fp asimd\n") is None  # ARM does not say
    assert procfs.parse_size("65536k") == 64 << 20 and procfs.parse_size("1g") == 1 << 30
    assert procfs.parse_size("banana") is None


def _spec(text):
    cmd = parse_command(text)
    options = dict(cmd.options)
    if cmd.kv_config is not None:
        options["kv-transfer-config"] = cmd.kv_config
    return serving.spec(options, serving.positional_model(cmd.argv))


def test_serve_spec_reads_flags_like_vllm():
    sp = _spec("vllm serve /m -tp 4 --pipeline-parallel-size 2 --dtype BFloat16 --max-model-len 32k --no-enable-prefix-caching "
               "--enable-chunked-prefill --enforce-eager --gpu-memory-utilization 0.8 "
               "--additional-config '{\"enable_cpu_binding\": false}' --kv-transfer-config '{\"kv_role\": \"kv_producer\"}'")
    assert (sp.tp, sp.pp, sp.ranks, sp.dtype, sp.max_model_len) == (4, 2, 8, "bfloat16", 32000)
    assert sp.prefix_caching is False and sp.chunked_prefill is True and sp.enforce_eager and not sp.graph_mode
    assert sp.gpu_memory_utilization == 0.8 and sp.cpu_binding is False and sp.kv_role == "kv_producer"
    assert sp.model == "/m"
    plain = _spec("vllm serve Qwen/Qwen3-8B --max-model-len 32K --enable-prefix-caching false "
                  "--additional-config.enable_cpu_binding=true")
    assert plain.max_model_len == 32768 and plain.prefix_caching is False and plain.cpu_binding is True
    assert plain.graph_mode and plain.ranks == 1
    assert _spec("vllm serve m --compilation-config '{\"cudagraph_mode\": \"NONE\"}'").graph_mode is False


def _safetensors(tensors):
    header = {}
    offset = 0
    for name, size in tensors.items():
        header[name] = {"dtype": "F16", "shape": [size // 2], "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + b"\0" * offset


def test_safetensors_header_gives_the_complete_size():
    data = _safetensors({"a.weight": 16, "b.weight": 8})
    n = safetensors.header_length(data[:8])
    head = safetensors.parse_header(n, data[8:8 + n])
    assert head.tensors == ["a.weight", "b.weight"] and head.file_size == len(data)
    with pytest.raises(safetensors.HeaderError):
        safetensors.parse_header(n, data[8:8 + n // 2])
    with pytest.raises(safetensors.HeaderError):
        safetensors.header_length(b"\xff" * 8)


SCRIPT = """#!/bin/bash
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export TASK_QUEUE_ENABLE=0
vllm serve /opt/models/Qwen2p5-7B-Instruct/ \\
  --dtype bfloat16 \\
  --tensor-parallel-size 1 \\
  --block-size 16 \\
  --max-model-len 32768
"""


def test_patch_exports_unsets_and_flags():
    new = apply_edits(SCRIPT, [Edit("unset", "TASK_QUEUE_ENABLE"), Edit("export", "HCCL_OP_EXPANSION_MODE", "AIV"),
                               Edit("export", "ASCEND_RT_VISIBLE_DEVICES", "0,1"), Edit("flag", "dtype", "float16"),
                               Edit("flag", "enforce-eager"), Edit("drop", "block-size"),
                               Edit("unset", "ASCEND_LAUNCH_BLOCKING")])
    assert new.splitlines() == [
        "#!/bin/bash", "export ASCEND_RT_VISIBLE_DEVICES=0,1", "export HCCL_OP_EXPANSION_MODE=AIV",
        "unset ASCEND_LAUNCH_BLOCKING", "vllm serve /opt/models/Qwen2p5-7B-Instruct/ \\", "  --enforce-eager \\",
        "  --dtype float16 \\", "  --tensor-parallel-size 1 \\", "  --max-model-len 32768"]
    diff = unified_diff(SCRIPT, new, "launch.sh")
    assert diff.startswith("--- a/launch.sh\n+++ b/launch.sh\n") and "-export TASK_QUEUE_ENABLE=0\n" in diff


def test_patch_one_line_commands_inline_variables_and_the_last_flag():
    one = "VLLM_USE_V1=0 vllm serve m --block-size 16 --max-model-len 8192\n"
    assert apply_edits(one, [Edit("unset", "VLLM_USE_V1"), Edit("drop", "block-size"), Edit("flag", "max-model-len", "4096"),
                             Edit("flag", "dtype", "float16")]) == "vllm serve m --max-model-len 4096 --dtype float16\n"
    last = "vllm serve m \\\n  --tp 2 \\\n  --block-size 16\n"
    assert apply_edits(last, [Edit("drop", "block-size")]) == "vllm serve m \\\n  --tp 2\n"
    value = apply_edits("vllm serve m\n", [Edit("export", "LD_PRELOAD", "/usr/lib/$(uname -m)-linux-gnu/libjemalloc.so.2")])
    assert value.splitlines()[0] == 'export LD_PRELOAD="/usr/lib/$(uname -m)-linux-gnu/libjemalloc.so.2"'
    with pytest.raises(PatchError):
        apply_edits("echo hello\n", [Edit("flag", "dtype", "float16")])


@pytest.mark.parametrize("script", [
    "export VLLM_USE_V1=0\nvllm serve m --block-size 16",  # the command is the last line, no newline after it
    "#!/bin/sh\nvllm serve m \\\n  --block-size 16",
    "#!/bin/sh\nvllm serve m --block-size 16\necho done",  # a last line the edits leave alone
])
def test_patch_of_a_script_without_a_final_newline_applies(tmp_path, script):
    """A launch script whose last line has no newline: the diff said nothing of it and the real
    patch tool refused it ('malformed patch'), so the command fix printed to apply it failed."""
    import subprocess

    new = apply_edits(script, [Edit("unset", "VLLM_USE_V1"), Edit("flag", "block-size", "128")])
    (tmp_path / "launch.sh").write_text(script)
    (tmp_path / "p.diff").write_text(unified_diff(script, new, "launch.sh"))
    done = subprocess.run(["patch", "-p1", "-d", str(tmp_path), "-i", str(tmp_path / "p.diff")], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "launch.sh").read_text() == new


def test_patch_drops_a_flag_only_inside_the_serve_command():
    script = "vllm serve m \\\n  --tp 2\n# retry: vllm serve m --block-size 16\n"
    assert apply_edits(script, [Edit("drop", "block-size")]) == script


def test_model_probe_on_a_handmade_directory(tmp_path):
    """The probe without transformers (tests/test_tuning_model.py runs real ones): shards from
    the index, their sizes from the headers, published hashes from a sha256sum file."""
    import hashlib

    from doctor.probes.model import probe_model

    one, two = _safetensors({"model.layers.0.w": 16}), _safetensors({"model.layers.1.w": 16, "lm_head.weight": 8})
    (tmp_path / "a.safetensors").write_bytes(one)
    (tmp_path / "b.safetensors").write_bytes(two[:-4])  # cut short
    index = {"metadata": {"total_size": 40}, "weight_map": {
        "model.layers.0.w": "a.safetensors", "model.layers.1.w": "b.safetensors", "lm_head.weight": "b.safetensors",
        "model.layers.2.w": "c.safetensors"}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "num_hidden_layers": 3, "torch_dtype": "float16"}))
    (tmp_path / "SHA256SUMS").write_text(f"{hashlib.sha256(one).hexdigest()}  a.safetensors\n")
    m = probe_model("m", str(tmp_path), "--model", verify=True, sample=0)
    shards = {s.name: s for s in m.shards}
    assert m.index_layers == 3 and m.config["num_hidden_layers"] == 3
    assert shards["a.safetensors"].expected_size == len(one) and shards["a.safetensors"].hash_source == "SHA256SUMS"
    assert shards["b.safetensors"].size == len(two) - 4 and shards["b.safetensors"].expected_size == len(two)
    assert not shards["c.safetensors"].exists
    assert [(c.name, c.actual == c.expected) for c in m.verified] == [("a.safetensors", True)]
