"""``build_context`` against the tokenizer's own speed: the ratio to the floor, per selector and
stage, and the growth exponent with document size (issue 27).

The floor is one o200k_base ``encode_ordinary`` of the same document through budgetctx's own
tokenizer object (both read the same bundled ranks). Each repeat times the floor and then every
selector on the same document, interleaved in one process, so machine load hits both alike;
the table reports medians and the ratio ``median(build_context) / median(floor)``, which is
what stays comparable on a shared, busy machine (absolute times do not). Stages come from
``Context.timings_ms``; "other" is validation, router statistics, summaries and the like.

Documents: ~2k tokens (MTSamples discharge notes concatenated; the L-Eval gov_report input's
prefix), ~16k and ~64k (the gov_report inputs concatenated, cut at a line break). ``--scaling``
fits the log-log exponent of MMR at B=512 from 2k to ``--max-size`` tokens (512k takes minutes).
``--notes`` reports notes per second per core for 2k-token notes (MMR, B=512). Informational only:
nothing is asserted; goals are printed beside the results (issue 27: <= 5x the floor at 2k,
<= 3x at 16k and 64k, exponent <= 1.02).

    PYTHONPATH=src python benchmarks/bench_floor.py                  # 2k / 16k / 64k grid
    PYTHONPATH=src python benchmarks/bench_floor.py --sizes 2k --repeats 21
    PYTHONPATH=src python benchmarks/bench_floor.py --scaling --max-size 512k --no-grid
    PYTHONPATH=src python benchmarks/bench_floor.py --profile mmr --sizes 2k 64k
    PYTHONPATH=src python benchmarks/bench_floor.py --sizes 2k --budget 4096   # it fits whole
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import os
import pstats
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SELECTORS = ("lead", "shuffled", "mmr", "auto", "facility", "rcd", "graphcluster")
STAGES = ("unitize", "count", "represent", "select", "render")
BUDGETS = {"2k": 512, "16k": 2048, "64k": 2048}
GOALS = {"2k": 5.0, "16k": 3.0, "64k": 3.0}


def data_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    env = os.environ.get("BUDGETCTX_SHARED_DATA")
    if env:
        return Path(env)
    for cand in (REPO.parent / "shared" / "data", Path("/work/shared/data")):
        if cand.is_dir():
            return cand
    return REPO.parent / "shared" / "data"


def tokens_of(label: str) -> int:
    s = label.lower()
    return int(float(s[:-1]) * 1024) if s.endswith("k") else int(s)


def _jsonl(path: Path, field: str) -> list[str]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                text = json.loads(line).get(field) or ""
                if text.strip() and text not in out:
                    out.append(text)
    return out


def cut(tok: Any, text: str, target: int) -> str:
    """The longest prefix of ``text`` within ``target`` tokens that ends at a line break."""
    prefix = tok.truncate(text, target)
    if len(prefix) == len(text):
        return text
    at = prefix.rfind("\n")
    return prefix[:at] if at > len(prefix) * 0.8 else prefix


def documents(root: Path, tok: Any, label: str) -> list[tuple[str, str]]:
    """``(name, text)`` of about ``label`` tokens."""
    target = tokens_of(label)
    reports = _jsonl(root / "leval" / "gov_report_summ.jsonl", "input")
    joined = "\n\n".join(reports)
    while tok.count(joined) < target:
        joined = joined + "\n\n" + joined
    docs = [(f"gov_report prefix {label}", cut(tok, joined, target))]
    notes_path = root / "mtsamples_discharge" / "discharge_summaries.derived.jsonl"
    if target <= 4096 and notes_path.is_file():
        notes = _jsonl(notes_path, "text")
        docs.append((f"MTSamples notes {label}", cut(tok, "\n\n".join(notes[:12]), target)))
    return docs


def floor_fn(tok: Any) -> Any:
    # The floor is tiktoken's own encode_ordinary, whichever encoder budgetctx counts
    # with (bpe-openai's since session 4): one fixed yardstick for every tree compared.
    from budgetctx.tokenizers import _tiktoken

    return _tiktoken._encoding(tok.name).encode_ordinary


def grid(args: argparse.Namespace, root: Path) -> None:
    from budgetctx import build_context, get_tokenizer

    clock = time.process_time if args.clock == "cpu" else time.perf_counter

    tok = get_tokenizer("o200k_base")
    floor = floor_fn(tok)
    print(
        f"load average before: {os.getloadavg()[0]:.2f}; clock: {args.clock} "
        "(on a shared machine read the ratios, and prefer --clock cpu)"
    )
    head = f"{'document':<28} {'tokens':>7} {'floor ms':>8}"
    print(head + "".join(f" {s:>12}" for s in args.selectors))
    stage_rows: list[str] = []
    for label in args.sizes:
        budget = args.budget or BUDGETS.get(label, 2048)
        for name, text in documents(root, tok, label):
            n_tokens = tok.count(text)
            for sel in args.selectors:  # warm-up: imports, router, caches
                build_context(text, budget, selector=sel)
            floors: list[float] = []
            wall_floors: list[float] = []
            totals: dict[str, list[float]] = {s: [] for s in args.selectors}
            stages: dict[str, dict[str, list[float]]] = {
                s: {k: [] for k in (*STAGES, "other")} for s in args.selectors
            }
            for _ in range(args.repeats):
                for sel in args.selectors:
                    t, w = clock(), time.perf_counter()
                    floor(text)
                    floors.append(clock() - t)
                    wall_floors.append(time.perf_counter() - w)
                    t = clock()
                    ctx = build_context(text, budget, selector=sel)
                    totals[sel].append(clock() - t)
                    tm = ctx.timings_ms
                    for k in STAGES:
                        stages[sel][k].append(tm.get(k, 0.0) / 1000.0)
                    stages[sel]["other"].append(
                        (tm.get("total", 0.0) - sum(tm.get(k, 0.0) for k in STAGES)) / 1000.0
                    )
            f = statistics.median(floors)
            goal = GOALS.get(label, math.inf)
            cells = []
            for sel in args.selectors:
                r = statistics.median(totals[sel]) / f
                cells.append(f"{r:>11.1f}x" + ("!" if r > goal else " "))
            print(f"{name:<28} {n_tokens:>7} {f * 1000:>8.3f}" + "".join(cells))
            fw = statistics.median(wall_floors)
            for sel in args.selectors:
                parts = " ".join(
                    f"{k}={statistics.median(v) / fw:.2f}" for k, v in stages[sel].items()
                )
                stage_rows.append(f"  {name:<28} {sel:<12} {parts}")
    budgets = dict.fromkeys(args.sizes, args.budget) if args.budget else BUDGETS
    print(f"goals: {GOALS} (x the floor; '!' marks a miss); budgets {budgets}")
    print("per stage (Context.timings_ms, wall clock), x the floor's wall time (medians):")
    print("\n".join(stage_rows))
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def scaling(args: argparse.Namespace, root: Path) -> None:
    from budgetctx import build_context, get_tokenizer

    tok = get_tokenizer("o200k_base")
    floor = floor_fn(tok)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    sizes = []
    s = 2048
    while s <= tokens_of(args.max_size):
        sizes.append(s)
        s *= 2
    reports = _jsonl(root / "leval" / "gov_report_summ.jsonl", "input")
    base = "\n\n".join(reports)
    xs, ys, fs = [], [], []
    for n in sizes:
        text = base
        while tok.count(text) < n:
            text = text + "\n\n" + text
        text = cut(tok, text, n)
        build_context(text[:20000], 512, selector="mmr")
        reps = max(1, min(args.repeats, int(64 * 1024 / n) + 1))
        b, f = [], []
        for _ in range(reps):
            t = clock()
            floor(text)
            f.append(clock() - t)
            t = clock()
            build_context(text, 512, selector="mmr")
            b.append(clock() - t)
        xs.append(math.log(n))
        ys.append(math.log(statistics.median(b)))
        fs.append(math.log(statistics.median(f)))
        print(
            f"{n:>8} tokens: build {statistics.median(b) * 1000:>9.1f} ms, "
            f"{statistics.median(b) / statistics.median(f):5.1f}x the floor "
            f"({statistics.median(b) / n * 1e6:.2f} us/token)",
            flush=True,
        )

    def slope(x: Sequence[float], y: Sequence[float]) -> float:
        mx, my = statistics.fmean(x), statistics.fmean(y)
        return sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / sum(
            (a - mx) ** 2 for a in x
        )

    print(f"exponent (log-log slope), MMR B=512: {slope(xs, ys):.3f}; floor's: {slope(xs, fs):.3f}")
    if len(xs) > 4:
        print(f"  over the upper half: {slope(xs[-4:], ys[-4:]):.3f}")


def notes_per_second(root: Path) -> None:
    from budgetctx import build_context, get_tokenizer

    tok = get_tokenizer("o200k_base")
    text = documents(root, tok, "2k")[-1][1]  # the MTSamples notes when present
    build_context(text, 512)
    c0, n = time.process_time(), 0
    while time.process_time() - c0 < 3.0:
        build_context(text, 512)
        n += 1
    print(f"2k-token note, MMR B=512: {n / (time.process_time() - c0):.0f} notes per CPU-second")


def profile(args: argparse.Namespace, root: Path) -> None:
    from budgetctx import build_context, get_tokenizer

    tok = get_tokenizer("o200k_base")
    for label in args.sizes:
        name, text = documents(root, tok, label)[0]
        budget = BUDGETS.get(label, 2048)
        build_context(text, budget, selector=args.profile)
        prof = cProfile.Profile()
        reps = 20 if tokens_of(label) <= 4096 else 3
        prof.enable()
        for _ in range(reps):
            build_context(text, budget, selector=args.profile)
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(35)
        print(f"== {name}, {args.profile}, B={budget}, {reps} calls ==")
        print(out.getvalue())


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--data-dir")
    p.add_argument("--sizes", nargs="+", default=["2k", "16k", "64k"])
    p.add_argument("--selectors", nargs="+", default=list(SELECTORS))
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="cpu: process time (all threads; steadier on a busy machine); wall: perf_counter",
    )
    p.add_argument(
        "--budget",
        type=int,
        help="one budget for every size instead of the defaults (4096: a 2k document fits)",
    )
    p.add_argument("--no-grid", action="store_true")
    p.add_argument("--scaling", action="store_true")
    p.add_argument("--max-size", default="512k")
    p.add_argument("--notes", action="store_true")
    p.add_argument("--profile", metavar="SELECTOR")
    args = p.parse_args()
    root = data_dir(args.data_dir)
    if not (root / "leval" / "gov_report_summ.jsonl").is_file():
        print(f"no L-Eval data under {root}; pass --data-dir", file=sys.stderr)
        return 0
    if args.profile:
        profile(args, root)
        return 0
    if not args.no_grid:
        grid(args, root)
    if args.scaling:
        scaling(args, root)
    if args.notes:
        notes_per_second(root)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
