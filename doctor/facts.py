"""Everything the probes observed, as one serialisable object (the snapshot, docs/snapshot.md).

Probes fill these; rules read them and never touch the host. A probe that crashed leaves its
section as None and records a :class:`ProbeError`.
"""
from __future__ import annotations

import re
from doctor.record import field, record
from typing import Any, Dict, List, Optional

SNAPSHOT_SCHEMA_VERSION = 1


@record
class CommandFact:
    """One external command run with a timeout."""

    argv: List[str]
    found: bool = True
    returncode: Optional[int] = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: Optional[str] = None  # could not start it (permission, exec format...)
    duration_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return self.found and not self.timed_out and self.error is None and self.returncode == 0


@record
class HostFacts:
    root: str
    cwd: str
    uid: int
    gids: List[int]
    user: str = ""
    groups: Dict[str, int] = field(default_factory=dict)  # /etc/group of the root: name -> gid
    machine: str = ""  # arch of the machine the doctor runs on
    in_container: bool = False
    doctor_python: str = ""  # the doctor's own interpreter: its pip drives a target without pip


@record
class DeniedPath:
    """A host file or directory this process was not allowed to read (EACCES/EPERM), and who
    may: the doctor says which path and which group to join, not "missing"."""

    path: str  # what the probe wanted to read
    refused_by: str  # the path itself, or a directory above it that may not be searched
    is_dir: bool = False  # refused_by is a directory
    mode: int = 0  # permission bits of refused_by
    uid: int = -1
    gid: int = -1
    owner: str = ""
    group: str = ""  # the group that may read it (/etc/group of the root), "" if unknown


@record
class DriverFacts:
    install_info_path: str
    install_info_found: bool = False
    install_info: Dict[str, str] = field(default_factory=dict)
    base: str = "/usr/local/Ascend"  # Driver_Install_Path_Param
    version_path: str = ""
    found: bool = False
    version: Optional[str] = None
    package_version: Optional[str] = None
    innerversion: Optional[str] = None
    compatible_fw: List[List[str]] = field(default_factory=list)
    malformed: Optional[str] = None  # why version.info could not be used
    denied: Optional[DeniedPath] = None  # version.info exists but may not be read by this user
    lib_dir: str = ""
    hal_lib_found: bool = False
    dcmi_found: bool = False


@record
class FirmwareFacts:
    version_path: str
    found: bool = False
    version: Optional[str] = None
    package_version: Optional[str] = None
    compatible_drv: List[List[str]] = field(default_factory=list)
    malformed: Optional[str] = None
    denied: Optional[DeniedPath] = None


@record
class NnalFacts:
    found: bool = False
    path: str = ""
    version: Optional[str] = None
    set_env: Optional[str] = None
    malformed: Optional[str] = None  # why the version in latest/version.info cannot be used


@record
class CannFacts:
    found: bool = False
    home: Optional[str] = None  # the toolkit home used (ASCEND_HOME_PATH or a default path)
    real_home: Optional[str] = None  # the same with symlinks resolved (cann -> cann-8.5.0)
    how: str = ""  # which rule found it: "ASCEND_HOME_PATH", "/usr/local/Ascend/cann", ...
    layout: Optional[str] = None  # "ascend-toolkit" (<= 8.3) or "cann" (>= 8.5)
    version: Optional[str] = None
    arch: Optional[str] = None
    innerversion: Optional[str] = None
    install_info_path: Optional[str] = None
    malformed: Optional[str] = None
    components: Dict[str, str] = field(default_factory=dict)  # version.cfg: component -> version
    ops_found: bool = False
    ops_package: Optional[str] = None
    ops_version: Optional[str] = None
    ops_path: Optional[str] = None
    ops_malformed: Optional[str] = None  # why the ops/kernels version file cannot be used
    libs: Dict[str, bool] = field(default_factory=dict)  # libascendcl.so, libhccl.so present?
    set_env: Optional[str] = None
    other_versions: List[str] = field(default_factory=list)
    searched: List[str] = field(default_factory=list)
    denied: Optional[DeniedPath] = None  # the toolkit (a home or its version file) may not be read
    nnal: NnalFacts = field(default_factory=NnalFacts)


