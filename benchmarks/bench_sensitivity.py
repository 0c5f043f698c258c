"""What the weight-sensitivity sweep saves by preparing each document once.

For a few validation documents per dataset it prepares the document once and then runs RCD
at every point of the 0.1-step weight simplex (66 settings) with ``PreparedDocument.select``,
which is what ``budgetctx sensitivity`` does per document and budget. Against that it times a
full ``build_context`` (unitize, count, featurize, select, render) for the same weights. The
two are interleaved setting by setting, so that a busy machine slows both alike; the full
call is timed for every ``--full-every``-th setting only (66 full calls of a 12k-token
document take minutes), and the grid's cost "as 66 full calls" is extrapolated from their
mean. Informational only: nothing is asserted.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_sensitivity.py
    PYTHONPATH=src .venv/bin/python benchmarks/bench_sensitivity.py --datasets leval --docs 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

from budgetctx import BudgetCtxWarning, build_context, prepare
from budgetctx.eval import load_dataset
from budgetctx.eval._sensitivity import simplex_grid

REPO = Path(__file__).resolve().parents[1]
ENV_DATA = "BUDGETCTX_SHARED_DATA"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_data = Path(os.environ.get(ENV_DATA, REPO.parent / "shared" / "data"))
    ap.add_argument("--data-dir", type=Path, default=default_data)
    ap.add_argument(
        "--datasets",
        nargs="+",
        default=["cochrane", "cochrane-pls", "pubmedqa", "mtsamples", "leval"],
    )
    ap.add_argument("--docs", type=int, default=2, help="documents per dataset")
    ap.add_argument("--budget", type=int, default=512)
    ap.add_argument("--step", type=float, default=0.1)
    ap.add_argument("--full-every", type=int, default=6, help="time a full call every Nth point")
    args = ap.parse_args()
    if not args.data_dir.is_dir():
        print(f"skipped: no data at {args.data_dir} (use --data-dir or {ENV_DATA})")
        return 0
    warnings.simplefilter("ignore", BudgetCtxWarning)
    grid = simplex_grid(args.step)
    print(
        f"{len(grid)} weight settings, budget {args.budget}; times in ms, one row per "
        "document; select/pt: mean PreparedDocument.select per setting (γ=0 / γ>0 apart); "
        "'grid/full' = (prepare + every select) / (settings x mean full build_context)"
    )
    print(
        f"{'dataset':<13}{'doc tok':>8}{'units':>6}{'prepare':>9}{'select/pt':>10}"
        f"{'γ=0':>7}{'γ>0':>7}{'full call':>10}{'grid':>9}{'66 full':>9}{'grid/full':>10}"
    )
    for name in args.datasets:
        examples = load_dataset(name, data_dir=args.data_dir, split="validation")
        # Documents longer than the budget (otherwise nothing is selected), first ones.
        picked = []
        for ex in examples:
            doc = prepare(ex.document, query=ex.query)
            if doc.document_tokens > args.budget:
                picked.append((ex, doc))
            if len(picked) == args.docs:
                break
        for ex, _ in picked:
            t = time.perf_counter()
            doc = prepare(ex.document, query=ex.query)
            t_prepare = (time.perf_counter() - t) * 1000
            selects, fulls, no_logdet = [], [], []
            for i, (a, b, g) in enumerate(grid):
                opts = {"alpha": a, "beta": b, "gamma": g}
                t = time.perf_counter()
                ctx = doc.select(args.budget, selector="rcd", selector_options=opts)
                selects.append((time.perf_counter() - t) * 1000)
                no_logdet.append(g == 0)
                if i % args.full_every == 0:
                    t = time.perf_counter()
                    full = build_context(
                        ex.document,
                        args.budget,
                        selector="rcd",
                        selector_options=opts,
                        query=ex.query,
                    )
                    fulls.append((time.perf_counter() - t) * 1000)
                    if full.text != ctx.text:  # the premise of the sweep; never expected
                        print(f"  ! {name}: prepared select and build_context differ at {opts}")
            grid_ms = t_prepare + sum(selects)
            full_ms = statistics.mean(fulls) * len(grid)
            # The log-det term (gamma > 0) is most of the selection time: shown apart.
            g0 = statistics.mean(t for t, z in zip(selects, no_logdet, strict=True) if z)
            g1 = statistics.mean(t for t, z in zip(selects, no_logdet, strict=True) if not z)
            print(
                f"{name:<13}{doc.document_tokens:>8}{doc.n_units:>6}{t_prepare:>9.1f}"
                f"{statistics.mean(selects):>10.1f}{g0:>7.1f}{g1:>7.1f}"
                f"{statistics.mean(fulls):>10.1f}{grid_ms:>9.0f}{full_ms:>9.0f}"
                f"{grid_ms / full_ms:>10.2f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
