"""check never imports torch, torch_npu, vllm or mooncake in its own process, even when it could."""
import json
import subprocess
import sys
from pathlib import Path

from fakehost.torchenv import torch_python

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import json, sys
from doctor.cli.main import main
try:
    main(["check", "--json", "--python", sys.argv[1]])
except SystemExit:
    pass
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"torch", "torch_npu", "vllm", "vllm_ascend", "mooncake", "rich"})
print(json.dumps(heavy), file=sys.stderr)
"""


def test_check_imports_nothing_heavy(tmp_path):
    python = torch_python()
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    # torch is importable by the doctor's own interpreter here: it still must not import it.
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{ROOT}:{site}", "HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", PROBE, str(python)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    doc = json.loads(proc.stdout)
    assert any(f["id"] == "torch.version" for f in doc["findings"])  # it did look at torch
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []  # ...through metadata only; no rich for --json
