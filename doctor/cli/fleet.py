"""`fleet compare` (saved snapshots) and `fleet check` (collect them over ssh, kubectl or Ray)."""
from __future__ import annotations

import sys
from typing import Any, Callable, List, Optional

import typer
import typer.core

from doctor.cli import params as p
from doctor.cli.options import takes
from doctor.cli.params import Opt


class _OptionalRayAddress(typer.core.TyperCommand):
    """`--ray` alone means the cluster Ray finds itself (address "auto"); `--ray ADDRESS` names one.
    Typer has no options with an optional value, so a bare --ray gets its value here."""

    def parse_args(self, ctx, args):
        args = list(args)
        for i, a in enumerate(args):
            if a == "--":
                break
            if a == "--ray" and (i + 1 == len(args) or args[i + 1].startswith("-")):
                args.insert(i + 1, "auto")
                break
        return super().parse_args(ctx, args)


fleet_app = typer.Typer(no_args_is_help=True, help="Many nodes: compare their snapshots, or collect and compare them.")

OUTPUT = (p.JSON, p.LANG, p.VERBOSE.but(help="Also list the cross-node checks that passed."))


def _emit(report, out) -> None:
    from doctor.fleet.render import print_report, report_json

    if out.as_json:
        sys.stdout.write(report_json(report, out.lang) + "\n")
    else:
        print_report(report, out.lang, out.verbose)
    raise typer.Exit(report.exit_code())


@fleet_app.command("compare")
@takes(*OUTPUT, p.MATRIX)
def compare_command(
    snapshots: List[str] = typer.Argument(..., help="Snapshot files, one per node (ascend-doctor snapshot > node.json)."),
    **params: Any,
) -> None:
    """One table of layers x nodes; what must agree, what must be unique, each node's own check."""
    from doctor.usecases.fleet import run_compare

    out = p.output(params)
    _emit(run_compare(snapshots, params["matrix"]), out)


def _progress(enabled: bool) -> Optional[Callable]:
    """A progress bar on stderr, only on a terminal (stdout carries the report)."""
    if not enabled or not sys.stderr.isatty():
        return None
    from doctor.shell.host.progress import rich_bar

    bars: List[Any] = []

    def start(title: str, total: int):
        for bar in bars:
            bar.stop()
        bar = rich_bar(("text", "bar", "of", "elapsed"))
        bars.append(bar)
        task = bar.add_task(title, total=total)

        def tick(reply) -> None:
            bar.advance(task)
            if bar.tasks[task].completed >= total:
                bar.stop()
        return tick
    return start


FLEET_CHECK = (
    Opt("ssh", ("--ssh",), "str", None, "Hosts to reach with OpenSSH: 'node1,node2' ([user@]host or ssh://user@host:port)."),
    Opt("kubectl", ("--kubectl",), "str", None, "Label selector of the serving pods (kubectl exec into each)."),
    Opt("ray", ("--ray",), "str", None,
        "Run on every alive node of a Ray cluster (--ray, or --ray ADDRESS; needs Ray in the doctor's environment).", metavar="[ADDRESS]"),
    Opt("namespace", ("--namespace", "-n"), "str", None, "Kubernetes namespace (with --kubectl)."),
    Opt("context", ("--context",), "str", None, "kubectl context (with --kubectl)."),
    Opt("container", ("--container", "-c"), "str", None, "Container in the pod (with --kubectl)."),
    Opt("ssh_config", ("--ssh-config",), "str", None, "ssh -F FILE (identity, port, known hosts)."),
    Opt("ssh_option", ("--ssh-option",), "list", [], "ssh -o OPTION (repeatable), e.g. Port=2222."),
    Opt("remote_doctor", ("--remote-doctor",), "str", "ascend-doctor",
        "How the doctor is started on the nodes, e.g. /opt/venv/bin/ascend-doctor."),
    Opt("remote_python", ("--remote-python",), "str", None, "--python for the doctor on the nodes."),
    p.SERVE_ARGS_FILE.but(help="The launch script on the nodes (same path everywhere): kv-transfer-config, exports."),
    p.MOONCAKE_MASTER.but(help="Probe mooncake_master from every node: HOST:PORT[:METRICS_PORT]."),
    Opt("ping", ("--ping",), "flag", False, "Also ping between the nodes' NPUs (hccn_tool -ping; A3: -hccs_ping)."),
    Opt("timeout", ("--timeout",), "seconds", 120.0, "Seconds each node has to answer."),
    Opt("save", ("--save",), "str", None, "Keep each node's snapshot in this directory (for fleet compare)."),
    *OUTPUT, p.MATRIX,
)


@fleet_app.command("check", cls=_OptionalRayAddress)
@takes(*FLEET_CHECK)
def check_command(**params: Any) -> None:
    """Collect a snapshot from every node (ssh, kubectl exec or Ray) and compare them."""
    from doctor.shell.fleet.transport import RemoteSnapshot
    from doctor.usecases.fleet import FleetCheckOptions, run_fleet_check

    out = p.output(params)
    opts = FleetCheckOptions(
        **{k: params[k] for k in ("ssh", "kubectl", "ray", "namespace", "context", "container", "ssh_config", "timeout",
                                  "save", "ping")},
        ssh_options=list(params["ssh_option"]), matrix=list(params["matrix"]), lang=out.lang,
        remote=RemoteSnapshot(doctor=params["remote_doctor"], python=params["remote_python"],
                              serve_args_file=params["serve_args_file"], mooncake_master=params["mooncake_master"]))
    _emit(run_fleet_check(opts, _progress(not out.as_json)), out)
