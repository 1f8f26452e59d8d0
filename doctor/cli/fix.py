"""The `fix` and `rollback` commands (docs/fix.md), ready for the main CLI:
``app.command("fix")(fix_command)`` and ``app.command("rollback")(rollback_command)``."""
from __future__ import annotations

import json
import os
import sys
from typing import List, Optional

import typer

from doctor.cli.options import LANG, MATRIX, NPU_SMI, NPU_SMI_TIMEOUT, PYTHON, ROOT, STAGE, pick_language
from doctor.errors import UsageError

VERBOSE = typer.Option(False, "-v", "--verbose", help="Stream pip's output (it always goes to the log file).")

T = {
    "header": ("Plan for vllm-ascend {target} (matrix row {row})", "vllm-ascend {target} 的修复计划（矩阵行 {row}）"),
    "why": ("target: {why}", "目标：{why}"),
    "pins": ("pins after the plan", "计划完成后的版本"),
    "empty": ("Nothing to change: the Python stack already matches the row.", "无需修改：Python 推理栈已与该行配套。"),
    "steps": ("steps", "步骤"),
    "manual": ("run by hand (never run by ascend-doctor)", "需手动执行（ascend-doctor 不会执行）"),
    "residual": ("expected afterwards", "完成后预期保留"),
    "alternatives": ("other ways", "其他方案"),
    "notes": ("notes", "说明"),
    "dry": ("dry run: nothing changed; ascend-doctor fix --apply carries it out", "仅预览，未做修改；ascend-doctor fix --apply 执行该计划"),
    "confirm": ("Apply {n} step(s) to {python}?", "对 {python} 执行 {n} 个步骤？"),
    "applied": ("applied as transaction {id}; undo with: ascend-doctor rollback --python {python}",
                "已作为事务 {id} 执行；撤销：ascend-doctor rollback --python {python}"),
    "changed": ("changed", "变更"),
    "before_after": ("check before -> after", "检查结果 修复前 -> 修复后"),
    "smoke_skip": ("smoke test skipped: {why}", "跳过冒烟测试：{why}"),
    "requirements": ("pins written to {path}", "版本已写入 {path}"),
    "rolled": ("rolled back transaction {id}", "已回滚事务 {id}"),
}


def t(key: str, lang: str, **kw) -> str:
    en, zh = T[key]
    return (zh if lang == "zh" else en).format(**kw)


