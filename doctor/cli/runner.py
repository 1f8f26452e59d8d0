"""How every command line ends: each error as one line on stderr with the contract's exit code,
every child process killed with the doctor (signals included: shell/runtime/proc.py). No typer here:
the typer app (doctor/cli/main.py) and the check front end (doctor/entry.py) both end through
``run_guarded``; the errors of click are recognised by their shape."""
from __future__ import annotations

import errno
import os
import sys
from typing import Any, Callable, List, NoReturn, Sequence

from doctor.errors import DoctorError

# stdout closed by its reader (`ascend-doctor ... | head -1`): the report was cut by the reader, the
# doctor did not fail, so not 1 (the contract's "the doctor itself failed"); 128 + SIGPIPE, the code
# a shell shows for a writer the closed pipe stopped (`yes | head -1` under pipefail: 141)
CLOSED_PIPE = 141


def run_guarded(body: Callable[[], int], args: Sequence[str]) -> NoReturn:
    """Run ``body`` (it returns the exit code) and exit with the code the contract gives; an
    error is said in the language of the command line ``args`` (its --lang, else the
    environment's)."""
    from doctor.shell.runtime import proc

    from doctor import program
    from doctor.cli.invocation import doctor_program

    proc.install_signal_handlers()
    code = 0
    try:
        program.use(doctor_program(os.environ))
        code = body()
    except DoctorError as e:
        say(f"ascend-doctor: error: {e.text(error_lang(list(args)))}")
        code = e.exit_code
    except (KeyboardInterrupt, proc.Terminated) as e:
        code = stopped(e)
    except SystemExit:
        if not stdout_closed():
            raise
        code = CLOSED_PIPE  # click's main loop ends a closed stdout as exit 1
    except Exception as e:
        stop = proc.stop_behind(e)
        if stop is not None:
            code = stopped(stop)
        elif type(e).__name__ == "NoArgsIsHelpError":  # bare `ascend-doctor` (or a group): its help, as pip does
            print(e.ctx.get_help())  # type: ignore[attr-defined]
            code = 0
        elif hasattr(e, "exit_code") and hasattr(e, "format_message"):  # click usage errors
            say(f"ascend-doctor: error: {e.format_message()}")
            code = e.exit_code
        elif type(e).__name__ == "Abort":
            code = 130
        else:
            if os.environ.get("ASCEND_DOCTOR_DEBUG"):
                raise
            say(f"ascend-doctor: internal error: {type(e).__name__}: {e} "
                "(set ASCEND_DOCTOR_DEBUG=1 for a traceback)")
            code = 1
    finally:
        proc.kill_all()
        program.use([program.DOCTOR])  # an in-process caller (a test) starts from the plain name
    signalled = proc.signalled()
    if signalled is not None and code in (0, 3, 4):
        code = 128 + signalled  # a signal whose exception Python swallowed still ends the run as stopped
    if not flushed():
        code = CLOSED_PIPE  # the report was still in the buffer when the reader went
    sys.exit(code)


def stdout_closed() -> bool:
    """The run ended because stdout's reader closed it: the streams were pacified, by
    :func:`as_click_runs` or by click's main loop (its PacifyFlushWrapper), as they are on EPIPE."""
    # by its name: typer vendors click (typer._click.utils), and the front end loads neither
    return isinstance(sys.stdout, _Pacified) or type(sys.stdout).__name__ == "PacifyFlushWrapper"


def flushed() -> bool:
    """stdout written out; False (the streams pacified) when its reader has closed it."""
    try:
        sys.stdout.flush()
    except OSError as e:
        if e.errno != errno.EPIPE:
            return True  # another error: the interpreter's exit reports it as it would
        sys.stdout = _Pacified(sys.stdout)
        sys.stderr = _Pacified(sys.stderr)
        return False
    except ValueError:  # stdout closed in this process
        return True
    return True


def as_click_runs(command: Callable[[], int]) -> int:
    """``command`` ended the way click's main loop ends a command (standalone_mode=False): Ctrl-C
    is exit 130 without a word, end of input a blank line and 130, a closed stdout exit 141
    (CLOSED_PIPE, as run_guarded makes click's 1) with nothing more written. The front end runs check through this, so that it ends like the
    typer command."""
    try:
        return command()
    except KeyboardInterrupt:
        return 130
    except EOFError:
        print(file=sys.stderr)
        return 130
    except OSError as e:
        if e.errno != errno.EPIPE:
            raise
        sys.stdout = _Pacified(sys.stdout)
        sys.stderr = _Pacified(sys.stderr)
        return CLOSED_PIPE


class _Pacified:
    """A stream whose flush ignores a closed pipe (click's PacifyFlushWrapper)."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        try:
            self.wrapped.flush()
        except OSError as e:
            if e.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


def stopped(stop: BaseException) -> int:
    """Ctrl-C or SIGTERM/SIGHUP: the children die now; the exit code says which."""
    from doctor.shell.runtime import proc

    proc.kill_all()
    if isinstance(stop, proc.Terminated):
        say(f"ascend-doctor: terminated by signal {stop.signum}")
        return 128 + stop.signum
    say("ascend-doctor: interrupted")
    return 130


def error_lang(args: List[str]) -> str:
    """The language of an error message: the command line's --lang (when it is one the doctor
    speaks), else the environment's; never an error of its own."""
    from doctor.i18n import LANGS, resolve_lang

    option = None
    for i, a in enumerate(args):
        if a == "--lang" and i + 1 < len(args):
            option = args[i + 1]
        elif a.startswith("--lang="):
            option = a.split("=", 1)[1]
    return resolve_lang(option if option in LANGS else None, os.environ)


def say(line: str) -> None:
    """stderr may be gone (the terminal of a dropped SSH session): never fail on it. A message
    quotes data (a path, a name from a file): its control characters are shown escaped."""
    from doctor.textsafe import clean_block

    try:
        print(clean_block(line), file=sys.stderr)
    except OSError:
        pass
