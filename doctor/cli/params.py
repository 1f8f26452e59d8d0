"""Every option the commands share, declared once: its flags, its kind, its default and its help.

The typer commands build their parameters from these declarations (doctor/cli/options.py), the
check front end (doctor/entry.py) its parser from the same ones, so a default or a help text
lives in one place; a command lists the options it takes, in the order of its --help, and hands
the parsed values to the builders below, which make the objects its use case takes (one per
concern: the host to read, the image, the output). No typer here: ``check`` runs without it.
"""
from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Tuple

from doctor.limits import MAX_OPTION_SECONDS

if TYPE_CHECKING:
    from doctor.usecases.check import CheckOptions
    from doctor.usecases.image import ImageRequest

KINDS = ("str", "flag", "list", "seconds", "int", "paths")  # seconds: a float, finite and bounded; paths: a list


class Opt:
    """One option: the parameter it fills, its flags (the long one first), its kind, its
    default and its help. ``but`` is the same option with another help (or default) for a
    command that means something more specific by it."""

    __slots__ = ("name", "flags", "kind", "default", "help", "metavar", "hidden", "min")

    def __init__(self, name: str, flags: Tuple[str, ...], kind: str, default: Any, help: str,
                 metavar: Optional[str] = None, hidden: bool = False, min: Optional[float] = None) -> None:
        assert kind in KINDS, kind
        self.name, self.flags, self.kind, self.default, self.help = name, flags, kind, default, help
        self.metavar, self.hidden, self.min = metavar, hidden, min

    def but(self, **changes: Any) -> "Opt":
        values = {k: getattr(self, k) for k in self.__slots__}
        values.update(changes)
        return Opt(**values)

    def __repr__(self) -> str:
        return f"Opt({self.name!r}, {self.flags!r}, {self.kind!r}, {self.default!r})"


def out_of_range(value: Optional[float]) -> Optional[str]:
    """Why a seconds option's value is refused (nan compares false with everything, so a timeout
    of nan "fires" at once; inf and 1e18 overflow the waits), or None."""
    if value is None:
        return None
    if not math.isfinite(value):
        return f"{value} is not a finite number."
    if abs(value) > MAX_OPTION_SECONDS:
        return f"{value:g} is out of range (at most {MAX_OPTION_SECONDS:.0f} seconds)."
    return None


# -- the host to read (CheckOptions: doctor/usecases/check.py, doctor/probes/base.py) -----------
ROOT = Opt("root", ("--root",), "str", "/", "Read the host below this directory (an image, a mounted disk).")
PYTHON = Opt("python", ("--python",), "str", None, "Target interpreter (default: the active venv/conda env, else python3).")
SITE = Opt("site_packages", ("--site-packages",), "list", [], "Read packages from this directory (repeatable; no interpreter).")
SNAPSHOT = Opt("snapshot", ("--from",), "str", None, "Judge a snapshot written by `ascend-doctor snapshot`.")
STAGE = Opt("stage", ("--stage",), "str", "auto", "build: skip hardware; runtime: judge it; auto: build when no NPU is visible.")
TARGET = Opt("target", ("--target",), "str", None, "Judge against another release: vllm-ascend==X.")
MATRIX = Opt("matrix", ("--matrix",), "list", [], "Extra matrix overlay file (repeatable).")
NPU_SMI_TIMEOUT = Opt("npu_smi_timeout", ("--npu-smi-timeout",), "seconds", 5.0, "Seconds to wait for npu-smi.")
NPU_SMI = Opt("npu_smi", ("--npu-smi",), "str", None,
              "Run this npu-smi (with --root, nothing inside the root is run unless named).")
SERVE_ARGS = Opt("serve_args", ("--serve-args",), "str", None,
                 "Your `vllm serve ...` command line: its --kv-transfer-config is checked.")
SERVE_ARGS_FILE = Opt("serve_args_file", ("--serve-args-file",), "str", None,
                      "A file with the `vllm serve` command (a launch script with exports is fine).")
MOONCAKE_MASTER = Opt("mooncake_master", ("--mooncake-master",), "str", None,
                      "Probe mooncake_master: HOST:PORT[:METRICS_PORT] (metrics default 9003).")
HCCN_TOOL = Opt("hccn_tool", ("--hccn-tool",), "str", None,
                "Run this hccn_tool for the NPU network checks (default: only on the live host).")
HCCN_TIMEOUT = Opt("hccn_timeout", ("--hccn-timeout",), "seconds", 5.0, "Seconds to wait for each hccn_tool call.")
PING_NPU = Opt("ping_npu", ("--ping-npu",), "list", [],
               "DEVICE:ADDRESS: ping another node's NPU from this device (repeatable; fleet check --ping sets it).")
MODEL = Opt("model", ("--model",), "str", None, "A model directory to check: config.json, every weight shard, tokenizer files.")
VERIFY_WEIGHTS = Opt("verify_weights", ("--verify-weights",), "flag", False,
                     "Hash a sample of the shards against their published sha256.")
VERIFY_SAMPLE = Opt("verify_sample", ("--verify-sample",), "int", 3,
                    "Shards --verify-weights hashes (0: every shard with a published hash).")

