"""``fix --bundle DIR`` without --apply: make a bundle for an offline node (docs/fix.md)."""
from __future__ import annotations

import json
import os
import sys
from typing import List, Optional

import typer


def make_bundle_command(directory: str, *, root: str, python: Optional[str], snapshot: Optional[str], stage: str,
                        target: Optional[str], prefer: Optional[str], installer: str, platform: List[str],
                        python_version: Optional[str], abi: List[str], as_json: bool, lang: str, matrix: List[str],
                        npu_smi_timeout: float) -> None:
    from doctor.errors import UsageError
    from doctor.i18n import tr
    from doctor.plan.builder import PlanOptions, plan_for
    from doctor.rules.engine import make_context, run_rules
    from doctor.shell.bundle import platform_for, retarget_facts, write_bundle
    from doctor.shell.installer import Choice, Downloader, Installer
    from doctor.usecases.check import CheckOptions, gather, load_matrix_or_exit, parse_target
    from doctor.usecases.prove import prove

    if installer != "pip":
        raise UsageError("--bundle downloads with pip (uv has no download command): leave out --installer")
    opts = CheckOptions(root=root, python=python, snapshot=snapshot, stage=stage, matrix=list(matrix),
                        npu_smi_timeout=npu_smi_timeout)
    mx = load_matrix_or_exit(opts.matrix)
    facts = gather(opts, dict(os.environ))
    tp = platform_for(facts, platform, python_version, abi)
    facts = retarget_facts(facts, tp)
    node_python = (facts.python.executable if facts.python and facts.python.executable else None) or "python3"
    pip = (sys.executable, "-m", "pip")  # resolves and downloads for the node with --platform/--python-version
    choice = Choice(Installer("pip", node_python, (node_python, "-m", "pip")), Downloader(pip))
    ctx0 = make_context(facts, mx, stage)
    popts = PlanOptions(installer=choice.installer, target=parse_target(target), prefer=prefer,
                        doctor_python="ascend-doctor")

    def verdict_for(version: str):
        return run_rules(make_context(facts, mx, stage, version))

    plan = plan_for(facts, mx, verdict_for, ctx0.hardware, popts)
    env = dict(os.environ)
    plan = prove(plan, facts, choice, env, platform=tp, bundle=True)
    res = plan.resolution or {}
    if res.get("status") == "failed":
        if as_json:
            sys.stdout.write(json.dumps(plan.to_json(lang), ensure_ascii=False, indent=2) + "\n")
        else:
            from doctor.cli.fix import print_plan

            print_plan(plan, lang)
        raise typer.Exit(3)
    if not plan.resolved_files:
        raise UsageError(tr("bundle.nothing", lang))
    manifest = write_bundle(directory, plan, tp, choice, env, 3600.0)
    with open(os.path.join(directory, "plan.json"), "w", encoding="utf-8") as fh:
        json.dump(plan.to_json("en"), fh, ensure_ascii=False, indent=2)
    size = sum(f["size"] for f in manifest["files"])
    if as_json:
        sys.stdout.write(json.dumps({"bundle": directory, "manifest": manifest, "plan": plan.to_json(lang)},
                                    ensure_ascii=False, indent=2) + "\n")
    else:
        from doctor.cli.fix import human_size

        print(tr("bundle.written", lang, path=directory, files=len(manifest["files"]), size=human_size(size),
                 target=plan.target, platform=tp.platforms[0], python=tp.python_version))
        print(tr("bundle.then", lang))
        import shlex

        print(shlex.join(["ascend-doctor", "fix", "--apply", "--bundle", directory]))
    raise typer.Exit(0)
