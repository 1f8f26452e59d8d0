"""Bounds every command line shares (the typer app and check's front end alike)."""

# the most seconds any float option of the CLI takes (30 days): a bigger wait is no wait a user
# means, and 1e18 or 1e308 overflowed the probes' waits ("the devices probe crashed")
MAX_OPTION_SECONDS = 30 * 86400.0
