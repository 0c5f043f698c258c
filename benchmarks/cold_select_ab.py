"""Cold ``budgetctx select`` of one file, two source trees alternating run by run (issue 27).

Each run is a fresh ``python -m budgetctx.cli select FILE -b BUDGET --selector S`` with one
tree first on ``PYTHONPATH``; the trees alternate (A, B, B, A, A, B, ...) so that the machine's
load hits both alike. Reports the median wall time and the median CPU time (user + system of
the child) per tree, and whether scipy was imported (``-X importtime`` on one extra run each).
The rank cache is warmed first, so these are "every later run" figures. Informational only.

    python benchmarks/cold_select_ab.py --before /work/main/src --after src \\
        --file src/budgetctx/data/sample_discharge_note.txt --budget 256 --selector lead
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def run(src: Path, args: argparse.Namespace, *extra: str) -> tuple[float, float, str]:
    env = {**os.environ, "PYTHONPATH": str(src.resolve())}
    cmd = [sys.executable, *extra, "-m", "budgetctx.cli", "select", str(args.file)]
    cmd += ["-b", str(args.budget), "--selector", args.selector]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stderr


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", type=Path, required=True)
    p.add_argument("--after", type=Path, required=True)
    p.add_argument("--file", type=Path, required=True)
    p.add_argument("--budget", type=int, default=256)
    p.add_argument("--selector", default="lead")
    p.add_argument("--repeat", type=int, default=9)
    args = p.parse_args()
    trees = {"before": args.before, "after": args.after}
    for src in trees.values():  # warm the rank cache and the bytecode
        run(src, args)
    walls: dict[str, list[float]] = {k: [] for k in trees}
    cpus: dict[str, list[float]] = {k: [] for k in trees}
    for i in range(args.repeat):
        order = list(trees) if i % 2 == 0 else list(trees)[::-1]
        for name in order:
            w, c, _ = run(trees[name], args)
            walls[name].append(w)
            cpus[name].append(c)
    print(f"load average: {os.getloadavg()[0]:.2f}; {args.repeat} runs per tree, alternating")
    for name, src in trees.items():
        _, _, imports = run(src, args, "-X", "importtime")
        scipy = any("| scipy" in line for line in imports.splitlines())
        print(
            f"{name:<7} {src}: wall median {statistics.median(walls[name]):.3f} s "
            f"(min {min(walls[name]):.3f}), CPU median {statistics.median(cpus[name]):.3f} s; "
            f"imports scipy: {scipy}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
