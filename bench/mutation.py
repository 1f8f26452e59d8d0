"""Bench: mutation testing of the pure core with mutmut (not run in CI).

Copies the checkout to a scratch directory, lets mutmut change one thing at a time in the target
files (a comparison, a constant, a keyword argument, a string...) and runs the fast unit tests
that cover the changed function; a mutant the tests do not notice "survives". Prints the kill
ratio per file and writes a report listing every survivor with its diff.

    pip install 'mutmut==3.8.1'   # 3.x (3.8.1 tested), into the environment that runs the tests
    python bench/mutation.py                                  # the pure core
    python bench/mutation.py doctor/shell/transaction/engine.py doctor/shell/transaction/run_plan.py --tests tests/shell/transaction/test_engine.py
    python bench/mutation.py doctor/rules/cann.py --jobs 2 --report /tmp/cann.md
    python bench/mutation.py --sample 300 --seed 20261201 --jobs 1   # a random sample of the core's ~22 000 mutants

Exit status 0 when the kill ratio reaches --min (85% by default), 3 otherwise.
"""
from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parents[1]
PURE_CORE = ["doctor/rules/*.py", "doctor/findings.py", "doctor/layers.py", "doctor/versions.py",
             "doctor/matrix/query.py", "doctor/plan/*.py"]
# The fast unit tests of the pure core: plain data in, no host, no processes. (tests/test_purity.py
# is left out: it shuts os.environ, which mutmut's trampolines read on every call.)
FAST_TESTS = ["tests/rules", "tests/plan", "tests/matrix", "tests/test_versions.py",
              "tests/test_findings.py", "tests/test_catalog.py", "tests/test_matrix_query.py",
              "tests/test_tuning_parse.py", "tests/test_pipcheck.py",
              "tests/test_image_parse.py"]
# Tests that read the source text (AST scans): they see mutmut's copies with every mutant inside.
SOURCE_READERS = ["tests/rules/test_rule_sources.py::test_every_source_literal_in_the_rules_resolves"]
KILLED = {"killed", "timeout", "caught by type check"}
COPY_IGNORE = shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.pyc", ".work", "mutants", ".pytest_cache",
                                     ".hypothesis", "*.egg-info", "build", "dist")


def targets(patterns: List[str]) -> List[str]:
    out: List[str] = []
    for pattern in patterns:
        matched = sorted(str(p.relative_to(REPO)) for p in REPO.glob(pattern) if p.name != "__init__.py")
        if not matched:
            raise SystemExit(f"mutation: {pattern}: no such file in {REPO}")
        out.extend(m for m in matched if m not in out)
    return out


def configure(work: Path, files: List[str], tests: List[str]) -> None:
    """mutmut reads [tool.mutmut] from the copy's pyproject.toml: mutate only ``files``, select
    tests from ``tests``, skip the tests marked slow, in mutmut's own process (``-n 0``: the
    pytest configuration runs the suite in xdist workers otherwise)."""
    def toml_list(items):
        return "[" + ", ".join(f'"{i}"' for i in items) + "]"

    with open(work / "pyproject.toml", "a", encoding="utf-8") as fh:
        fh.write("\n[tool.mutmut]\n"
                 'source_paths = ["doctor"]\n'
                 f"only_mutate = {toml_list(files)}\n"
                 f"pytest_add_cli_args_test_selection = {toml_list(tests)}\n"
                 'pytest_add_cli_args = ["-p", "no:cacheprovider", "-n", "0", "-m", "not slow", "-q"'
                 + "".join(f', "--deselect={t}"' for t in SOURCE_READERS) + "]\n"
                 'also_copy = ["matrices/", "docs/", "tests/"]\n')


def run(cmd: List[str], cwd: Path, timeout: float) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"mutation: {' '.join(cmd)} exited {proc.returncode}")
    return proc.stdout