@record
class DeviceNode:
    path: str
    exists: bool = False
    mode: int = 0
    uid: int = -1
    gid: int = -1
    group: str = ""
    accessible: bool = False  # read+write for the doctor's user


@record
class Chip:
    npu: int
    chip: int
    name: str
    health: str
    phy_id: Optional[int] = None  # A3 "Chip Phy-ID" / 310P "Device": the /dev/davinciN index
    bus_id: str = ""
    hbm_used_mb: Optional[int] = None
    hbm_total_mb: Optional[int] = None
    memory_total_mb: Optional[int] = None


@record
class NpuProcess:
    npu: int
    chip: int
    pid: int
    name: str
    memory: str


@record
class NpuSmiInfo:
    tool_version: Optional[str] = None
    driver_version: Optional[str] = None
    layout: str = ""  # "910B" (A2), "A3", "310P", "910" (first generation), "" unknown
    chips: List[Chip] = field(default_factory=list)
    processes: List[NpuProcess] = field(default_factory=list)


@record
class DevicesFacts:
    davinci: List[DeviceNode] = field(default_factory=list)  # /dev/davinciN, numeric order
    management: List[DeviceNode] = field(default_factory=list)  # davinci_manager, devmm_svm, hisi_hdc
    npu_smi_path: Optional[str] = None
    npu_smi: Optional[CommandFact] = None
    npu_smi_info: Optional[NpuSmiInfo] = None
    npu_smi_timeout_s: float = 5.0


@record
class PythonFacts:
    source: str  # "interpreter", "site-packages" or "image" (derived from an image's files, not run)
    executable: Optional[str] = None
    found: bool = False
    error: Optional[str] = None
    version: Optional[str] = None  # 3.11.7
    implementation: Optional[str] = None
    machine: Optional[str] = None
    glibc: Optional[str] = None
    prefix: Optional[str] = None
    base_prefix: Optional[str] = None
    externally_managed: bool = False  # PEP 668: outside a venv, its stdlib has EXTERNALLY-MANAGED
    sys_path: List[str] = field(default_factory=list)
    markers: Dict[str, str] = field(default_factory=dict)  # PEP 508 marker environment


@record
class Distribution:
    name: str  # canonical (PEP 503) name
    version: str
    display_name: str = ""
    location: str = ""  # directory holding the metadata (a sys.path entry)
    metadata_path: str = ""
    requires: List[str] = field(default_factory=list)
    requires_python: Optional[str] = None
    editable: bool = False
    direct_url: Optional[str] = None
    installer: Optional[str] = None
    entry_points: Dict[str, Dict[str, str]] = field(default_factory=dict)  # group -> name -> value
    details: Dict[str, str] = field(default_factory=dict)  # torch build: cuda/hip/git_version


@record
class PackagesFacts:
    paths: List[str] = field(default_factory=list)  # where distributions were looked for
    dists: Dict[str, Distribution] = field(default_factory=dict)
    shadowed: List[Distribution] = field(default_factory=list)  # later copies on sys.path
    malformed: List[str] = field(default_factory=list)  # "<file>: <why>" metadata that cannot be used


@record
class ShadowFact:
    name: str  # vllm / vllm_ascend / torch_npu ...
    path: str
    is_package: bool  # has __init__.py (else a namespace-package trap)
    same_as_installed: bool


@record
class WorkdirFacts:
    cwd: str
    shadows: List[ShadowFact] = field(default_factory=list)


@record
class ImportLocation:
    """Where ``import <name>`` in the serving process finds a stack package (found by walking
    its sys.path the way Python's path finder does, without importing anything)."""

    name: str  # vllm / vllm_ascend / torch / torch_npu
    dist: str  # its distribution (vllm-ascend, torch-npu ...)
    found: Optional[str] = None  # the package directory (or module file) it loads; None: not importable
    entry: Optional[str] = None  # the sys.path entry that holds it
    kind: str = ""  # package / module / namespace ("" when not found)
    installed: Optional[str] = None  # where the installed distribution has it
    same_as_installed: bool = True


