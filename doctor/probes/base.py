"""What a probe is: a named reader of one part of the host, behind the Host interface.

A probe reads through ``Host`` (files under ``--root``, the environment, commands that belong
to the live host) and returns the facts of its section; it never judges. ``after`` names the
probes whose facts it reads; a probe that waits on a process (``waits``) runs in a thread of its
own so that the others go on meanwhile. An exception becomes a ProbeError fact.
"""
from __future__ import annotations

from doctor.record import field, record
from typing import Callable, List, Optional, Tuple

from doctor.facts import Facts
from doctor.shell.host.root import Host


@record
class ProbeOptions:
    python: Optional[str] = None  # --python
    site_packages: List[str] = field(default_factory=list)  # --site-packages (no interpreter)
    npu_smi_timeout: float = 5.0
    npu_smi: Optional[str] = None  # --npu-smi PATH: the binary the user named (runs even with --root)
    python_timeout: float = 15.0
    serve_args: Optional[str] = None  # --serve-args: the user's `vllm serve ...` command line
    serve_args_file: Optional[str] = None  # --serve-args-file: a file holding it (or a launch script)
    mooncake_master: Optional[str] = None  # --mooncake-master host:port[:metrics_port]
    mooncake_timeout: float = 2.0  # per network call to the master
    hccn_tool: Optional[str] = None  # --hccn-tool: run this hccn_tool (else only on the live host)
    hccn_timeout: float = 5.0  # per hccn_tool call
    ping_npu: List[str] = field(default_factory=list)  # --ping-npu DEVICE:ADDRESS (fleet check --ping)
    model: Optional[str] = None  # --model: the model directory to check
    verify_weights: bool = False  # --verify-weights: hash a sample of the shards
    verify_sample: int = 3  # shards hashed by --verify-weights (0: every shard with a known hash)
    progress: Optional[Callable[[str, int, int], None]] = None  # (label, done, total) for long reads
    stage: str = "auto"  # --stage: network probes (the Mooncake master) belong to the runtime stage
    skip_idle: bool = False  # check: a probe whose layer has no input is not run (doctor/probes/inputs.py)


@record(frozen=True)
class Probe:
    name: str  # the Facts attribute it fills, and its timing key (probe.<name>)
    layer: str  # the layer left unchecked when it crashes
    run: Callable[[Host, Facts, ProbeOptions], object]
    after: Tuple[str, ...] = ()  # probes whose facts it reads
    waits: bool = False  # waits on an external process: give it a thread
