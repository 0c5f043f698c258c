"""``build_context`` with the old and the new pipeline module side by side in one process
(issue 27, part E: prepare only what the selector needs).

The "before" tree's ``budgetctx/build/_pipeline.py`` is loaded under another name beside this
tree's package, so both run on the same segmenter, tokenizer, TF-IDF and selectors and only
the pipeline differs (use it only for trees whose other modules match, as they do for part E).
Calls alternate floor / before / after on the same document, CPU time, medians; each cell is
``median(build_context) / median(floor)`` with the floor tiktoken's ``encode_ordinary`` of the
document (``bench_floor.py``'s). "fits" is MMR at a budget the document fits whole
(its count + 64); "fits:SEL" the same with another selector; "units:SEL" a fitting document
whose ``ctx.units`` is read in the timed call (session 6, part I: the count-first exit defers
them to that read); "near:SEL" a budget 64 tokens under the count (the document does not fit,
but is short enough to be counted first, which then costs one encoding more).

    PYTHONPATH=src python benchmarks/lazy_ab.py --before /work/main/src --sizes 2k 64k
    PYTHONPATH=src python benchmarks/lazy_ab.py --before /work/main/src --sizes 2k \
        --cases fits fits:lead fits:auto units:mmr near:mmr mmr
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_floor as bf
from stages_ab import load

CASES = ("lead", "shuffled", "mmr", "fits")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--before", type=Path, required=True, help="the old tree's src folder")
    p.add_argument("--data-dir")
    p.add_argument("--sizes", nargs="+", default=["2k", "64k"])
    p.add_argument("--cases", nargs="+", default=list(CASES))
    p.add_argument("--repeats", type=int, default=9)
    args = p.parse_args()
    root = bf.data_dir(args.data_dir)
    if not (root / "leval" / "gov_report_summ.jsonl").is_file():
        print(f"no data under {root}; pass --data-dir", file=sys.stderr)
        return 2

    from budgetctx import get_tokenizer
    from budgetctx.build import _pipeline as after

    before = load(args.before, "build/_pipeline.py", "_budgetctx_pipeline_before")
    tok = get_tokenizer("o200k_base")
    floor = bf.floor_fn(tok)
    clock = time.process_time
    print(f"load average before: {os.getloadavg()[0]:.2f}; CPU time, medians of {args.repeats}")
    print(
        f"{'document':<26} {'case':<9} {'floor ms':>8} {'before':>14} {'after':>14} {'change':>7}"
    )
    for label in args.sizes:
        for name, text in bf.documents(root, tok, label):
            n_tokens = tok.count(text)
            for case in args.cases:
                kind, _, sel = case.partition(":")
                sel = sel or ("mmr" if kind in ("fits", "units", "near") else kind)
                budget = {"fits": n_tokens + 64, "units": n_tokens + 64, "near": n_tokens - 64}
                budget_of = budget.get(kind, bf.BUDGETS.get(label, 2048))
                read = kind == "units"

                def call(
                    mod: Any,
                    sel: str = sel,
                    budget: int = budget_of,
                    text: str = text,
                    read: bool = read,
                ) -> Any:
                    ctx = mod.build_context(text, budget, selector=sel)
                    if read:
                        _ = ctx.units
                    return ctx

                a, b = call(before), call(after)  # warm-up, and the same selection
                assert (a.text, a.kept_ids) == (b.text, b.kept_ids), (name, case)
                assert a.to_dict().keys() == b.to_dict().keys()
                fl: list[float] = []
                tb: list[float] = []
                ta: list[float] = []
                for i in range(args.repeats):
                    t = clock()
                    floor(text)
                    fl.append(clock() - t)
                    for mod, out in ((before, tb), (after, ta))[:: 1 if i % 2 == 0 else -1]:
                        t = clock()
                        call(mod)
                        out.append(clock() - t)
                f = statistics.median(fl)
                mb, ma = statistics.median(tb), statistics.median(ta)
                print(
                    f"{name:<26} {case:<9} {f * 1e3:>8.2f} "
                    f"{mb * 1e3:>7.2f} ({mb / f:4.1f}x) {ma * 1e3:>7.2f} ({ma / f:4.1f}x) "
                    f"{(ma - mb) / mb:>+6.0%}",
                    flush=True,
                )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