@record
class ImportsFacts:
    python_path: List[str] = field(default_factory=list)  # PYTHONPATH of the serving process, in order
    python_path_source: str = ""  # "environment" or the --serve-args-file that exports it
    sys_path: List[str] = field(default_factory=list)  # the search path walked (PYTHONPATH first)
    located: List[ImportLocation] = field(default_factory=list)


@record
class ElfFacts:
    """The dynamic section of one shared object (read without loading it)."""

    path: str
    error: Optional[str] = None  # not an ELF file, truncated, unreadable
    machine: str = ""
    soname: Optional[str] = None
    needed: List[str] = field(default_factory=list)
    rpath: List[str] = field(default_factory=list)
    runpath: List[str] = field(default_factory=list)
    ascend_strings: bool = False  # "AscendDirectTransport" compiled in (glog keeps source names)


@record
class LibLookup:
    """Where the dynamic loader would find one library a Mooncake object needs."""

    name: str
    needed_by: str
    found: Optional[str] = None
    how: str = ""  # RPATH / LD_LIBRARY_PATH / RUNPATH / ld.so.cache / default
    on_disk: List[str] = field(default_factory=list)  # where it exists although not found


@record
class MooncakeDist:
    name: str
    version: str
    location: str
    installer: Optional[str] = None
    direct_url: Optional[str] = None
    owns_package: bool = False  # its RECORD lists mooncake/ files


@record
class HttpFact:
    url: str
    status: Optional[int] = None
    content_type: str = ""
    body: str = ""
    error: Optional[str] = None
    timed_out: bool = False
    elapsed_ms: float = 0.0


@record
class MasterFacts:
    address: str
    source: str  # --mooncake-master / MOONCAKE_MASTER / mooncake.json
    host: str = ""
    port: int = 0  # RPC port (0: only the metrics URL was given)
    metrics_url: str = ""
    error: Optional[str] = None  # the address could not be used
    timeout_s: float = 2.0
    tcp_ok: bool = False
    tcp_error: Optional[str] = None
    tcp_timed_out: bool = False
    tcp_ms: float = 0.0
    health: Optional[HttpFact] = None
    metrics: Optional[HttpFact] = None
    summary: Optional[HttpFact] = None
    skipped: Optional[str] = None  # "build": named, but not contacted at the build stage


@record
class MooncakeFacts:
    dists: List[MooncakeDist] = field(default_factory=list)
    package_dir: Optional[str] = None  # the mooncake package `import mooncake` finds
    package_dirs: List[str] = field(default_factory=list)  # every copy (sys.path + CANN site-packages)
    off_path_dirs: List[str] = field(default_factory=list)  # copies not on the target's sys.path
    package_files: List[str] = field(default_factory=list)
    init_auto_generated: bool = False  # "# Auto-generated by CMake": a `make install`
    version: Optional[str] = None
    version_source: str = ""  # dist / mooncake_master --version
    master_binary: Optional[str] = None
    master_version: Optional[CommandFact] = None
    transport_files: List[str] = field(default_factory=list)  # every ascend_transport.so found
    elf: List[ElfFacts] = field(default_factory=list)
    lookups: List[LibLookup] = field(default_factory=list)
    ld_library_path: List[str] = field(default_factory=list)
    ld_missing_dirs: List[str] = field(default_factory=list)  # LD_LIBRARY_PATH entries that do not exist
    ld_cache: str = ""  # "N entries" / "missing" / an error
    config_var: Optional[str] = None  # MOONCAKE_CONFIG_PATH as set (host env or serve-args exports)
    config_path: Optional[str] = None  # resolved against the cwd
    config_found: bool = False
    config_text: Optional[str] = None
    config_error: Optional[str] = None
    mem_total_kb: Optional[int] = None
    mem_available_kb: Optional[int] = None
    serve_args: Optional[str] = None
    serve_args_source: str = ""  # --serve-args or the file name
    serve_env: Dict[str, str] = field(default_factory=dict)  # `export` lines of a serve-args file
    vllm_ascend_dir: Optional[str] = None
    connectors: Dict[str, str] = field(default_factory=dict)  # registered name -> module
    connector_files: List[str] = field(default_factory=list)
    vllm_ascend_modules: List[str] = field(default_factory=list)  # vllm_ascend.distributed.*
    vllm_connectors: Dict[str, str] = field(default_factory=dict)  # upstream vLLM's registry
    master: Optional[MasterFacts] = None
    errors: List[str] = field(default_factory=list)  # parts of the probe that failed


