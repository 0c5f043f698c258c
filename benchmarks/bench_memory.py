"""Peak memory of one ``build_context`` call, this tree against another (issue 27: "peak memory
not above today's").

Each measurement is a fresh Python process that imports budgetctx from the given ``src``
folder, reads one document from a file, runs ``build_context(text, B, selector=S)`` once and
reports its peak resident set (KiB: ``VmHWM`` from /proc/self/status on Linux, else
``ru_maxrss``) just before the call (interpreter, imports and the text) and after it. The
documents are written once by this process (bench_floor.py's gov_report inputs cut to each
size), so both trees read the same bytes and neither pays for building them. Trees alternate
per cell (before, after, before, after ...); the table gives the median peak of ``--repeats``
processes, and the call's own share (after minus before). Peak RSS does not depend on machine
load, unlike time.

    PYTHONPATH=src python benchmarks/bench_memory.py --before /tmp/wt-base/src
    PYTHONPATH=src python benchmarks/bench_memory.py --before OLD/src --sizes 2k 64k 512k \\
        --selectors mmr facility rcd auto --budget 512 --repeats 2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# The peak is read from /proc/self/status (VmHWM, this process's own high-water mark) where
# there is one: on Linux ru_maxrss carries the parent's resident set over fork and exec, so a
# child's ru_maxrss never reads below what this (larger) process held when it started it.
CHILD = """
import json, resource, sys, warnings
warnings.simplefilter("ignore")

def peak():
    try:
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

from budgetctx import build_context
text = open(sys.argv[1], encoding="utf-8").read()
before = peak()
ctx = build_context(text, int(sys.argv[2]), selector=sys.argv[3])
after = peak()
print(json.dumps({"before": before, "after": after, "tokens": ctx.tokens_used}))
"""


def peak(src: Path, path: Path, budget: int, selector: str) -> dict[str, int]:
    """One fresh process's peak RSS (KiB) before and after the call."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(budget), selector],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, int] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--before", type=Path, required=True, help="the other tree's src folder")
    p.add_argument("--after", type=Path, default=Path(__file__).resolve().parents[1] / "src")
    p.add_argument("--data-dir")
    p.add_argument("--sizes", nargs="+", default=["2k", "64k", "512k"])
    p.add_argument("--selectors", nargs="+", default=["mmr", "facility", "rcd", "auto"])
    p.add_argument("--budget", type=int, default=512)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--out", type=Path, help="write every measurement as JSON")
    args = p.parse_args()

    from bench_floor import data_dir, documents
    from budgetctx import get_tokenizer

    root = data_dir(args.data_dir)
    if not (root / "leval" / "gov_report_summ.jsonl").is_file():
        print(f"no L-Eval data under {root}; pass --data-dir", file=sys.stderr)
        return 0
    tok = get_tokenizer("o200k_base")
    trees = {"before": args.before, "after": args.after}
    rows = []
    print(f"B={args.budget}; before={args.before}; after={args.after}")
    print("| document | selector | before: peak MiB (the call's share) | after |")
    print("|:--|:--|--:|--:|")
    with tempfile.TemporaryDirectory() as tmp:
        for label in args.sizes:
            name, text = documents(root, tok, label)[0]
            path = Path(tmp) / f"{label}.txt"
            path.write_text(text, encoding="utf-8")
            for sel in args.selectors:
                got: dict[str, list[dict[str, int]]] = {t: [] for t in trees}
                for _ in range(args.repeats):
                    for t, src in trees.items():
                        got[t].append(peak(src, path, args.budget, sel))
                cells = []
                for t in trees:
                    after = statistics.median(r["after"] for r in got[t]) / 1024
                    share = statistics.median(r["after"] - r["before"] for r in got[t]) / 1024
                    cells.append(f"{after:.0f} ({share:+.0f})")
                print(f"| {name} | {sel} | " + " | ".join(cells) + " |", flush=True)
                rows.append({"document": name, "selector": sel, **got})
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