def results(work: Path) -> Dict[str, str]:
    """mutant name -> status, from ``mutmut results --all true``."""
    out = run([sys.executable, "-m", "mutmut", "results", "--all", "true"], work, 600)
    found = {}
    for line in out.splitlines():
        m = re.match(r"^\s*([\w.]+__mutmut_\d+): (.+?)\s*$", line)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def mutant_diffs(work: Path, files: List[str], names: List[str]) -> Dict[str, List[str]]:
    """name -> the changed lines, read from mutmut's trampolined copies (each mutant is a function
    beside the original ``..._mutmut_orig``): much faster than ``mutmut show`` per mutant."""
    import ast
    import difflib

    out: Dict[str, List[str]] = {}
    wanted = set(names)
    for f in files:
        path = work / "mutants" / f
        if not path.exists():
            continue
        # the whole function, its name made the original's: a mutated default shows in the def line
        funcs = {n.name: ast.unparse(n).replace(n.name, n.name.rsplit("__mutmut_", 1)[0], 1).splitlines()
                 for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and "__mutmut_" in n.name}
        module = f[:-3].replace("/", ".")
        for fname, body in funcs.items():
            name = f"{module}.{fname}"
            if name not in wanted:
                continue
            orig = funcs.get(fname.rsplit("__mutmut_", 1)[0] + "__mutmut_orig", [])
            out[name] = [line for line in difflib.unified_diff(orig, body, lineterm="", n=0)
                         if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    return out


def source_file(mutant: str, files: List[str]) -> str:
    """doctor.rules.cann.x__arch__mutmut_1 -> doctor/rules/cann.py"""
    for f in files:
        if mutant.startswith(f[:-3].replace("/", ".") + "."):
            return f
    return mutant.split(".x", 1)[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*", help=f"files or globs to mutate (default: {' '.join(PURE_CORE)})")
    ap.add_argument("--tests", nargs="+", default=FAST_TESTS, help="test files or directories that may kill mutants")
    ap.add_argument("--jobs", type=int, default=2, help="mutants run in parallel")
    ap.add_argument("--min", type=float, default=85.0, help="kill ratio (%%) below which the bench fails")
    ap.add_argument("--report", default=str(REPO / "bench" / ".work" / "mutation-report.md"))
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy (mutmut browse / show there)")
    ap.add_argument("--sample", type=int, default=0, help="run a random sample of this many mutants (0: all)")
    ap.add_argument("--seed", type=int, default=1, help="the sample's random seed (the same seed, the same sample)")
    args = ap.parse_args()
    try:
        import mutmut  # noqa: F401  (only whether it is there)
    except ImportError:
        raise SystemExit("mutation: mutmut is not installed here: pip install mutmut")
    files = targets(args.targets or PURE_CORE)
    work = Path(tempfile.mkdtemp(prefix="doctor-mutation-"))
    start = time.time()
    try:
        shutil.copytree(REPO, work, dirs_exist_ok=True, ignore=COPY_IGNORE)
        configure(work, files, args.tests)
        print(f"mutating {len(files)} files in {work}; tests: {' '.join(args.tests)}", file=sys.stderr)
        log = work / "mutmut-run.log"
        chosen: List[str] = []
        with open(log, "w", encoding="utf-8") as fh:
            if args.sample:
                # a filter nothing matches: mutmut generates every mutant, then stops
                subprocess.run([sys.executable, "-m", "mutmut", "run", "doctor.__sample__.x__mutmut_0"], cwd=work,
                               stdout=fh, stderr=subprocess.STDOUT, timeout=6 * 3600, check=False)
                every = sorted(results(work))
                chosen = random.Random(args.seed).sample(every, min(args.sample, len(every)))
                print(f"{len(chosen)} of {len(every)} mutants, seed {args.seed}", file=sys.stderr)
            subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(args.jobs), *chosen], cwd=work,
                           stdout=fh, stderr=subprocess.STDOUT, timeout=6 * 3600, check=False)
        status = results(work)
        if chosen:
            picked = set(chosen)
            status = {n: st for n, st in status.items() if n in picked}
        if status and all(st == "not checked" for st in status.values()):
            tail = log.read_text(encoding="utf-8", errors="replace").replace("\r", "\n").splitlines()[-30:]
            raise SystemExit("mutation: mutmut checked nothing (the clean test run failed?):\n" + "\n".join(tail))
        per_file: Dict[str, Counter] = defaultdict(Counter)
        survivors: Dict[str, List[str]] = defaultdict(list)
        for name, st in status.items():
            f = source_file(name, files)
            per_file[f][st] += 1
            if st not in KILLED:
                survivors[f].append(name)
        total = Counter()
        for c in per_file.values():
            total.update(c)
        killed = sum(total[s] for s in KILLED)
        ratio = 100.0 * killed / max(sum(total.values()), 1)
        lines = [f"# Mutation testing: {killed} of {sum(total.values())} mutants killed ({ratio:.1f}%)", "",
                 f"Targets: {', '.join(files)}", f"Tests: {' '.join(args.tests)} (not slow)",
                 (f"A random sample of {len(status)} mutants (seed {args.seed})" if args.sample else "Every mutant"),
                 f"mutmut, {args.jobs} parallel; {time.time() - start:.0f} s", "",
                 "| file | mutants | killed | survived | no tests | other | kill ratio |", "|---|---|---|---|---|---|---|"]
        for f in sorted(per_file):
            c = per_file[f]
            n = sum(c.values())
            k = sum(c[s] for s in KILLED)
            other = n - k - c["survived"] - c["no tests"]
            lines.append(f"| {f} | {n} | {k} | {c['survived']} | {c['no tests']} | {other} | {100.0 * k / n:.1f}% |")
        lines += ["", "## Survivors", ""]
        diffs = mutant_diffs(work, files, [n for names in survivors.values() for n in names])
        for f in sorted(survivors):
            lines += [f"### {f}", ""]
            for name in sorted(survivors[f], key=lambda s: (s.rsplit("__mutmut_", 1)[0], int(s.rsplit("_", 1)[1]))):
                changed = diffs.get(name, ["(diff not found: mutmut show " + name + ")"])
                lines += [f"- `{name}` ({status[name]})", "  ```diff", *("  " + line for line in changed[:8]), "  ```"]
            lines.append("")
        report = Path(args.report)
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print("\n".join(lines[:9 + len(per_file)]))
        print(f"\nreport: {report}")
        return 0 if ratio >= args.min else 3
    finally:
        if args.keep:
            print(f"scratch copy kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
