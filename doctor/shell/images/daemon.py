"""An image from the Docker engine, through the docker SDK (the ``image`` extra, installed into the doctor's own environment).

Engine API calls used: ``GET /version`` (the SDK negotiates the API version), ``GET
/images/{name}/json`` (inspect), ``POST /images/create`` (only with ``--pull``) and ``GET
/images/{name}/get`` (``docker save``, streamed: nothing is written to disk but the few files the
probes read). The SDK is imported here only, so ``check`` without ``--image`` never loads it.

Deadlines: every call has a read timeout (CALL_TIMEOUT); the export and the pull also have a
total deadline, checked as the bytes arrive.
"""
from __future__ import annotations

import io
import json
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional
from urllib.parse import quote

from doctor.parse.oci import Platform, tag_of

CALL_TIMEOUT = 60.0  # seconds without a byte from the engine
SAVE_DEADLINE = 3600.0  # the whole export (a 30 GB image over a local socket takes a minute or two)
PULL_DEADLINE = 3600.0
DEFAULT_HOST = "unix:///var/run/docker.sock"
CHUNK = 1024 * 1024


class DaemonError(Exception):
    """One line for the user: ``key`` and ``params`` of doctor/i18n/image.toml."""

    def __init__(self, key: str, **params: Any):
        self.key, self.params = key, params
        super().__init__(f"{key}: {params}")


@dataclass
class DaemonImage:
    ref: str
    inspect: Dict[str, Any]
    api_version: str
    client: Any

    @property
    def platform(self) -> Platform:
        from doctor.parse.oci import normalize_arch

        return Platform(str(self.inspect.get("Os") or "linux"), normalize_arch(str(self.inspect.get("Architecture") or "")),
                        str(self.inspect.get("Variant") or ""))

    @property
    def repo_digest(self) -> Optional[str]:
        digests = self.inspect.get("RepoDigests") or []
        return digests[0].split("@", 1)[1] if digests and "@" in digests[0] else None


def docker_host(env: Optional[Mapping[str, str]] = None) -> str:
    environ = os.environ if env is None else env
    return environ.get("DOCKER_HOST") or DEFAULT_HOST


def _socket(host: str) -> str:
    return host[len("unix://"):] if host.startswith("unix://") else host


def explain(e: BaseException, host: str) -> DaemonError:
    """The one-line reason the engine cannot be reached: the socket is missing, not ours to
    open, refused, or something else (TLS, a proxy)."""
    chain: List[BaseException] = []
    cur: Optional[BaseException] = e
    while cur is not None and len(chain) < 12:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    text = " ".join(str(x) for x in chain)
    sock = _socket(host)
    if any(isinstance(x, FileNotFoundError) for x in chain) or "No such file or directory" in text:
        return DaemonError("image.error.daemon_missing", socket=sock)
    if any(isinstance(x, PermissionError) for x in chain) or "Permission denied" in text:
        return DaemonError("image.error.daemon_permission", socket=sock)
    if any(isinstance(x, ConnectionRefusedError) for x in chain) or "Connection refused" in text:
        return DaemonError("image.error.daemon_refused", socket=sock)
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return DaemonError("image.error.daemon_other", socket=sock, error=first[:300])


def no_sdk(ref: str) -> DaemonError:
    """The docker SDK is not importable: install it into the doctor's own environment (the
    doctor is not on PyPI: ``ascend-doctor[image]`` cannot be installed by name), or read a
    ``docker save`` of the image instead."""
    import shlex

    from doctor.program import IMAGE_EXTRA, own_pip_install, requirements

    return DaemonError("image.error.no_sdk", install=own_pip_install(*requirements(IMAGE_EXTRA)),
                       save=shlex.join(["docker", "save", ref, "-o", "image.tar"]))


def connect(env: Optional[Dict[str, str]] = None, ref: str = "IMAGE"):
    """A docker client whose engine has answered ``GET /version``."""
    try:
        import docker  # noqa: F401  (only --image loads the SDK)
    except ImportError:
        raise no_sdk(ref) from None
    host = docker_host(env)
    try:
        client = docker.from_env(timeout=CALL_TIMEOUT, environment=dict(os.environ if env is None else env))
        version = client.api.api_version
    except Exception as e:  # the SDK wraps socket errors in DockerException
        raise explain(e, host) from None
    return client, version


