"""The rules and the planner are pure: with every door to the world shut (files, directories,
processes, sockets, the environment), they reach the same verdict and the same plan."""
from __future__ import annotations

import builtins
import contextlib
import io
import json
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from unittest import mock

import pytest

from doctor.findings import Verdict
from doctor.i18n import catalogue
from doctor.plan import builder
from doctor.rules.engine import make_context, run_rules
from doctor.rules.pipcheck import check as pip_check

from rules import build
from shipped import matrix as shipped_matrix


class WorldTouched(BaseException):
    """Raised by every shut door; a BaseException, so no `except Exception` in the code hides it."""


def _shut(what):
    def door(*args, **kwargs):
        raise WorldTouched(f"{what}{args[:1]}")
    return door


class _NoEnvironment(dict):
    def __getitem__(self, key):
        raise WorldTouched(f"os.environ[{key!r}]")

    def get(self, key, default=None):
        raise WorldTouched(f"os.environ.get({key!r})")

    def __contains__(self, key):
        raise WorldTouched(f"{key!r} in os.environ")


@contextlib.contextmanager
def no_world():
    doors = {
        (builtins, "open"): _shut("open"), (io, "open"): _shut("io.open"), (io, "open_code"): _shut("io.open_code"),
        (os, "open"): _shut("os.open"), (os, "stat"): _shut("os.stat"), (os, "lstat"): _shut("os.lstat"),
        (os, "listdir"): _shut("os.listdir"), (os, "scandir"): _shut("os.scandir"), (os, "walk"): _shut("os.walk"),
        (os, "access"): _shut("os.access"), (os, "readlink"): _shut("os.readlink"), (os, "system"): _shut("os.system"),
        (os, "popen"): _shut("os.popen"), (os, "getcwd"): _shut("os.getcwd"), (os, "getenv"): _shut("os.getenv"),
        (os, "environ"): _NoEnvironment(), (subprocess, "Popen"): _shut("subprocess.Popen"),
        (socket, "socket"): _shut("socket.socket"), (socket, "create_connection"): _shut("socket.create_connection"),
        (socket, "getaddrinfo"): _shut("socket.getaddrinfo"),
    }
    with contextlib.ExitStack() as stack:
        for (module, name), door in doors.items():
            stack.enter_context(mock.patch.object(module, name, door))
        yield


def test_the_doors_are_shut():
    with no_world():
        for attempt in (lambda: open("/etc/hostname"), lambda: Path("/").exists(), lambda: os.listdir("/"),
                        lambda: subprocess.run(["true"]), lambda: socket.create_connection(("127.0.0.1", 1)),
                        lambda: os.environ.get("HOME"), lambda: Path("/etc/hostname").read_text()):
            with pytest.raises(WorldTouched):
                attempt()
    assert os.path.isdir("/")  # and open again afterwards


def _verdict_json(v: Verdict):
    return [json.dumps([f.to_json(lang) for f in v.findings], ensure_ascii=False) for lang in ("en", "zh")]


class Pip:
    kind, python = "pip", "/env/bin/python"

    def _cmd(self, sub):
        return [self.python, "-m", "pip", sub]

    def install(self, specs, *, no_deps=True, extra_index_urls=(), constraint=None):
        return self._cmd("install") + (["--no-deps"] if no_deps else []) + list(specs) + \
            [x for u in extra_index_urls for x in ("--extra-index-url", u)]

    def uninstall(self, names):
        return self._cmd("uninstall") + ["-y"] + list(names)


def _judge_and_plan(facts, matrix):
    """Every verdict the rules give (each stage, the installed release and every other target)
    and the plans for each --prefer, as JSON in both languages."""
    conflicts = pip_check(facts.packages.dists, facts.python.markers if facts.python else {}) if facts.packages else None
    out = []
    for stage in ("auto", "build", "runtime"):
        ctx = make_context(facts, matrix, stage)
        ctx.pip_conflicts = conflicts
        out.append(_verdict_json(run_rules(ctx)))
    ctx = make_context(facts, matrix)
    for prefer in (None, "keep-cann", "keep-release"):
        opts = builder.PlanOptions(installer=Pip(), prefer=prefer, with_mooncake=prefer == "keep-release",
                                   constraint_file="/state/constraints.txt", src_dir="/state/src")
        try:
            plan = builder.plan_for(facts, matrix, lambda v: run_rules(make_context(facts, matrix, "auto", v)),
                                    ctx.hardware, opts)
        except Exception as e:  # no release to plan for: the same answer both times
            out.append(f"{type(e).__name__}: {e}")
            continue
        out.append([json.dumps(plan.to_json(lang), ensure_ascii=False) for lang in ("en", "zh")])
    return out