@record
class HccnDevice:
    """One NPU's network port as ``hccn_tool -i N`` reports it (N: the /dev/davinciN index)."""

    device: int
    link: Optional[str] = None  # UP / DOWN
    net_health: Optional[str] = None  # Success / Init / Fault / Socket fail ...
    ip: Optional[str] = None
    netmask: Optional[str] = None
    gateway: Optional[str] = None
    netdetect: Optional[str] = None
    lldp_ifname: Optional[str] = None  # the switch port it is cabled to
    lldp_system: Optional[str] = None
    tls_switch: Optional[int] = None  # 0 disabled, 1 enabled
    tls_expiration: List[int] = field(default_factory=list)  # per certificate: 0 ok, 1 near, 2 expired
    vnic_link: Optional[str] = None  # A3
    vnic_ip: Optional[str] = None
    spod: Dict[str, int] = field(default_factory=dict)  # A3: SDID, Super Pod ID, Server Index ...
    commands: Dict[str, CommandFact] = field(default_factory=dict)  # query (link, ip, ...) -> the run
    skipped: List[str] = field(default_factory=list)  # queries not run after a timeout on this device


@record
class NpuPing:
    """``hccn_tool -i N -ping -g address X`` (A3: ``-hccs_ping``) towards another node's NPU."""

    device: int
    address: str
    target: str = ""  # the node that holds the address
    transmitted: Optional[int] = None
    received: Optional[int] = None
    command: Optional[CommandFact] = None


@record
class HccnFacts:
    """The node's networks: the NPU ports (hccn_tool, /etc/hccn.conf) and the host interfaces
    the control plane (HCCL_IF_IP, *_SOCKET_IFNAME, the data-parallel master) uses."""

    hostname: str = ""
    tool: Optional[str] = None  # the hccn_tool that ran
    tool_how: str = ""  # "PATH" / "driver tools" / "--hccn-tool"
    not_run: Optional[str] = None  # "not found" / "not the live host" when hccn_tool did not run
    timeout_s: float = 5.0
    devices: List[HccnDevice] = field(default_factory=list)
    conf_path: str = "/etc/hccn.conf"
    conf_found: bool = False
    conf: Dict[str, Dict[str, str]] = field(default_factory=dict)  # device id -> key -> value
    conf_bad_lines: List[str] = field(default_factory=list)
    interfaces: Optional[Dict[str, List[str]]] = None  # host NIC -> addresses (None: unreadable)
    interfaces_up: Dict[str, str] = field(default_factory=dict)  # NIC -> /sys/class/net operstate
    pings: List[NpuPing] = field(default_factory=list)  # filled by `fleet check --ping`
@record
class MountFact:
    """One line of /proc/mounts (the /dev/shm entry: its tmpfs size decides multi-process serving)."""

    path: str
    fstype: str = ""
    options: Dict[str, str] = field(default_factory=dict)  # size=64m -> {"size": "64m"}; flags -> ""
    size_bytes: Optional[int] = None


