"""doctor/plan/vendor.py on plain data: what a host must change at the vendor level for a release
(tests/test_plan_vendor.py plans on fake hosts)."""
from doctor.matrix.model import CannDriver
from doctor.plan import vendor

from rules import build as b

NEW = b.release(vllm_ascend="0.13.0", cann=("8.5.0",))
# CANN 8.5.0 has no row: the HDK comes from the nearest documented pairing (8.3.RC2, not 8.0.0)
MATRIX = b.matrix([NEW], cann_driver=[CannDriver(cann="8.0.0", compatible=("24.1",), source="s"),
                                      CannDriver(cann="8.3.RC2", compatible=("25.2", "25.0"), source="s")])


def bare(**host):
    return b.facts(host=b.host(**host), driver=b.driver(found=False, version=None), cann=b.cann(found=False, version=None),
                   devices=b.devices(count=0), packages=b.packages({}))


def test_a_bare_machine_gets_the_hdk_of_the_nearest_documented_cann():
    p = vendor.path_to(MATRIX, bare(), NEW, "A2")
    assert (p.cann_to, p.hdk_to, p.hdk_nearest) == ("8.5.0", "25.0", "8.3.RC2")
    assert p.layers == ["driver", "firmware", "toolkit", "ops", "nnal"]


def test_a_container_uses_the_hosts_driver():
    p = vendor.path_to(MATRIX, bare(in_container=True), NEW, "A2")
    assert (p.cann_to, p.hdk_to) == ("8.5.0", None) and p.layers == ["toolkit", "ops", "nnal"]
