"""The long run of the fault harness of `fix --apply` (issue 9; tests/shell/transaction/test_recovery.py runs a
few trials of the same code): kill the doctor with SIGKILL or SIGHUP at a random point of the
install step of a wheel of thousands of files, run `rollback` at once, and hash every file in
site-packages and bin/ against what was there before. Every trial must end byte-identical.

    .venv/bin/python bench/faults.py [--trials 50] [--signals KILL,HUP] [--files 4000] [--seed N]

Prints one line per trial and a summary; exits 1 if any trial did not end identical.
"""
from __future__ import annotations

import argparse
import random
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fakehost import faults  # noqa: E402
from fakehost import wheelhouse as wh  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--signals", default="KILL,HUP", help="comma-separated: KILL, HUP (alternated)")
    ap.add_argument("--files", type=int, default=faults.BIG_FILES)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    sigs = [getattr(signal, "SIG" + s.strip().upper()) for s in args.signals.split(",") if s.strip()]
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="ascend-doctor-faults-"))
    print(f"work directory {work}; seed {seed}; {args.trials} trials; wheel of {args.files} files", flush=True)
    house = wh.build(work / "house")
    template = wh.template_venv(work)
    dirs = faults.big_house(house, work / "big-house", args.files)
    results = []
    try:
        for n in range(args.trials):
            base = work / f"trial-{n:03d}"
            fake = faults.fresh_host(base, template)
            sig = sigs[n % len(sigs)]
            t = faults.interrupt_install(fake, dirs, sig, faults.random_delay(rng))
            results.append(t)
            print(f"{n + 1:3d} {t.signal:8} delay {t.delay_s:5.2f}s  interrupted={t.killed!s:5}  "
                  f"doctor exit {t.doctor_code}  "
                  f"rollback exit {t.rollback_codes}  identical={t.identical}  {t.seconds:5.1f}s"
                  + (f"  {t.note}" if t.note else "") + (f"  diff: {t.differences}" if t.differences else ""),
                  flush=True)
            if t.identical and not args.keep:
                shutil.rmtree(base, ignore_errors=True)
    finally:
        if not args.keep and all(r.identical for r in results):
            shutil.rmtree(work, ignore_errors=True)
    by_sig = {}
    for r in results:
        by_sig.setdefault(r.signal, []).append(r)
    print()
    for name, rs in sorted(by_sig.items()):
        print(f"{name}: {sum(r.identical for r in rs)}/{len(rs)} byte-identical; "
              f"{sum(r.killed for r in rs)} interrupted during the install step")
    total = sum(r.identical for r in results)
    print(f"total: {total}/{len(results)} byte-identical (seed {seed})")
    return 0 if total == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
