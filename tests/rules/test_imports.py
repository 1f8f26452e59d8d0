"""doctor/rules/imports.py: env.import_shadow, what the serving process would import (PYTHONPATH
from the environment or the launch script) against the installed stack."""


from doctor.facts import ImportLocation, ImportsFacts
from doctor.rules import imports

from .build import (absent, context, expect, facts, judge)


# -- env.import_shadow -------------------------------------------------------------------------------

SITE = "/env/lib/python3.11/site-packages"
TREE = "/vllm-workspace/vllm"


def _imports(python_path, source="environment", **loc):
    base = dict(name="vllm", dist="vllm", found=f"{TREE}/vllm", entry=TREE, kind="package", installed=f"{SITE}/vllm",
                same_as_installed=False)
    base.update(loc)
    return ImportsFacts(python_path=python_path, python_path_source=source, sys_path=python_path + [SITE],
                        located=[ImportLocation(**base)])


def test_pythonpath_source_tree_shadows_the_installed_vllm():
    ctx = context(facts(imports=_imports(["/opt/extra", TREE], source="launch.sh")))
    f = expect(judge(imports.import_shadow, ctx), "env.import_shadow", "fail")
    assert f.observed == f"{TREE}/vllm" and f.expected == f"{SITE}/vllm"
    assert "0.11.0" in f.title.text("en") and TREE in f.hint.text("zh")
    assert [c.shell() for c in f.commands] == ["export PYTHONPATH=/opt/extra"]
    assert "launch.sh" in f.commands[0].label.text("en")


def test_only_entry_on_pythonpath_unsets_it():
    f = expect(judge(imports.import_shadow, context(facts(imports=_imports([TREE])))), "env.import_shadow", "fail")
    assert [c.argv for c in f.commands] == [("unset", "PYTHONPATH")]


def test_a_shadow_outside_pythonpath_names_the_entry_without_a_command():
    ctx = context(facts(imports=_imports([], entry="/root/.local/lib/python3.11/site-packages",
                                         found="/root/.local/lib/python3.11/site-packages/vllm")))
    f = expect(judge(imports.import_shadow, ctx), "env.import_shadow", "fail")
    assert not f.commands and ".pth" in f.hint.text("en")


def test_installed_package_imported_says_nothing():
    absent(judge(imports.import_shadow, context(facts(imports=_imports([TREE], same_as_installed=True)))),
           "env.import_shadow")
    absent(judge(imports.import_shadow, context()), "env.import_shadow")
