"""Every finding id has a unit test that produces it with a status and one that does not
produce it: read from the tests' own expect(..., "<id>", <status>) and absent(..., "<id>") calls."""
import ast
from pathlib import Path

from doctor.rules.all_rules import RULES

HERE = Path(__file__).resolve().parent


def _calls():
    """The ids each test file of this directory produces with a status and shows absent: the
    expect(findings, "<id>", status) / absent(findings, "<id>") calls, and the tuning tests'
    ``status(findings, "<id>") == X`` / ``... is None``."""
    expected, absent = set(), set()
    for path in HERE.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and _status_call(node.left):
                fid = _status_call(node.left)
                none = isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None
                if isinstance(node.ops[0], (ast.Is, ast.Eq)) and none:
                    absent.add(fid)
                elif isinstance(node.ops[0], ast.Eq):
                    expected.add(fid)
                continue
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            strings = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if node.func.id == "expect" and strings:  # expect(findings, "<id>", status)
                expected.add(strings[0])
            elif node.func.id == "absent" and strings:
                absent.add(strings[0])
    return expected, absent


def _status_call(node):
    """The id of a ``status(findings, "<id>")`` call, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "status" and \
            len(node.args) == 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
        return node.args[1].value
    return None


def test_every_finding_id_is_produced_and_not_produced_by_some_test():
    expected, absent = _calls()
    ids = {r.id for r in RULES} | {"python.probe_error", "torch.rule_error"}
    assert not sorted(ids - expected), f"no expect(findings, id, status) for {sorted(ids - expected)}"
    assert not sorted(ids - absent), f"no absent(findings, id) for {sorted(ids - absent)}"
