"""The reference-leak control of docs/results.md: each selector with honest relevance (to the
task's query, else the document centroid, as ``budgetctx sweep`` does) against the same
selector given the *reference* as its query, which is what the paper's released code did.

Nothing in budgetctx's sweep can do the second by accident; this script does it on purpose,
to measure how much a leak inflates ROUGE. Both splits, sentence units, TF-IDF, o200k_base::

    python benchmarks/leak_control.py --datasets leval cochrane mtsamples \\
        --selectors mmr hierarchical sliding graphcluster --budgets 256 512
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np

from budgetctx import prepare
from budgetctx._errors import BudgetCtxWarning
from budgetctx.eval.datasets import load_dataset
from budgetctx.eval.metrics import Rouge


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["leval", "cochrane", "mtsamples"])
    ap.add_argument("--selectors", nargs="+", default=["mmr"])
    ap.add_argument("--budgets", nargs="+", type=int, default=[256, 512])
    ap.add_argument("--data-dir", default=str(Path(__file__).parents[1] / "../shared/data"))
    args = ap.parse_args()
    rouge = Rouge(use_stemmer=True)
    print(
        "| dataset | selector | "
        + " | ".join(f"honest {b} | leaked {b}" for b in args.budgets)
        + " |"
    )
    print("|:--|:--|" + "--:|--:|" * len(args.budgets))
    for ds in args.datasets:
        examples = load_dataset(ds, split=None, data_dir=args.data_dir)  # both splits
        # scores[mode][selector][budget] -> per-example ROUGE-1 F1
        scores: dict[str, dict[str, dict[int, list[float]]]] = {
            mode: {s: {b: [] for b in args.budgets} for s in args.selectors}
            for mode in ("honest", "leaked")
        }
        for ex in examples:
            for mode, query in (("honest", ex.query), ("leaked", ex.reference)):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", BudgetCtxWarning)
                    doc = prepare(ex.document, query=query)
                for s in args.selectors:
                    for b in args.budgets:
                        ctx = doc.select(b, selector=s)
                        f = rouge.score(ctx.text, ex.reference).to_dict()["rouge1"]["f"]
                        scores[mode][s][b].append(float(f))
        for s in args.selectors:
            cells = []
            for b in args.budgets:
                honest = float(np.mean(scores["honest"][s][b]))
                leaked = float(np.mean(scores["leaked"][s][b]))
                cells.append(f"{honest:.3f} | {leaked:.3f} ({leaked - honest:+.3f})")
            print(f"| {ds} ({len(examples)}) | {s} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
