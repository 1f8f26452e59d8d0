"""doctor/parse/pipreport.host_failures on the lines real pip releases log for an index host that
refuses the connection (recorded from pip 23.2.1 and pip 26.3 against a closed port on
loopback): the host is named, with how it failed, whatever urllib3 the pip vendors."""
from __future__ import annotations

import pytest

from doctor.parse.pipreport import REFUSED, classify, host_failures

# pip 23.2.1 (urllib3 1.26): the pool is named on the "Could not fetch URL" line
PIP_23 = (
    "2026-12-02T19:25:11,258 WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) "
    "after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPConnection object at "
    "0x7f3c20f94f10>: Failed to establish a new connection: [Errno 111] Connection refused')': /whl/cpu/torch/\n"
    "2026-12-02T19:25:11,259 Could not fetch URL http://127.0.0.1:9/whl/cpu/torch/: connection error: "
    "HTTPConnectionPool(host='127.0.0.1', port=9): Max retries exceeded with url: /whl/cpu/torch/ (Caused by "
    "NewConnectionError('<pip._vendor.urllib3.connection.HTTPConnection object at 0x7f3c20f96510>: Failed to "
    "establish a new connection: [Errno 111] Connection refused')) - skipping\n"
    "ERROR: Could not find a version that satisfies the requirement torch==2.7.1+cpu (from versions: none)\n"
    "ERROR: No matching distribution found for torch==2.7.1+cpu\n")
# pip 26.3 (urllib3 2): no pool, the connection is named, and "Could not fetch URL" carries no host=
PIP_26 = (
    "2026-12-02T19:24:39,887 WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) "
    "after connection broken by 'NewConnectionError(\"HTTPConnection(host='127.0.0.1', port=9): Failed to establish "
    "a new connection: [Errno 111] Connection refused\")': /whl/cpu/torch/\n"
    "2026-12-02T19:24:39,887 Could not fetch URL http://127.0.0.1:9/whl/cpu/torch/: connection error: "
    "[Errno 111] Connection refused - skipping\n"
    "ERROR: Could not find a version that satisfies the requirement torch==2.7.1+cpu (from versions: none)\n"
    "ERROR: No matching distribution found for torch==2.7.1+cpu\n")


@pytest.mark.parametrize("log", [PIP_23, PIP_26], ids=["pip23", "pip26"])
def test_a_refused_index_host_is_named_by_every_pip(log):
    assert [(h.host, h.how) for h in host_failures(log)] == [("127.0.0.1:9", REFUSED)]
    assert classify(log).kind == "unreachable"


@pytest.mark.parametrize("line", [
    "Could not fetch URL http://127.0.0.1:9/whl/cpu/torch/: connection error: [Errno 111] Connection refused - skipping",
    "WARNING: Retrying (Retry(total=0)) after connection broken by 'NewConnectionError(\"HTTPConnection(host='127.0.0.1',"
    " port=9): Failed to establish a new connection: [Errno 111] Connection refused\")': /whl/cpu/torch/",
])
def test_either_pip_26_line_alone_names_the_host(line):
    assert [(h.host, h.how) for h in host_failures(line)] == [("127.0.0.1:9", REFUSED)]


def test_the_default_port_is_left_out_of_the_name():
    line = ("Could not fetch URL https://pypi.example.org/simple/torch/: connection error: HTTPSConnection("
            "host='pypi.example.org', port=443): Failed to establish a new connection: [Errno 111] Connection refused")
    assert [h.host for h in host_failures(line)] == ["pypi.example.org"]