def _same_without_the_world(cases):
    catalogue()  # the words are data loaded before judging
    for name, (facts, matrix) in cases.items():
        open_run = _judge_and_plan(facts, matrix)
        with no_world():
            shut_run = _judge_and_plan(facts, matrix)
        assert shut_run == open_run, name


LITERAL_CASES = {
    "healthy": build.facts(),
    "broken stack": build.facts(packages=build.packages(build.stack(torch="2.8.0", vllm="0.11.2+empty", numpy="2.2.0"))),
    "no vllm-ascend": build.facts(packages=build.packages(build.stack(vllm_ascend=None))),
    "not sourced": build.facts(env={}),
    "no driver": build.facts(driver=build.driver(found=False, version=None), devices=build.devices(count=0)),
    "sick chips": build.facts(devices=build.devices(**build.npu_smi(build.chips(("OK", "Critical"))))),
    "old cann": build.facts(cann=build.cann(version="8.2.RC1")),
}


def test_rules_and_planner_on_literal_facts_need_no_world():
    _same_without_the_world({name: (f, build.matrix()) for name, f in LITERAL_CASES.items()})


@pytest.fixture(scope="module")
def kit_facts():
    """Facts gathered (with the world open) from every kit scenario's fake host."""
    from fakehost import FakeHost
    from fakehost.kit import SCENARIOS
    from doctor.usecases.check import CheckOptions, gather

    base = Path(tempfile.mkdtemp(prefix="purity-"))
    out = {}
    try:
        for name in sorted(SCENARIOS):
            fake = FakeHost(base / name)
            SCENARIOS[name](fake)
            opts = CheckOptions(root=str(fake.root), python=str(fake.python) if fake.python else None,
                                cwd=str(fake.workdir))
            out[name] = gather(opts, dict(fake.env))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return out


@pytest.mark.slow
def test_rules_and_planner_on_every_kit_scenario_need_no_world(kit_facts):
    matrix = shipped_matrix()
    assert len(kit_facts) >= 25
    _same_without_the_world({name: (f, matrix) for name, f in kit_facts.items()})


def test_profile_analysis_needs_no_world():
    """doctor/profile judges events and rows handed to it: the same report with every door shut."""
    import csv

    from doctor.profile import html, kernels, text, trace, view
    from doctor.profile.analyse import analyse
    from doctor.profile.identify import identify
    from doctor.profile.report import RankResult, assemble, to_json
    from doctor.profile.verdict import judge
    from fakehost import REPO

    data = REPO / "tests" / "data" / "profile"
    events = json.loads((data / "mstt_level1_trace_view.json").read_text())
    rows = list(csv.reader((data / "mstt_kernel_details_pipe.csv").read_text().splitlines()))
    catalogue()

    def run():
        tr = trace.build(events)
        table = kernels.table(rows[0], rows[1:], tr.base_us)
        rank = view.from_trace(tr, "r0", table)
        figures = analyse(rank)
        result = RankResult("r0", {}, identify("torch_npu", None, rows[0], (), True), figures,
                            judge(figures.totals, figures.device_kind, figures.device_kind_measured))
        rep = assemble("p", "torch_npu", [result], ["0.11.0rc3"], "option")
        return [json.dumps(to_json(rep, lang), sort_keys=True) + html.render(rep, lang) + repr(text.lines(rep, lang))
                for lang in ("en", "zh")]

    open_run = run()
    with no_world():
        shut_run = run()
    assert shut_run == open_run


def test_the_catalogue_reads_no_environment():
    """doctor.i18n is pure: the language comes from the edge (resolve_lang is given the
    environment), the parsed catalogue is kept by the shell's store; loading and rendering read
    no variable (XDG_CACHE_HOME, LANG ...)."""
    from doctor import i18n

    paths = sorted(i18n.HERE.glob("*.toml"))
    with mock.patch.object(os, "environ", _NoEnvironment()), mock.patch.object(os, "getenv", _shut("os.getenv")):
        words = i18n.load_cached(paths)
        assert i18n.resolve_lang(None, {"LANG": "zh_CN.UTF-8"}) == "zh"
    assert words == i18n.load_files(paths)
    catalogue()
    with no_world():
        assert i18n.T("stage.skipped_in_build", reason="x").text("zh")