@record
class ServeFacts:
    """The user's vllm serve command as the tuning layer reads it (--serve-args / --serve-args-file)."""

    source: str  # "--serve-args" or the file name
    argv: List[str] = field(default_factory=list)  # the command, secrets redacted
    options: Dict[str, str] = field(default_factory=dict)  # --long-option -> last value ("true" for flags)
    exports: Dict[str, str] = field(default_factory=dict)  # variables the script sets for the command
    model: Optional[str] = None  # positional model (or --model)
    error: Optional[str] = None


@record
class TuningFacts:
    """Host settings that decide how fast (and whether) serving runs: read from /proc and /sys
    under the root, never changed. None / empty means "not readable here" (an image, a VM without
    cpufreq, a container without /sys): the rules stay silent then."""

    governors: Dict[str, int] = field(default_factory=dict)  # scaling_governor -> number of CPUs
    cpus_online: Optional[int] = None
    hypervisor: Optional[bool] = None  # /proc/cpuinfo flags has "hypervisor"
    thp: Optional[str] = None  # transparent_hugepage/enabled: the bracketed choice
    kernel: Optional[str] = None  # /proc/sys/kernel/osrelease
    swappiness: Optional[int] = None
    numa_balancing: Optional[int] = None
    numa_nodes: Dict[str, str] = field(default_factory=dict)  # node id -> cpulist
    npu_numa: Dict[str, int] = field(default_factory=dict)  # npu-smi Bus-Id -> NUMA node (PCI sysfs)
    cpus_allowed: Optional[str] = None  # Cpus_allowed_list of this process (the container's cpuset)
    meminfo_kb: Dict[str, int] = field(default_factory=dict)  # MemTotal, SwapTotal, HugePages_*, Hugepagesize
    limits: Dict[str, List[Optional[int]]] = field(default_factory=dict)  # nofile/memlock: [soft, hard]; None = unlimited
    shm: Optional[MountFact] = None
    serve: Optional[ServeFacts] = None
    # the judged root's distribution (/etc/os-release: "apt", "yum" or "") and the jemalloc the
    # tuning guide preloads: the path of libjemalloc.so.2 found there, None when it is absent
    # or was not looked for (jemalloc_looked False: a snapshot of an older doctor)
    os_family: str = ""
    jemalloc: Optional[str] = None
    jemalloc_looked: bool = False
    errors: List[str] = field(default_factory=list)


@record
class ShardFact:
    """One weight file named by the model's index (or the single weight file)."""

    name: str
    exists: bool = False
    size: Optional[int] = None
    expected_size: Optional[int] = None  # from its safetensors header: 8 + header + data
    header_error: Optional[str] = None
    tensors: int = 0  # tensors the index maps to this file
    missing_tensors: List[str] = field(default_factory=list)  # named by the index, absent from the header (first 20)
    missing_count: int = 0
    sha256: Optional[str] = None  # a published hash found next to the model (HF metadata, sums file)
    hash_source: str = ""


@record
class WeightCheck:
    name: str
    expected: str
    actual: Optional[str] = None
    error: Optional[str] = None
    skipped: bool = False  # not hashed: --verify-weights ran past its time bound first
    seconds: float = 0.0


@record
class ModelRefusal:
    """A file name the model directory's own files gave that the doctor did not read."""

    name: str  # as written (shown escaped)
    source: str  # the file that named it (the index, a sha256sum file) or the file itself
    reason: str  # absolute | parent | control | subdir | outside | not_regular


@record
class ModelLimit:
    """One of the probe's bounds that a file of the model directory went past: not read on."""

    file: str
    bound: str  # json_bytes | json_depth | json_containers | json_values | shards | seconds | verify_seconds
    limit: int


