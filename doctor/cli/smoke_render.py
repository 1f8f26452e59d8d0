"""How `ascend-doctor smoke` shows its results to people (its progress bar is the shell's
TerminalProgress: doctor/shell/host/progress.py)."""
from __future__ import annotations

import sys
from typing import Any, Optional

from doctor import terminal
from doctor.i18n import tr
from doctor.smoke.result import human_bytes


def show_report(report: Any, out: Any) -> None:
    """smoke's report: one JSON object, or the verdict and every stage's figures."""
    if out.as_json:
        from doctor.render import print_json

        print_json(report.to_json(out.lang))
    else:
        print_report(report, out.lang, out.verbose)


def print_report(report: Any, lang: str, verbose: bool) -> None:
    from rich.text import Text

    from doctor.render import print_check

    timings = {f"smoke.{s.name}": round(s.seconds * 1000, 1) for s in report.stages}
    # every stage in full: a passing stage's line is its measurement (load time, first token, tokens/s)
    print_check(report.verdict, stage="runtime", target_row=None, timings=timings, lang=lang, verbose=verbose,
                exit_code=report.exit_code(), header=tr("smoke.cli.header", lang, device=report.device,
                                                        python=report.python), collapse=False)
    console = terminal.console(file=sys.stdout, highlight=False, soft_wrap=True)  # never wrapped, never padded
    for stage in report.stages:
        m = stage.metrics
        if stage.name == "endpoint" and m.get("ttft_ms"):
            console.print(Text(tr("smoke.cli.throughput", lang, completed=m["completed"], requests=m["requests"],
                                  duration=m["duration_s"], rps=m["request_throughput"], otps=m["output_throughput"],
                                  source=m["tokens_counted_from"]), style="dim"))
            for key in ("ttft", "tpot", "itl", "e2el"):
                s = m.get(f"{key}_ms") or {}
                console.print(Text("  " + tr("smoke.cli.latency", lang, metric=key.upper(),
                                            **{k: _num(s.get(k)) for k in ("mean", "p50", "p90", "p99")}), style="dim"))
        if stage.name == "kvpool" and stage.status != "skip":
            from doctor.smoke.kvpool_report import text_lines

            for line in text_lines(m, lang):
                console.print(Text(line, style="dim"))
            if m.get("report"):
                console.print(Text("  " + tr("smoke.cli.report_written", lang, path=m["report"])))
            if m.get("report_error"):
                console.print(Text("  " + tr("smoke.cli.report_error", lang, error=m["report_error"])))
        if stage.name == "collective" and (verbose or stage.status != "ok"):
            for row in m.get("sizes", []):
                console.print(Text("  " + tr("smoke.cli.busbw", lang, size=human_bytes(row["bytes"]), time=row["time_us"],
                                            algbw=row["algbw_gbps"], busbw=row["busbw_gbps"]), style="dim"))
    if report.golden_written:
        console.print(Text(tr("smoke.cli.golden_written", lang, path=report.golden_written)))


def _num(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.1f}"
