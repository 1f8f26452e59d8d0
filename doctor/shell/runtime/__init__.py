"""Processes and sockets with deadlines: the one way a command runs (proc.py), the commands of
``check`` started before the doctor has finished importing itself (prefetch.py), one total budget
of seconds across many waits (deadline.py) and network calls within it (net.py).

Imported first (the entry point starts the prefetched commands), so this package imports nothing
itself.

Entry points: ``proc.run`` / ``proc.start``, ``prefetch.for_command_line``, ``deadline.Deadline``,
``net``."""