@record
class ModelFacts:
    """The model directory given with --model (or named by the serve command)."""

    path: str
    source: str = "--model"  # or "serve-args"
    exists: bool = False
    is_dir: bool = False
    files: List[str] = field(default_factory=list)  # top-level file names (capped)
    config: Dict[str, Any] = field(default_factory=dict)  # the scalar keys of config.json that matter
    config_error: Optional[str] = None
    index_file: Optional[str] = None
    index_error: Optional[str] = None
    index_total_size: Optional[int] = None
    index_layers: Optional[int] = None  # highest model.layers.N in the weight map, plus one
    shards: List[ShardFact] = field(default_factory=list)
    quant_types: List[str] = field(default_factory=list)  # quant_model_description.json values (ModelSlim)
    kv_quant_types: List[str] = field(default_factory=list)  # its kv_quant_type / kv_cache_type (C8): the KV cache's
    quant_error: Optional[str] = None
    verified: List[WeightCheck] = field(default_factory=list)  # --verify-weights
    verify_requested: bool = False
    refused: List[ModelRefusal] = field(default_factory=list)  # the first MAX_REFUSED of them
    refused_count: int = 0
    limits: List[ModelLimit] = field(default_factory=list)


@record
class ImageLayer:
    index: int  # 1 = the bottom layer
    digest: str  # the blob as stored (archive path or sha256:...)
    created_by: str = ""  # the Dockerfile step that made it ("RUN pip install ..."), "" if unknown
    size: int = -1  # bytes of the blob, when the manifest says


@record
class ImageFacts:
    """The image an image check read (docs/docker.md): what it is and where its files came from."""

    ref: str  # what the user named: the image reference or the tarball
    source: str  # "daemon" (docker SDK) or "tar"
    platform: str = ""  # linux/arm64
    machine: str = ""  # aarch64 / x86_64: what the verdict judges against
    id: str = ""  # sha256 of the config
    digest: Optional[str] = None  # repo digest (registry) or manifest digest
    names: List[str] = field(default_factory=list)  # tags the daemon or the archive gives it
    created: str = ""
    base: Optional[str] = None  # the image it was built FROM, when recorded
    base_source: str = ""  # annotation / label / official image
    official: Optional[str] = None  # quay.io/ascend/vllm-ascend:<tag> when it is (or is built on) one
    working_dir: str = ""
    user: str = ""
    layers: List[ImageLayer] = field(default_factory=list)
    dist_layers: Dict[str, int] = field(default_factory=dict)  # canonical dist name -> layer index
    available_platforms: List[str] = field(default_factory=list)
    stats: Dict[str, int] = field(default_factory=dict)  # files indexed, kept, bytes read


@record
class ProbeError:
    probe: str
    error: str


@record
class Facts:
    tool_version: str
    collected_at: str
    host: HostFacts
    schema_version: int = SNAPSHOT_SCHEMA_VERSION
    env: Dict[str, str] = field(default_factory=dict)
    driver: Optional[DriverFacts] = None
    firmware: Optional[FirmwareFacts] = None
    cann: Optional[CannFacts] = None
    devices: Optional[DevicesFacts] = None
    python: Optional[PythonFacts] = None
    packages: Optional[PackagesFacts] = None
    workdir: Optional[WorkdirFacts] = None
    imports: Optional[ImportsFacts] = None
    mooncake: Optional[MooncakeFacts] = None
    hccn: Optional[HccnFacts] = None
    tuning: Optional[TuningFacts] = None
    model: Optional[ModelFacts] = None
    image: Optional[ImageFacts] = None
    probe_errors: List[ProbeError] = field(default_factory=list)
    not_run: List[str] = field(default_factory=list)  # binaries found inside --root, never executed
    timings_ms: Dict[str, float] = field(default_factory=dict)

    def dist(self, name: str) -> Optional[Distribution]:
        if self.packages is None:
            return None
        return self.packages.dists.get(canonical(name))

    def version_of(self, name: str) -> Optional[str]:
        d = self.dist(name)
        return d.version if d else None


_CANON = re.compile(r"[-_.]+")


def canonical(name: str) -> str:
    return _CANON.sub("-", name).lower()


REDACTED = "<redacted>"


def redact_env(env: Dict[str, str]) -> Dict[str, str]:
    """Secret variables by name, credentials inside other values by shape (parse/redact.py)."""
    from doctor.parse import redact

    return redact.env(env)