# -- an image instead of the host (ImageRequest: doctor/usecases/image.py) -----------------------
IMAGE = Opt("image", ("--image",), "str", None, "Judge a Docker image (from the local engine, docker SDK) without running it.")
IMAGE_TAR = Opt("image_tar", ("--image-tar",), "str", None, "Judge a `docker save` or OCI-layout tarball (no daemon needed).")
PLATFORM = Opt("platform", ("--platform",), "str", None, "Variant of a multi-platform image: linux/arm64 or linux/amd64.")
PULL = Opt("pull", ("--pull",), "flag", False, "Pull --image first (with --platform, that variant).")
MAX_IMAGE_ENTRIES = Opt("max_image_entries", ("--max-image-entries",), "int", None,
                        "Most entries an image's layers may hold, in all (default 1000000).")
MAX_IMAGE_DISK = Opt("max_image_disk", ("--max-image-disk",), "int", None,
                     "Most MiB reading an image may write to the temporary directory (default 2048).")
MAX_IMAGE_LAYER = Opt("max_image_layer", ("--max-image-layer",), "int", None,
                      "Most GiB one compressed layer of an image may decompress to (default 64).")
MAX_IMAGE_SIZE = Opt("max_image_size", ("--max-image-size",), "int", None,
                     "Most GiB an image's compressed layers may decompress to, together (default 256).")
IMAGE_OPTIONS = (IMAGE, IMAGE_TAR, PLATFORM, PULL, MAX_IMAGE_ENTRIES, MAX_IMAGE_DISK, MAX_IMAGE_LAYER, MAX_IMAGE_SIZE)

# -- the output (Output, below) ------------------------------------------------------------------
JSON = Opt("as_json", ("--json",), "flag", False, "Print one JSON object on stdout and nothing else.")
LANG = Opt("lang", ("--lang",), "str", None, "en or zh (default: from LANG).")
VERBOSE = Opt("verbose", ("-v", "--verbose"), "flag", False, "Show evidence and per-probe timings.")

# -- check's own, and check's options in the order of its --help ---------------------------------
FAIL_ON = Opt("fail_on", ("--fail-on",), "str", "fail", "fail (default) or warn: exit 3 on warnings too.")
REQUIREMENTS = Opt("requirements", ("--requirements",), "list", [],
                   "Judge the environment as it would be after `pip install -r FILE` (nothing is installed; docs/guard.md).")
CHECK = (ROOT, PYTHON, SITE, SNAPSHOT, STAGE, TARGET, JSON, LANG, VERBOSE, FAIL_ON, MATRIX, NPU_SMI_TIMEOUT, NPU_SMI,
         SERVE_ARGS, SERVE_ARGS_FILE, MOONCAKE_MASTER, HCCN_TOOL, HCCN_TIMEOUT, MODEL, VERIFY_WEIGHTS, VERIFY_SAMPLE,
         *IMAGE_OPTIONS)  # the front end's; the typer command adds REQUIREMENTS (the guard's path)


def defaults(layout: Tuple[Opt, ...]) -> Dict[str, Any]:
    """The parameters of a command line that gives none of ``layout``'s options."""
    return {o.name: (list(o.default) if isinstance(o.default, list) else o.default) for o in layout}


# -- the objects the use cases take, from the parsed values ---------------------------------------


class Output:
    """How a command prints: one JSON object or text, in which language, with evidence or not."""

    __slots__ = ("as_json", "lang", "verbose")

    def __init__(self, as_json: bool = False, lang: str = "en", verbose: bool = False) -> None:
        self.as_json, self.lang, self.verbose = as_json, lang, verbose  # lang: resolved (--lang, else the locale)


def pick_language(option: Optional[str]) -> str:
    """--lang checked, else the language of LC_ALL / LC_MESSAGES / LANG."""
    from doctor.errors import UsageError
    from doctor.i18n import T, resolve_lang

    if option not in (None, "en", "zh"):
        raise UsageError(T("option.error.bad_lang", value=repr(option)))
    return resolve_lang(option, os.environ)


def output(params: Mapping[str, Any]) -> Output:
    return Output(as_json=bool(params.get("as_json")), lang=pick_language(params.get("lang")),
                  verbose=bool(params.get("verbose")))


def image_request(params: Mapping[str, Any], lang: Optional[str] = None) -> Optional["ImageRequest"]:
    """The image options as the request usecases/image.py takes (None when none is given: a host
    check loads none of the image code)."""
    if not any(params.get(o.name) for o in IMAGE_OPTIONS):
        return None
    from doctor.usecases.image import ImageRequest

    return ImageRequest(image=params.get("image"), image_tar=params.get("image_tar"), platform=params.get("platform"),
                        pull=bool(params.get("pull")), lang=pick_language(lang),
                        max_entries=params.get("max_image_entries"), max_disk_mb=params.get("max_image_disk"),
                        max_layer_gb=params.get("max_image_layer"), max_size_gb=params.get("max_image_size"))


def check_options(params: Mapping[str, Any], **more: Any) -> "CheckOptions":
    """The host options a command took (any of check's), as the CheckOptions its use case reads;
    ``more`` for what is not an option (the hashing progress). The image options are the image
    request, when the command takes them."""
    from doctor.record import fields_of
    from doctor.usecases.check import CheckOptions

    names = {f.name for f in fields_of(CheckOptions)}
    given: Dict[str, Any] = {k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in params.items() if k in names and k != "image"}
    if "image" in params:
        given["image"] = image_request(params, params.get("lang"))
    return CheckOptions(**given, **more)