def fix_command(
    root: str = ROOT,
    python: Optional[str] = PYTHON,
    site_packages: List[str] = typer.Option([], "--site-packages", help="Plan from these directories (no interpreter: no --apply)."),
    snapshot: Optional[str] = typer.Option(None, "--from", help="Plan from a snapshot (no --apply)."),
    stage: str = STAGE,
    target: Optional[str] = typer.Option(None, "--target", help="Reconcile to another release: vllm-ascend==X."),
    prefer: Optional[str] = typer.Option(None, "--prefer", help="keep-cann or keep-release, when CANN/driver are too old for the release."),
    with_mooncake: bool = typer.Option(False, "--with-mooncake", help="Also install the row's Mooncake."),
    vllm_from: str = typer.Option("index", "--vllm-from", help="index (wheel, --no-deps) or source (VLLM_TARGET_DEVICE=empty build from the git tag)."),
    vllm_repo: str = typer.Option("https://github.com/vllm-project/vllm", "--vllm-repo", help="git URL (or a mirror) for --vllm-from source."),
    installer: str = typer.Option("pip", "--installer", help="pip (default) or uv (when on PATH)."),
    apply: bool = typer.Option(False, "--apply", help="Carry the plan out as one transaction (else: dry run)."),
    offline: bool = typer.Option(False, "--offline", help="Do not ask the resolver: the matrix-only plan, marked 'not resolved'."),
    bundle: Optional[str] = typer.Option(None, "--bundle", help="Write a bundle for an offline node to DIR; with --apply, install only from DIR."),
    platform: List[str] = typer.Option([], "--platform", help="Bundle: the target's wheel platform tag (repeatable; default: from --from or this host)."),
    python_version: Optional[str] = typer.Option(None, "--python-version", help="Bundle: the target's Python (3.11; default: from --from or this host)."),
    abi: List[str] = typer.Option([], "--abi", help="Bundle: the target's ABI tag (cp311; repeatable)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    requirements: Optional[str] = typer.Option(None, "--requirements", help="Write the pins as a requirements/constraints file."),
    no_smoke: bool = typer.Option(False, "--no-smoke", help="Do not run the smoke test after --apply."),
    step_timeout: float = typer.Option(3600.0, "--step-timeout", help="Seconds one pip/build step may take."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan object (and the result) as JSON, nothing else on stdout."),
    lang: Optional[str] = LANG,
    verbose: bool = VERBOSE,
    matrix: List[str] = MATRIX,
    npu_smi_timeout: float = NPU_SMI_TIMEOUT,
    npu_smi: Optional[str] = NPU_SMI,
) -> None:
    """Plan (and with --apply carry out) a pinned, ordered reinstall that makes the stack consistent."""
    from doctor.usecases.check import CheckOptions
    from doctor.usecases.fix import Declined, FixOptions, make_bundle, run_fix

    language = pick_language(lang)
    opts = FixOptions(
        check=CheckOptions(root=root, python=python, site_packages=list(site_packages), snapshot=snapshot, stage=stage,
                           matrix=list(matrix), npu_smi_timeout=npu_smi_timeout, npu_smi=npu_smi),
        target=target, prefer=prefer, with_mooncake=with_mooncake, vllm_from=vllm_from, vllm_repo=vllm_repo,
        installer=installer, apply=apply, requirements=requirements, offline=offline, bundle=bundle,
        platform=list(platform), python_version=python_version, abi=list(abi), smoke=not no_smoke,
        step_timeout=step_timeout, verbose=verbose, lang=language)

    def resolving(installer_kind: str) -> "_busy":
        return _busy(tr_("plan.resolving", language, installer=installer_kind))

    if bundle and not apply:
        from doctor.cli.bundle import print_bundle

        made = make_bundle(opts, dict(os.environ), resolving)
        print_bundle(made, as_json, language)
        raise typer.Exit(made.exit_code)

    def confirm(n: int, target_python: str) -> bool:
        if yes:
            return True
        if not sys.stdin.isatty():
            raise UsageError("refusing to change the environment without confirmation: pass --yes")
        return typer.confirm(t("confirm", language, n=n, python=target_python), err=True)

    def show_plan(plan) -> None:
        if not as_json:
            print_plan(plan, language)

    try:
        outcome = run_fix(opts, dict(os.environ), confirm, say=_err, show_plan=show_plan, resolving=resolving)
    except Declined:
        raise typer.Exit(1)
    if outcome.messages and not as_json:
        _err(t("requirements", language, path=outcome.messages[0]))
    plan, doc, before = outcome.plan, outcome.doc, outcome.before
    if not apply:
        if as_json:
            sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        else:
            print_plan(plan, language)
            _out(t("dry", language))
        raise typer.Exit(outcome.exit_code)

    if outcome.unresolvable:  # the plan was shown with the resolver's message; nothing changed
        if as_json:
            sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        raise typer.Exit(outcome.exit_code)
    result, final, smoke, code = outcome.result, outcome.final, outcome.smoke, outcome.exit_code
    assert final is not None
    if outcome.smoke_skipped:
        _err(t("smoke_skip", language, why="build stage, no NPU here" if language != "zh" else "构建阶段，没有 NPU"))
    if as_json:
        doc["result"] = {
            "applied": result is not None,
            "transaction": result.txn_id if result else None,
            "journal": str(result.journal) if result else None,
            "log": str(result.log) if result else None,
            "changed": {n: {"before": a, "after": b} for n, (a, b) in result.changed.items()} if result else {},
            "verification": result.verification.to_json() if result else None,
            "check_before": {"exit_code": before.exit_code(), "root_cause": before.root_cause},
            "check_after": {"exit_code": final.verdict.exit_code(), "root_cause": final.verdict.root_cause,
                            "findings": [f.to_json(language) for f in final.verdict.findings]},
            "smoke": smoke,
            "exit_code": code,
        }
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    else:
        if result is not None:
            _out(t("applied", language, id=result.txn_id, python=outcome.target_python))
            for n, (a, b) in result.changed.items():
                _out(f"  {n}: {a or '-'} -> {b or '-'}")
            for line in verification_lines(result.verification, language):
                _out(line)
        print_before_after(before, final.verdict, language)
        if smoke is not None:
            _out(f"smoke: exit {smoke['exit_code']}" + (f" ({smoke['why']})" if smoke.get("why") else ""))
        from doctor.render import print_check

        print_check(final.verdict, stage=final.ctx.stage, target_row=final.ctx.release.key if final.ctx.release else None,
                    timings=final.timings, lang=language, verbose=False, exit_code=code)
    raise typer.Exit(code)


def tr_(key: str, lang: str, **kw) -> str:
    from doctor.i18n import tr

    return tr(key, lang, **kw)


class _busy:
    """A spinner on stderr while the resolver runs (only on a terminal)."""

    def __init__(self, text: str):
        self.text = text
        self.status = None

    def __enter__(self):
        if sys.stderr.isatty():
            from rich.console import Console

            self.status = Console(stderr=True).status(self.text)
            self.status.__enter__()
        return self

    def __exit__(self, *exc):
        if self.status is not None:
            self.status.__exit__(*exc)


def verification_lines(v, lang: str) -> List[str]:
    """What the import check before the commit did: imported, only located, not verified."""
    from doctor.i18n import tr

    out = []
    imported = [c.module for c in v.checks if c.ok and c.how == "import"]
    located = [c.module for c in v.checks if c.ok and c.how == "locate"]
    driver = [c.module for c in v.checks if c.driver_missing]
    if imported:
        out.append("  " + tr("shell.verify.imported", lang, modules=", ".join(imported)))
    if located:
        out.append("  " + tr("shell.verify.located", lang, modules=", ".join(located)))
    if driver:
        out.append("  " + tr("shell.verify.driver_missing", lang, modules=", ".join(driver)))
    return out


def _out(text: str) -> None:
    print(text)


def _err(text: str) -> None:
    print(text, file=sys.stderr)


def print_plan(plan, lang: str, file=None) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from doctor.plan.steps import kind_of

    stream = file or sys.stdout
    wide = None if os.environ.get("COLUMNS") or (hasattr(stream, "isatty") and stream.isatty()) else 120
    console = Console(file=stream, highlight=False, width=wide)
    console.print(Text(t("header", lang, target=plan.target, row=plan.row), style="bold"))
    console.print(Text(t("why", lang, why=plan.choice_why.text(lang)), style="dim"))
    pins = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1), title=t("pins", lang), title_justify="left")
    pins.add_column("name", style="cyan", no_wrap=True)
    pins.add_column("version")
    for name in sorted(plan.pins):
        pins.add_row(name, plan.pins[name])
    if plan.pins:
        console.print(pins)
    print_resolution(plan, lang, console)
    if plan.empty:
        console.print(Text(t("empty", lang), style="green"))
    first_run = next((i for i, s in enumerate(plan.steps) if s.runs), len(plan.steps))
    first = [s for s in plan.steps[:first_run] if s.kind == "vendor"]
    auto = [s for s in plan.steps if s.runs]
    hand = [s for s in plan.steps if not s.runs and s not in first]
    if first and auto:
        from doctor.i18n import tr

        console.print(Text(tr("plan.first", lang), style="bold yellow"))
        for s in first:
            console.print(Text(f"- [{s.kind}] {s.why.text(lang)}"), soft_wrap=True)
    else:
        hand = first + hand
    if auto:
        console.print(Text(t("steps", lang), style="bold"))
        for i, s in enumerate(auto, 1):
            line = Text(f"{i}. [{s.kind}/{s.action}] ", style="bold")
            line.append(s.why.text(lang))
            console.print(line)
            for shown in kind_of(s).show(s, lang):
                console.print(Text("   $ " + shown, style="dim"), soft_wrap=True)
    if hand:
        console.print(Text(t("manual", lang), style="bold yellow"))
        for s in hand:
            console.print(Text(f"- [{s.kind}] {s.why.text(lang)}"), soft_wrap=True)
            for shown in kind_of(s).show(s, lang):
                console.print(Text(f"   $ {shown}", style="dim"), soft_wrap=True)
    for key, items in (("residual", [m.text(lang) for m in plan.expected_residual]),
                       ("alternatives", [(a["how"].text(lang) if hasattr(a.get("how"), "text") else a.get("how"))
                                         or f"--prefer {a['prefer']}: vllm-ascend {a['target']}"
                                         + (f" ({'; '.join(a['needs'])})" if a.get("needs") else "")
                                         for a in plan.alternatives]),
                       ("notes", [m.text(lang) for m in plan.notes])):
        if items:
            console.print(Text(t(key, lang), style="bold"))
            for it in items:
                console.print(Text(f"- {it}", style="dim"), soft_wrap=True)


