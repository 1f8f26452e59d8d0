"""The processes of a transaction. Each step runs in a process group of its own (shell.runtime.proc)
with the transaction's marker in its environment; the journal keeps the group and the kernel's
start time of its leader. A later doctor (after a kill -9) waits for those processes before it
touches any file, and kills a group only when it can prove the group is the transaction's own:
the recorded pid leads the recorded group, it started when the journal says, and it (or, once
the leader is gone, every process left in its session) carries the marker. A planted journal
naming some other process group gets nothing killed (issue 21)."""
from __future__ import annotations

import os
import time
from typing import Callable, Dict, List, Mapping, Optional

from doctor.errors import UsageError
from doctor.i18n import T
from doctor.shell.runtime import proc

MARKER = "ASCEND_DOCTOR_TXN"  # = the transaction's id, in the environment of every step it runs
MAX_ENVIRON = 1024 * 1024


def marked(env: Mapping[str, str], txn_id: str) -> Dict[str, str]:
    return dict(env, **{MARKER: txn_id})


def _stat(pid: int) -> Optional[List[bytes]]:
    """/proc/PID/stat fields after the command name: state, ppid, pgrp, session, ... starttime."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read(4096)
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    return fields if len(fields) >= 20 and fields[0] != b"Z" else None


def carries_marker(pid: int, txn_id: str, tries: int = 5) -> bool:
    for _ in range(tries):
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                data = fh.read(MAX_ENVIRON)
        except OSError:
            return False
        if data:
            return f"{MARKER}={txn_id}".encode() in data.split(b"\0")
        # a process in the middle of exec shows no environment for a moment (seen under load:
        # a grandchild of the step, forked and exec'ing, was taken for another's)
        time.sleep(0.01)
    return False


def record_process(pid: int) -> Dict[str, object]:
    """What the journal keeps of a step's process: its group and its start time."""
    try:
        pgid = os.getpgid(pid)
    except OSError:
        pgid = pid
    return {"pid": pid, "pgid": pgid, "start": proc.process_start_time(pid)}


def _members(pgid: int) -> List[int]:
    out: List[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if name.isdigit():
            fields = _stat(int(name))
            if fields is not None and fields[2] == str(pgid).encode():
                out.append(int(name))
    return out


def owned_group(current: object, txn_id: str) -> Optional[int]:
    """The process group of the journal's ``current`` record when something in it still runs
    and it provably is this transaction's, else None."""
    if not isinstance(current, dict):
        return None
    pid, pgid, start = current.get("pid"), current.get("pgid"), current.get("start")
    if not (isinstance(pid, int) and isinstance(pgid, int)) or isinstance(pid, bool) or pid != pgid or pid <= 1:
        return None  # only a group leader the doctor started itself (its own session) is recorded
    leader = _stat(pid)
    if leader is not None:  # alive: the very process the journal recorded, or another's now
        ours = leader[19].decode() == start and leader[2] == str(pgid).encode() and carries_marker(pid, txn_id)
        return pgid if ours else None
    # The leader is gone. While any process is left in a group, the kernel gives nobody its
    # number: what is left in our session, all carrying the marker, is ours.
    members = [m for m in _members(pgid) if (_stat(m) or [b""] * 4)[3] == str(pgid).encode()]
    if members and all(carries_marker(m, txn_id) for m in members):
        return pgid
    return None


def wait_for_leftovers(journal, timeout: float = 30.0, grace: float = 3.0,
                       say: Callable[[str], None] = lambda s: None) -> None:
    """A doctor killed during a step leaves its pip to PDEATHSIG and the guard (milliseconds);
    the next doctor must not touch the files before pip is gone. Wait for it; after ``grace``
    seconds kill what is left of the transaction's own group; refuse if even that does not end
    it (a process stuck in the kernel)."""
    current = journal.data.get("current")
    pgid = owned_group(current, journal.id)
    if pgid is None:
        return
    say(f"waiting for pid {current['pid']} of transaction {journal.id} to end")
    start = time.monotonic()
    killed = False
    while pgid is not None:
        waited = time.monotonic() - start
        if not killed and waited > grace:
            try:
                os.killpg(pgid, 9)
            except OSError:
                pass
            killed = True
        if waited > timeout:
            raise UsageError(T("fix.error.process_running", pid=current["pid"], id=journal.id, pgid=pgid))
        time.sleep(0.05)
        pgid = owned_group(current, journal.id)
