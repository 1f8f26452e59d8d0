"""Reading the host: files under a root, the environment and commands (root.py's ``Host``, what
the probes read through), files that may be anything (files.py), logs as byte streams
(logread.py), the on-disk cache (cache.py), the ``--python`` check (interpreter.py), the progress
shown on the terminal (progress.py) and the matrix overlay file (matrix_overlay.py).

Imported by every command first (doctor/shell/__init__ keeps the catalogue in cache.py), so this
package imports nothing itself.

Entry points: ``root.Host``, ``files``, ``cache``, ``logread``, ``progress.TerminalProgress``."""
