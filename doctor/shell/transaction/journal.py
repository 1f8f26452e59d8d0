"""journal.json: what a transaction did, rewritten atomically and synced at every change, so a
crash leaves the last state. A journal is read as untrusted input: opened O_NOFOLLOW, capped,
checked against its schema (schema.py); one that fails is Damaged and only ever reported."""
from __future__ import annotations

import datetime
import json
import os
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Union

from doctor.errors import UsageError
from doctor.shell.runtime import proc
from doctor.shell.transaction import schema
from doctor.shell.transaction.states import TxnState
from doctor.shell.transaction.statedir import UntrustedState, check_dir, make_dir, read_state, replace_file

MAX_JOURNAL = 64 * 1024 * 1024
# <YYYYmmdd-HHMMSS-pid> and <...-n>: anything else under transactions/ (a set-aside copy) is not one
ID = re.compile(r"^\d{8}-\d{6}-\d{1,10}(-\d{1,4})?$")


def now() -> str:
    return datetime.datetime.now().isoformat(timespec="seconds")


class Journal:
    def __init__(self, directory: Path, data: Optional[Dict] = None):
        self.dir = directory
        self.path = directory / "journal.json"
        self.data: Dict = data if data is not None else {}

    @property
    def id(self) -> str:
        return self.dir.name

    @property
    def backup_root(self) -> Path:
        """Where the backups are: always this directory's, whatever the journal says."""
        return self.dir / "backup"

    @classmethod
    def create(cls, state: Path) -> "Journal":
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        base = make_dir(state / "transactions")
        for n in range(1000):
            d = base / (f"{stamp}-{os.getpid()}" + (f"-{n}" if n else ""))
            try:
                os.mkdir(d, 0o700)
                break
            except FileExistsError:
                continue
        j = cls(d, {"id": d.name, "status": TxnState.STARTED.value, "started": now(), "pid": os.getpid(),
                    "pid_start": proc.process_start_time(os.getpid())})
        try:
            # written whole under a temporary name, then renamed: a doctor killed at this instant
            # leaves no journal.json at all (the directory is skipped), never an empty or half
            # one, which would block every later change as a journal that cannot be trusted
            replace_file(j.path, j._bytes())
        except OSError:
            j.discard()
            raise
        return j

    def discard(self) -> None:
        """A transaction that failed before it changed anything leaves nothing behind."""
        shutil.rmtree(self.dir, ignore_errors=True)

    @classmethod
    def load(cls, directory: Path) -> "Journal":
        """The journal of a transaction directory; Damaged when it cannot be trusted."""
        found = read(directory)
        if isinstance(found, Damaged):
            raise UsageError(found.message())
        return found

    def update(self, **values) -> None:
        self.data.update({k: (v.value if isinstance(v, TxnState) else v) for k, v in values.items()})
        self.save()

    def save(self) -> None:
        replace_file(self.path, self._bytes())

    def _bytes(self) -> bytes:
        from doctor.textsafe import dumps

        # a path that is not UTF-8 (a crafted journal, a file name) stays its escape: never a crash
        return dumps(self.data, indent=1, default=str).encode("utf-8")

    @property
    def status(self) -> TxnState:
        return TxnState(self.data.get("status"))


@dataclass
class Damaged:
    """A transaction directory whose journal cannot be trusted (truncated, crafted, a link, not
    ours): it blocks every change until a person has looked, and is never acted on."""

    dir: Path
    reason: str

    @property
    def id(self) -> str:
        return self.dir.name

    def set_aside(self) -> str:
        return shlex.join(["mv", "--", str(self.dir), str(self.dir) + ".damaged"])

    def message(self) -> str:
        return (f"transaction {self.id} cannot be trusted ({self.reason}); nothing was done with it. If it did not "
                f"finish, the files it replaced are under {self.dir / 'backup'} by their full paths: check the "
                f"environment by hand (pip list, pip check), then set the transaction aside with:\n{self.set_aside()}")


def read(directory: Path) -> Union[Journal, Damaged]:
    try:
        check_dir(directory)
        raw = read_state(directory / "journal.json", MAX_JOURNAL)
    except UntrustedState as e:
        return Damaged(directory, _short(str(e)))
    except OSError as e:
        return Damaged(directory, f"its journal cannot be read: {e.strerror or e}")
    if raw is None:
        return Damaged(directory, "it has no journal.json")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        return Damaged(directory, f"its journal.json is damaged: {str(e)[:80]}")
    why = schema.problem(data, directory.name)
    if why is not None:
        return Damaged(directory, f"its journal.json does not fit: {why}")
    return Journal(directory, data)


def _short(text: str) -> str:
    return text.split("\n")[0][:300]


# what Journal.create leaves when it is killed before its rename (replace_file's temporary name)
_FIRST_JOURNAL_TMP = re.compile(r"^\.journal\.json\.\d+\.[0-9a-f]{8}\.tmp$")


def transactions(state: Path) -> List[Union[Journal, Damaged]]:
    """Every transaction of a state directory, oldest first (a directory that is not a
    transaction's, such as one set aside, is skipped; one that a crash left between its creation
    and its first journal, empty or holding only that journal's temporary file, is skipped too)."""
    base = state / "transactions"
    if not os.path.lexists(base):
        return []
    check_dir(base)
    out: List[Union[Journal, Damaged]] = []
    for d in sorted(base.iterdir()):
        if not ID.match(d.name):
            continue
        try:
            if not os.path.islink(d) and os.path.isdir(d) and all(_FIRST_JOURNAL_TMP.match(n) for n in os.listdir(d)):
                continue
        except OSError:
            pass
        out.append(read(d))
    return out


def unfinished(state: Path) -> List[Union[Journal, Damaged]]:
    """Transactions a killed doctor left half-done, or whose rollback failed, and those whose
    journal cannot be trusted (they may be either), oldest first."""
    return [t for t in transactions(state) if isinstance(t, Damaged) or t.status.unfinished]


def last_transaction(state: Path) -> Optional[Path]:
    raw = read_state(state / "last", 4096)
    name = (raw or b"").decode("utf-8", "replace").strip()
    if not ID.match(name):
        return None
    d = state / "transactions" / name
    return d if d.is_dir() and not d.is_symlink() else None


def set_last(state: Path, txn_id: str) -> None:
    replace_file(state / "last", (txn_id + "\n").encode())


def clear_last(state: Path) -> None:
    try:
        os.unlink(state / "last")
    except FileNotFoundError:
        pass
