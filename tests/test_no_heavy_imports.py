"""check never imports torch, torch_npu, vllm or mooncake in its own process, even when it could."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

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


HEAVY = {"torch": ("torch", "2.13.0"), "torch_npu": ("torch-npu", "2.8.0"), "vllm": ("vllm", "0.11.0"),
         "vllm_ascend": ("vllm-ascend", "0.11.0rc3"), "mooncake": ("mooncake-transfer-engine", "0.3.6")}


def _stub_environment(tmp_path: Path) -> Path:
    """A venv (no pip) whose site-packages holds importable stand-ins of the heavy packages, with
    their metadata: what the doctor would import is there to import, at no cost."""
    venv = tmp_path / "stubs"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    for module, (dist, version) in HEAVY.items():
        (site / module).mkdir()
        (site / module / "__init__.py").write_text(f"__version__ = {version!r}\n")
        info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        (info / "RECORD").write_text("")
    return python


@pytest.mark.parametrize("target", ["stubs", pytest.param("real_torch", marks=pytest.mark.slow)])
def test_check_imports_nothing_heavy(tmp_path, target):
    """With stand-ins in the fast loop, with the real torch CPU build (883 MB, built once per
    machine) in the full suite."""
    python = torch_python() if target == "real_torch" else _stub_environment(tmp_path)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    # torch is importable by the doctor's own interpreter here: it still must not import it.
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{ROOT}:{site}", "HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", PROBE, str(python)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    doc = json.loads(proc.stdout)
    assert any(f["id"] == "torch.version" for f in doc["findings"])  # it did look at torch
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []  # ...through metadata only; no rich for --json