def human_size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def print_resolution(plan, lang: str, console) -> None:
    """Whether the resolver proved the plan: the total download, or pip's own message, the
    hosts that did not answer and what works instead (one runnable command per line)."""
    from rich.text import Text

    from doctor.i18n import tr

    res = plan.resolution or {}
    status = res.get("status")
    if status == "resolved":
        key = "plan.status.resolved_bundle" if res.get("source") == "bundle" else "plan.status.resolved"
        line = tr(key, lang, installer=res.get("installer", "pip"), files=len(res.get("files", [])),
                  size=human_size(res.get("download_bytes", 0)))
        if res.get("unknown_sizes"):
            line += tr("plan.status.unknown_sizes", lang, n=res["unknown_sizes"])
        console.print(Text(line, style="dim"), soft_wrap=True)
    elif status == "not resolved" and plan.runnable:
        key = {"offline": "plan.status.not_resolved", "source-build": "plan.status.source_build"}.get(
            res.get("why"), "plan.status.no_interpreter")
        console.print(Text(tr(key, lang), style="yellow"), soft_wrap=True)
    elif status == "failed":
        failure = res.get("failure", {})
        console.print(Text(tr("plan.status.failed", lang, kind=failure.get("kind")), style="bold red"), soft_wrap=True)
        for x in (failure.get("message") or "").splitlines():
            console.print(Text("  " + x), soft_wrap=True)
        for h in failure.get("hosts", []):
            console.print(Text("  " + tr("plan.status.host", lang, host=h["host"], how=h["how"]), style="red"), soft_wrap=True)
        rem = plan.remedies
        if rem is not None and (rem.notes or rem.commands):
            console.print(Text(tr("plan.status.what_works", lang), style="bold"))
            for n in rem.notes:
                console.print(Text("- " + n.text(lang)), soft_wrap=True)
            for c in rem.commands:
                console.print(Text("- " + c.label.text(lang)), soft_wrap=True)
                console.print(Text(c.shell(), style="dim"), soft_wrap=True)


