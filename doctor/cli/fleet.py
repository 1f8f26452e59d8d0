"""`fleet compare` (saved snapshots) and `fleet check` (collect them over ssh, kubectl or Ray)."""
from __future__ import annotations

import sys
from typing import Callable, List, Optional

import typer
import typer.core

from doctor.cli.options import JSON, LANG, MATRIX, float_option, pick_language

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

VERBOSE = typer.Option(False, "-v", "--verbose", help="Also list the cross-node checks that passed.")


def _emit(report, as_json: bool, lang: str, verbose: bool) -> None:
    from doctor.fleet.render import print_report, report_json

    if as_json:
        sys.stdout.write(report_json(report, lang) + "\n")
    else:
        print_report(report, lang, verbose)
    raise typer.Exit(report.exit_code())


@fleet_app.command("compare")
def compare_command(
    snapshots: List[str] = typer.Argument(..., help="Snapshot files, one per node (ascend-doctor snapshot > node.json)."),
    as_json: bool = JSON,
    lang: Optional[str] = LANG,
    verbose: bool = VERBOSE,
    matrix: List[str] = MATRIX,
) -> None:
    """One table of layers x nodes; what must agree, what must be unique, each node's own check."""
    from doctor.usecases.fleet import run_compare

    language = pick_language(lang)
    _emit(run_compare(snapshots, matrix), as_json, language, verbose)


def _progress(enabled: bool) -> Optional[Callable]:
    """A rich progress bar on stderr, only on a terminal."""
    if not enabled or not sys.stderr.isatty():
        return None
    from rich.progress import Progress

    bars: List[Progress] = []

    def start(title: str, total: int):
        for bar in bars:
            bar.stop()
        bar = Progress(transient=True)
        bars.append(bar)
        task = bar.add_task(title, total=total)
        bar.start()

        def tick(reply) -> None:
            bar.advance(task)
            if bar.tasks[task].completed >= total:
                bar.stop()
        return tick
    return start


@fleet_app.command("check", cls=_OptionalRayAddress)
def check_command(
    ssh: Optional[str] = typer.Option(None, "--ssh", help="Hosts to reach with OpenSSH: 'node1,node2' ([user@]host or ssh://user@host:port)."),
    kubectl: Optional[str] = typer.Option(None, "--kubectl", help="Label selector of the serving pods (kubectl exec into each)."),
    ray: Optional[str] = typer.Option(None, "--ray", metavar="[ADDRESS]",
                                      help="Run on every alive node of a Ray cluster (--ray, or --ray ADDRESS; needs ascend-doctor[fleet])."),
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n", help="Kubernetes namespace (with --kubectl)."),
    context: Optional[str] = typer.Option(None, "--context", help="kubectl context (with --kubectl)."),
    container: Optional[str] = typer.Option(None, "--container", "-c", help="Container in the pod (with --kubectl)."),
    ssh_config: Optional[str] = typer.Option(None, "--ssh-config", help="ssh -F FILE (identity, port, known hosts)."),
    ssh_option: List[str] = typer.Option([], "--ssh-option", help="ssh -o OPTION (repeatable), e.g. Port=2222."),
    remote_doctor: str = typer.Option("ascend-doctor", "--remote-doctor", help="How the doctor is started on the nodes, e.g. /opt/venv/bin/ascend-doctor."),
    remote_python: Optional[str] = typer.Option(None, "--remote-python", help="--python for the doctor on the nodes."),
    serve_args_file: Optional[str] = typer.Option(None, "--serve-args-file", help="The launch script on the nodes (same path everywhere): kv-transfer-config, exports."),
    mooncake_master: Optional[str] = typer.Option(None, "--mooncake-master", help="Probe mooncake_master from every node: HOST:PORT[:METRICS_PORT]."),
    ping: bool = typer.Option(False, "--ping", help="Also ping between the nodes' NPUs (hccn_tool -ping; A3: -hccs_ping)."),
    timeout: float = float_option(120.0, "--timeout", help="Seconds each node has to answer."),
    save: Optional[str] = typer.Option(None, "--save", help="Keep each node's snapshot in this directory (for fleet compare)."),
    as_json: bool = JSON,
    lang: Optional[str] = LANG,
    verbose: bool = VERBOSE,
    matrix: List[str] = MATRIX,
) -> None:
    """Collect a snapshot from every node (ssh, kubectl exec or Ray) and compare them."""
    from doctor.shell.fleet.transport import RemoteSnapshot
    from doctor.usecases.fleet import FleetCheckOptions, run_fleet_check

    language = pick_language(lang)
    opts = FleetCheckOptions(
        ssh=ssh, kubectl=kubectl, ray=ray, namespace=namespace, context=context, container=container,
        ssh_config=ssh_config, ssh_options=list(ssh_option), timeout=timeout, save=save, ping=ping,
        matrix=list(matrix), lang=language,
        remote=RemoteSnapshot(doctor=remote_doctor, python=remote_python, serve_args_file=serve_args_file,
                              mooncake_master=mooncake_master))
    report = run_fleet_check(opts, _progress(not as_json))
    _emit(report, as_json, language, verbose)
