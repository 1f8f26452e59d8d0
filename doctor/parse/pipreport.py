"""pip's installation report (``pip install --dry-run --report``) and pip's failure output, read
into plain data. Pure: text in, dataclasses out.

The report format is pip's (https://pip.pypa.io/en/stable/reference/installation-report/):
``install`` lists every distribution pip would install, each with ``metadata`` (name, version,
requires_dist, requires_python) and ``download_info`` (url, archive_info.hashes). uv's
``pylock.toml`` (PEP 751) carries the same facts and is read by :func:`parse_pylock`.
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional
from urllib.parse import unquote, urlparse

from packaging.utils import canonicalize_name


class ReportError(ValueError):
    """The report is not what pip writes (one line, for the user)."""


@dataclass
class Resolved:
    """One distribution the resolver would install."""

    name: str  # canonical
    version: str
    url: str = ""
    filename: str = ""
    hashes: Dict[str, str] = field(default_factory=dict)  # algorithm -> hex digest
    size: Optional[int] = None  # bytes; None when the index does not say
    requested: bool = False
    requires: List[str] = field(default_factory=list)
    requires_python: Optional[str] = None
    is_direct: bool = False
    # requires/requires_python were read from the file's metadata (pip's report carries it;
    # uv's lock does not, so doctor.shell.install.wheelmeta reads it)
    metadata_known: bool = True

    @property
    def is_wheel(self) -> bool:
        return self.filename.endswith(".whl")

    @property
    def sha256(self) -> Optional[str]:
        return self.hashes.get("sha256")

    def to_json(self) -> Dict:
        out: Dict = {"name": self.name, "version": self.version, "url": self.url, "filename": self.filename,
                     "hashes": dict(self.hashes)}
        if self.size is not None:
            out["size"] = self.size
        return out


def filename_of(url: str) -> str:
    return unquote(urlparse(url).path.rsplit("/", 1)[-1])


def parse_report(text: str) -> List[Resolved]:
    """The ``install`` list of a pip installation report (the JSON object on stdout, even when
    something pip printed there comes before it: a progress bar, a warning)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        data = _report_in(text)
        if data is None:
            raise ReportError(f"pip's report is not JSON: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("install"), list):
        raise ReportError("pip's report has no 'install' list (pip older than 22.2?)")
    out: List[Resolved] = []
    for item in data["install"]:
        if not isinstance(item, dict):
            raise ReportError("pip's report: an 'install' entry is not an object")
        meta = item.get("metadata") or {}
        info = item.get("download_info") or {}
        name, version = meta.get("name"), meta.get("version")
        if not isinstance(name, str) or not isinstance(version, str):
            raise ReportError("pip's report: an 'install' entry has no name or version")
        url = info.get("url") or ""
        archive = info.get("archive_info") or {}
        hashes = dict(archive.get("hashes") or {})
        if not hashes and isinstance(archive.get("hash"), str) and "=" in archive["hash"]:
            algo, _, digest = archive["hash"].partition("=")
            hashes[algo] = digest
        out.append(Resolved(name=canonicalize_name(name), version=version, url=url, filename=filename_of(url),
                            hashes={str(k): str(v) for k, v in hashes.items()},
                            requested=bool(item.get("requested")), requires=list(meta.get("requires_dist") or []),
                            requires_python=meta.get("requires_python"), is_direct=bool(item.get("is_direct"))))
    return out


def _report_in(text: str) -> Optional[dict]:
    """The first JSON object in ``text`` that starts a line (or follows a carriage return) and
    has an ``install`` list."""
    decoder = json.JSONDecoder()
    for m in re.finditer(r"(?:^|(?<=\r))\{", text, re.M):
        try:
            data, _ = decoder.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(data, dict) and "install" in data:
            return data
    return None


def parse_pylock(text: str) -> List[Resolved]:
    """uv's ``pip compile --format pylock.toml`` output: one [[packages]] table per
    distribution, with the wheel (or sdist) chosen for the target platform, its url, size and
    hashes."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(text)
    except ValueError as e:
        raise ReportError(f"uv's pylock.toml is not TOML: {e}") from None
    except RecursionError:
        raise ReportError("uv's pylock.toml is not TOML: nested too deeply") from None
    out: List[Resolved] = []
    for pkg in data.get("packages") or []:
        name, version = pkg.get("name"), pkg.get("version")
        if not isinstance(name, str) or not isinstance(version, str):
            raise ReportError("uv's pylock.toml: a package has no name or version")
        files = list(pkg.get("wheels") or [])
        if pkg.get("sdist"):
            files.append(pkg["sdist"])
        chosen = files[0] if files else {}
        url = chosen.get("url") or chosen.get("path") or ""
        out.append(Resolved(name=canonicalize_name(name), version=version, url=url,
                            filename=chosen.get("name") or filename_of(url),
                            hashes=dict(chosen.get("hashes") or {}), size=chosen.get("size"),
                            metadata_known=False))
    return out


# ---------------------------------------------------------------------------------------------
# why a resolution failed


MISSING, CONFLICT, UNREACHABLE, PYTHON, OTHER = "missing", "conflict", "unreachable", "python", "other"
REFUSED, TIMED_OUT, TLS, PROXY, DNS = "refused", "timed out", "TLS", "proxy", "DNS"
DOWN = (REFUSED, TIMED_OUT, TLS, PROXY, DNS)  # the host did not answer (an HTTP status is an answer)


@dataclass
class HostFailure:
    host: str  # host[:port] as pip named it
    how: str  # refused | timed out | TLS | proxy | DNS | HTTP <status>
    detail: str  # pip's own line, shortened

    def to_json(self) -> Dict:
        return {"host": self.host, "how": self.how, "detail": self.detail}


@dataclass
class Failure:
    kind: str  # missing | conflict | unreachable | python | other
    message: str  # pip's own words: its ERROR lines and the conflict explanation
    requirement: Optional[str] = None  # the requirement pip could not satisfy
    versions: List[str] = field(default_factory=list)  # "(from versions: ...)"
    hosts: List[HostFailure] = field(default_factory=list)

    def to_json(self) -> Dict:
        out: Dict = {"kind": self.kind, "message": self.message}
        if self.requirement:
            out["requirement"] = self.requirement
        if self.versions:
            out["versions"] = list(self.versions)
        if self.hosts:
            out["hosts"] = [h.to_json() for h in self.hosts]
        return out


_NO_MATCH = re.compile(r"Could not find a version that satisfies the requirement (\S+)"
                       r"(?: \(from versions: ([^)]*)\))?")
_NO_DIST = re.compile(r"No matching distribution found for (\S+)")
# uv's resolution errors; the name is tried only where a run of non-blanks starts (the lookbehind):
# unanchored, `(\S+) was not found` is tried from every character of a long run (quadratic: a
# 100 KB token echoed from a requirements file took minutes)
_UV_NO_VERSION = re.compile(r"there is no version of (\S+)")
_UV_NOT_FOUND = re.compile(r"(?<!\S)(\S+) was not found in the (?:package registry|provided package locations)")
# urllib3 1 (pip before 26) names the pool, urllib3 2 (pip 26) the connection:
# "HTTPConnection(host='127.0.0.1', port=9): Failed to establish a new connection"
_POOL = re.compile(r"(HTTPS?)Connection(?:Pool)?\(host='([^']+)', port=(\d+)\)")
_FETCH = re.compile(r"Could not fetch URL (\S+?):(?:\s|$)")  # the colon after the URL, not the scheme's
_STATUS = re.compile(r"(\d{3}) Client Error|(\d{3}) Server Error|HTTP error (\d{3})")
# uv: "Failed to fetch: `http://127.0.0.1:9/simple/torch/`" then "Caused by: ..." lines
_UV_URL = re.compile(r"(?:Failed to fetch|Request failed after \d+ retries|error sending request for url)[:\s]*\(?`?(https?://[^`\s)]+)")


def _how(text: str) -> Optional[str]:
    low = text.lower()
    if "proxyerror" in low or "cannot connect to proxy" in low or "tunnel connection failed" in low:
        return PROXY
    if "ssl" in low or "certificate" in low or "tls" in low:
        return TLS
    if "timed out" in low or "timeout" in low:
        return TIMED_OUT
    if "name or service not known" in low or "temporary failure in name resolution" in low \
            or "nameresolutionerror" in low or "nodename nor servname" in low or "failed to resolve" in low \
            or "dns error" in low:
        return DNS
    if "connection refused" in low or "errno 111" in low:
        return REFUSED
    m = _STATUS.search(text)
    if m:
        return f"HTTP {next(g for g in m.groups() if g)}"
    return None


def _host_of(line: str) -> Optional[str]:
    m = _POOL.search(line)
    if m:
        scheme, host, port = m.groups()
        default = "443" if scheme == "HTTPS" else "80"
        return host if port == default else f"{host}:{port}"
    for rx in (_FETCH, _UV_URL):
        m = rx.search(line)
        if m:
            u = urlparse(m.group(1))
            if u.hostname:
                return u.netloc.rsplit("@", 1)[-1]
    return None


def host_failures(output: str) -> List[HostFailure]:
    """Every index host pip (or uv) could not reach, with how it failed, from its output.

    pip retries a failing host and then goes on with the other indexes, so the real cause of a
    "No matching distribution" is often only in these warning lines."""
    out: Dict[str, HostFailure] = {}
    lines = output.splitlines()
    for i, line in enumerate(lines):
        host = _host_of(line)
        if host is None:
            continue
        # uv names the URL on one line and the cause on the "Caused by:" lines after it
        context = " ".join([line] + [x for x in lines[i + 1:i + 8] if x.strip().lower().startswith(("cause", "|"))])
        how = _how(context)
        if how is None:
            continue
        if host not in out or out[host].how.startswith("HTTP"):
            out[host] = HostFailure(host, how, line.strip()[:300])
    return list(out.values())


def classify(output: str) -> Failure:
    """What a failed ``pip install --dry-run`` (or ``uv pip compile``) says went wrong."""
    lines = [x.rstrip() for x in output.splitlines()]
    errors = [x for x in lines if x.startswith("ERROR:") or x.startswith("error:")]
    explain: List[str] = []
    capture = False
    for x in lines:
        if x.startswith("The conflict is caused by:"):
            capture = True
        if capture:
            if not x.strip() or x.startswith(("To fix this", "ERROR:")):
                capture = False
                continue
            explain.append(x.strip())
    uv_explain = [x.strip().split("cause: ", 1)[-1] for x in lines
                  if x.strip().startswith(("cause: Because", "And because", "Because"))]
    message = "\n".join(dict.fromkeys(errors + explain + uv_explain)) or "\n".join(x for x in lines if x.strip())[-600:]
    hosts = host_failures(output)
    m = _NO_MATCH.search(output)
    n = _NO_DIST.search(output)
    uv_missing = _UV_NO_VERSION.search(output) or _UV_NOT_FOUND.search(output)
    if any(h.how in DOWN for h in hosts):
        # an index that could not be reached at all: whatever pip concluded (a conflict, a pin
        # missing, a Python mismatch) it concluded from the indexes that did answer
        req = m.group(1) if m else n.group(1) if n else None
        versions = [v.strip() for v in (m.group(2) or "").split(",") if v.strip() and v.strip() != "none"] if m else []
        return Failure(UNREACHABLE, message, requirement=req, versions=versions, hosts=hosts)
    if "requires a different Python" in output or re.search(r"Requires-Python", output) and not (m or n):
        return Failure(PYTHON, message, hosts=hosts)
    if m or n or uv_missing:
        req = m.group(1) if m else n.group(1) if n else uv_missing.group(1) if uv_missing else None
        versions = [v.strip() for v in (m.group(2) or "").split(",") if v.strip() and v.strip() != "none"] if m else []
        if hosts:  # the real cause: an index that did not answer (pip then looked elsewhere)
            return Failure(UNREACHABLE, message, requirement=req, versions=versions, hosts=hosts)
        return Failure(MISSING, message, requirement=req, versions=versions, hosts=hosts)
    if "ResolutionImpossible" in output or "conflicting dependencies" in output or "No solution found" in output \
            or "unsatisfiable" in output:
        return Failure(CONFLICT, message, hosts=hosts)
    if hosts:
        return Failure(UNREACHABLE, message, hosts=hosts)
    return Failure(OTHER, message)