def inspect(client, ref: str, host: str) -> Dict[str, Any]:
    import docker

    try:
        return client.api.inspect_image(ref)
    except docker.errors.ImageNotFound:
        raise DaemonError("image.error.not_found", ref=ref) from None
    except docker.errors.APIError as e:
        if getattr(e, "status_code", None) == 404:
            raise DaemonError("image.error.not_found", ref=ref) from None
        raise DaemonError("image.error.daemon_call", what="inspect", ref=ref, error=_api_text(e)) from None
    except Exception as e:
        raise explain(e, host) from None


def pull(client, ref: str, platform: Optional[Platform], host: str,
         progress: Optional[Callable[[str], None]] = None, deadline: float = PULL_DEADLINE) -> None:
    import docker

    repo, tag = tag_of(ref)
    end = time.monotonic() + deadline
    kwargs: Dict[str, Any] = {"stream": True, "decode": True}
    if platform is not None:
        kwargs["platform"] = str(platform)
    try:
        for event in client.api.pull(repo, tag=tag, **kwargs):
            if time.monotonic() > end:
                raise DaemonError("image.error.timeout", ref=ref, seconds=deadline)
            if isinstance(event, dict) and event.get("error"):
                raise DaemonError("image.error.pull_failed", ref=ref, error=str(event["error"])[:300])
            if progress is not None and isinstance(event, dict) and event.get("status"):
                progress(str(event["status"]))
    except docker.errors.ImageNotFound as e:
        raise DaemonError("image.error.pull_failed", ref=ref, error=_api_text(e)) from None
    except docker.errors.APIError as e:
        raise DaemonError("image.error.pull_failed", ref=ref, error=_api_text(e)) from None
    except DaemonError:
        raise
    except Exception as e:
        raise explain(e, host) from None


def open_image(ref: str, *, pull_first: bool = False, platform: Optional[Platform] = None,
               env: Optional[Dict[str, str]] = None, progress: Optional[Callable[[str], None]] = None) -> DaemonImage:
    host = docker_host(env)
    client, version = connect(env, ref)
    if pull_first:
        pull(client, ref, platform, host, progress)
    return DaemonImage(ref=ref, inspect=inspect(client, ref, host), api_version=version, client=client)


def save_stream(image: DaemonImage, platform: Optional[Platform], host: str) -> io.RawIOBase:
    """``docker save`` as a file object read once. With a platform, the engine is asked to export
    only that variant (the ``platform`` parameter of recent Engine APIs); an engine that does not
    know the parameter ignores it and exports what it has, and the archive reader picks the
    platform then."""
    import docker

    api = image.client.api
    try:
        if platform is not None:
            url = f"{api.base_url}/v{image.api_version}/images/{quote(image.ref, safe='/:@')}/get"
            spec = {"os": platform.os, "architecture": platform.architecture}
            if platform.variant:
                spec["variant"] = platform.variant
            res = api.get(url, params={"platform": json.dumps(spec)}, stream=True, timeout=CALL_TIMEOUT)
            if res.status_code == 404:
                raise DaemonError("image.error.not_found", ref=image.ref)
            if res.status_code >= 400:
                raise DaemonError("image.error.daemon_call", what="save", ref=image.ref, error=res.text[:300])
            chunks: Iterator[bytes] = res.iter_content(CHUNK)
        else:
            chunks = api.get_image(image.ref, chunk_size=CHUNK)
    except docker.errors.ImageNotFound:
        raise DaemonError("image.error.not_found", ref=image.ref) from None
    except docker.errors.APIError as e:
        raise DaemonError("image.error.daemon_call", what="save", ref=image.ref, error=_api_text(e)) from None
    except DaemonError:
        raise
    except Exception as e:
        raise explain(e, host) from None
    return _Chunks(chunks, host)


class _Chunks(io.RawIOBase):
    """A byte generator (the SDK's streamed response) as a readable file object."""

    def __init__(self, chunks: Iterator[bytes], host: str):
        self.chunks, self.host = chunks, host
        self.buf = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while not self.buf:
            try:
                self.buf = next(self.chunks)
            except StopIteration:
                return 0
            except Exception as e:  # the engine went away mid-stream
                from doctor.shell.images.archive import SourceError

                raise SourceError(_api_text(e)) from None
        n = min(len(b), len(self.buf))
        b[:n] = self.buf[:n]
        self.buf = self.buf[n:]
        return n


def _api_text(e: Exception) -> str:
    text = getattr(e, "explanation", None) or str(e)
    return str(text).strip().splitlines()[0][:300] if str(text).strip() else type(e).__name__
