"""Console entry point: start the slow probe processes, then import and run the CLI."""
from __future__ import annotations

import sys


def main() -> None:
    from doctor.shell.prefetch import for_command_line

    for_command_line(sys.argv[1:])
    from doctor.cli.main import main as cli_main

    cli_main()