def print_before_after(before, after, lang: str) -> None:
    first = {}
    for f in before.findings:
        first.setdefault(f.id, f.status)
    rows = []
    seen = set()
    for f in after.findings:
        if f.id in seen:
            continue
        seen.add(f.id)
        old = first.get(f.id, "-")
        if old != f.status:
            rows.append(f"  {f.id}: {old} -> {f.status}")
    for fid, st in first.items():
        if fid not in seen:
            rows.append(f"  {fid}: {st} -> -")
    if rows:
        _out(t("before_after", lang) + ":")
        for r in rows:
            _out(r)


def rollback_command(
    root: str = ROOT,
    python: Optional[str] = PYTHON,
    force: bool = typer.Option(False, "--force", help="Roll back even if the environment changed since the fix."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    lang: Optional[str] = LANG,
    stage: str = STAGE,
    matrix: List[str] = MATRIX,
    npu_smi: Optional[str] = NPU_SMI,
) -> None:
    """Undo the last `fix --apply` on this environment (its journal and file backups), or finish
    one that a killed doctor or a failed rollback left unfinished."""
    from doctor.usecases.check import CheckOptions
    from doctor.usecases.fix import Declined, run_rollback

    language = pick_language(lang)
    opts = CheckOptions(root=root, python=python, stage=stage, matrix=list(matrix), npu_smi=npu_smi)

    def confirm(target_python: str) -> bool:
        if yes:
            return True
        if not sys.stdin.isatty():
            raise UsageError("refusing to change the environment without confirmation: pass --yes")
        return typer.confirm(f"Roll back the last ascend-doctor fix on {target_python}?", err=True)

    try:
        outcome = run_rollback(opts, dict(os.environ), force, confirm, say=_err)
    except Declined:
        raise typer.Exit(1)
    result, code = outcome.result, outcome.exit_code
    if as_json:
        sys.stdout.write(json.dumps({"transaction": result.txn_id,
                                     "restored": {n: {"before": a, "after": b} for n, (a, b) in result.restored.items()},
                                     "note": result.note, "exit_code": code}, ensure_ascii=False, indent=2) + "\n")
    else:
        _out(t("rolled", language, id=result.txn_id))
        for n, (a, b) in result.restored.items():
            _out(f"  {n}: {a or '-'} -> {b or '-'}")
    raise typer.Exit(code)
