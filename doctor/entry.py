"""Console entry point: start the slow probe processes, then import and run the CLI.

Signals are trapped first: a SIGTERM or SIGHUP (an SSH session that drops) while the doctor is
still importing must not leave the started processes behind, nor print a traceback.
"""
from __future__ import annotations

import sys


def main() -> None:
    from doctor.shell import proc

    proc.install_signal_handlers()
    try:
        from doctor.shell.prefetch import for_command_line

        for_command_line(sys.argv[1:])
        from doctor.cli.main import main as cli_main
    except Exception as e:  # a stop that arrived while a class was being defined comes wrapped
        stop = proc.stop_behind(e)
        if stop is None:
            raise
        proc.kill_all()
        sys.exit(128 + stop.signum if isinstance(stop, proc.Terminated) else 130)
    except (proc.Terminated, KeyboardInterrupt) as e:
        proc.kill_all()
        sys.exit(128 + e.signum if isinstance(e, proc.Terminated) else 130)
    cli_main()
