"""Selection quality over a grid of selector settings (issue 15): mean ROUGE-1 F1 per cell.

Each document is prepared once (unitize, count, TF-IDF) and every selector setting and budget
is then a cheap ``PreparedDocument.select``. Scores are ROUGE-1 F1 with the Porter stemmer
from the harness's own scorer (``budgetctx.eval.metrics.Rouge``); relevance is to the query
where the dataset has one (L-Eval meeting_summ), else to the centroid, as in ``budgetctx
sweep``. The reference is read only to score.

Choose settings on ``--split validation``; report on ``--split test`` only settings chosen
before looking at it::

    nice -n 10 python benchmarks/quality_grid.py --split validation --grid full \\
        --out /tmp/grid_validation.json
    nice -n 10 python benchmarks/quality_grid.py --split test \\
        --selectors mmr 'mmr:cost_exponent=0,position_decay=0.03' --out /tmp/grid_test.json

The output JSON holds every per-example score, so paired bootstrap CIs can be computed from
it (``--compare A B`` prints them).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
import warnings
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from budgetctx import prepare
from budgetctx._errors import BudgetCtxWarning
from budgetctx.eval.datasets import load_dataset
from budgetctx.eval.metrics import Rouge, paired_bootstrap
from budgetctx.selectors import parse_selector_spec

DATASETS = ("leval", "cochrane", "mtsamples")
SHARED_OPTIONS = ("cost_exponent", "position_decay", "min_unit_tokens")
BUDGETS = (256, 512, 1024, 2048)


def grid_specs(*, small: bool = False) -> list[str]:
    """The settings searched on validation: cost exponent x lead prior x fragment rule.

    ``small`` is the grid used on L-Eval, whose long documents make each setting ~10x dearer.
    Facility and RCD read the paper's relevance (``salience=null``), as when it was run.
    """
    specs = ["lead"]
    rs, decays, mins = (0, 0.5, 1), (0, 0.01, 0.03, 0.1), (0, 5)
    if small:
        rs, decays = (0, 1), (0, 0.03, 0.1)
    for lam, r, d, m in itertools.product((0.5, 0.7), rs, decays, mins):
        specs.append(f"mmr:lambda_={lam},cost_exponent={r},position_decay={d},min_unit_tokens={m}")
    for r, d, m in itertools.product(rs, decays, mins):
        specs.append(
            f"facility:cost_exponent={r},position_decay={d},min_unit_tokens={m},salience=null"
        )
    for (a, b), r, d, m in itertools.product(((0.25, 0.75), (0.5, 0.5)), rs, decays, mins):
        specs.append(
            f"rcd:alpha={a},beta={b},gamma=0,cost_exponent={r},position_decay={d},"
            f"min_unit_tokens={m},salience=null"
        )
    return specs


def defaults_grid() -> list[str]:
    """The grid the defaults were chosen on (issue 15): r x d x m, shared by MMR (lambda
    0.7), facility location and RCD (0.25/0.75/0), every option spelled out so that the
    specs do not depend on the defaults they choose. ``salience=null`` pins facility's and
    RCD's no-query relevance as it was then (the paper's objective): their defaults became
    the fused salience in issue 21's third pass, after this grid was run."""
    specs = ["lead"]
    for r, d, m in itertools.product((0, 0.25, 0.5, 0.75, 1), (0, 0.01, 0.03), (0, 5)):
        opts = f"cost_exponent={r},position_decay={d},min_unit_tokens={m}"
        specs += [
            f"mmr:lambda_=0.7,{opts}",
            f"facility:{opts},salience=null",
            f"rcd:alpha=0.25,beta=0.75,gamma=0,{opts},salience=null",
        ]
    return specs


def run(
    datasets: list[str],
    split: str,
    budgets: list[int],
    specs: list[str],
    data_dir: str,
    *,
    per_document: bool = False,
    shard: tuple[int, int] = (0, 1),
    checkpoint: Path | None = None,
) -> dict[str, Any]:
    rouge = Rouge(use_stemmer=True)
    parsed = [parse_selector_spec(s) for s in specs]
    # scores[dataset][spec][budget] -> list of per-example ROUGE-1 F1, examples in load order
    scores: dict[str, dict[str, dict[str, list[float]]]] = {}
    ids: dict[str, list[str]] = {}
    tokens: dict[str, list[int]] = {}  # each document's length: which budgets cut it
    over = 0
    for ds in datasets:
        examples = load_dataset(ds, split=split, data_dir=data_dir)
        if per_document and len({e.document for e in examples}) < len(examples):
            # L-Eval has many instruction/summary pairs per meeting; the protocol
            # scores each document once, with relevance to the document itself (no query).
            # Datasets with one pair per document (PubMedQA's questions) keep their queries.
            firsts = {e.document: e for e in reversed(examples)}
            examples = [replace(e, query=None) for e in examples if firsts[e.document] is e]
        examples = examples[shard[0] :: shard[1]]
        ids[ds] = [e.id for e in examples]
        tokens[ds] = []
        cell: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        t0 = time.perf_counter()
        for ex in examples:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", BudgetCtxWarning)
                doc = prepare(ex.document, query=ex.query)
            tokens[ds].append(doc.document_tokens)
            # many settings keep the same units: score each distinct context once
            seen: dict[tuple[int, ...], float] = {}
            for spec, (name, options) in zip(specs, parsed, strict=True):
                for b in budgets:
                    ctx = doc.select(b, selector=name, selector_options=options)
                    over += ctx.tokens_used > b
                    f = seen.get(ctx.kept_ids)
                    if f is None:
                        f = float(rouge.score(ctx.text, ex.reference).to_dict()["rouge1"]["f"])
                        seen[ctx.kept_ids] = f
                    cell[spec][str(b)].append(f)
            if checkpoint is not None:
                # a slow machine can stop a run early: keep every finished example
                done = {**scores, ds: {s: dict(v) for s, v in cell.items()}}
                part = {
                    "split": split,
                    "budgets": budgets,
                    "ids": ids,
                    "tokens": tokens,
                    "scores": done,
                }
                checkpoint.write_text(json.dumps(part))
        scores[ds] = {s: dict(v) for s, v in cell.items()}
        print(
            f"{ds} {split}: {len(examples)} examples, {time.perf_counter() - t0:.0f} s",
            file=sys.stderr,
        )
    if over:
        raise AssertionError(f"{over} contexts over budget")
    return {
        "split": split,
        "budgets": budgets,
        "per_document": per_document,
        "ids": ids,
        "tokens": tokens,
        "scores": scores,
    }


def summarise(result: dict[str, Any], top: int) -> None:
    """Per selector family: the settings with the best mean over dataset x budget cells."""
    budgets = [str(b) for b in result["budgets"]]
    specs = next(iter(result["scores"].values())).keys()
    rows = []
    for spec in specs:
        by_ds = result["scores"]
        cells = [float(np.mean(by_ds[ds][spec][b])) for ds in by_ds for b in budgets]
        rows.append((spec.split(":")[0], float(np.mean(cells)), spec, cells))
    for family in sorted({r[0] for r in rows}):
        fam = sorted((r for r in rows if r[0] == family), key=lambda r: -r[1])
        print(f"\n{family}: cells = {[f'{ds}@{b}' for ds in result['scores'] for b in budgets]}")
        for _, mean, spec, cells in fam[:top]:
            print(f"  {mean:.4f}  {spec}  {' '.join(f'{c:.3f}' for c in cells)}")


def summarise_macro(result: dict[str, Any], top: int, *, min_examples: int = 10) -> None:
    """Per selector family, the settings ranked by the mean over datasets of each dataset's
    mean over the budgets that cut it: a cell keeps the examples whose document is longer
    than the budget (the others are sent whole by every setting) and counts when it has at
    least ``min_examples``. Every dataset weighs the same, however many budgets cut it."""
    budgets = [str(b) for b in result["budgets"]]
    by_ds = result["scores"]
    cut = {ds: {b: np.asarray(result["tokens"][ds]) > int(b) for b in budgets} for ds in by_ds}
    cells = {ds: [b for b in budgets if cut[ds][b].sum() >= min_examples] for ds in by_ds}
    specs = next(iter(by_ds.values())).keys()
    rows = []
    for spec in specs:
        per_ds = {
            ds: float(
                np.mean([np.asarray(by_ds[ds][spec][b])[cut[ds][b]].mean() for b in cells[ds]])
            )
            for ds in by_ds
            if cells[ds]
        }
        rows.append((spec.split(":")[0], float(np.mean(list(per_ds.values()))), spec, per_ds))
    print(f"\ncells that cut >= {min_examples} documents: {cells}")
    for family in sorted({r[0] for r in rows}):
        fam = sorted((r for r in rows if r[0] == family), key=lambda r: -r[1])
        print(f"\n{family}: macro mean, then per dataset")
        for _, mean, spec, per_ds in fam[:top]:
            cols = " ".join(f"{ds}={v:.4f}" for ds, v in per_ds.items())
            print(f"  {mean:.4f}  {spec}  {cols}")
    # One setting for every selector: the shared knapsack and prior options, ranked by the
    # mean of the selectors' macro means (only options that every family was run with).
    shared: dict[str, dict[str, float]] = defaultdict(dict)
    for family, mean, spec, _ in rows:
        opts = dict(kv.split("=") for kv in spec.partition(":")[2].split(",") if "=" in kv)
        key = ",".join(f"{k}={opts[k]}" for k in SHARED_OPTIONS if k in opts)
        if key:
            shared[key][family] = mean
    families = {f for by_family in shared.values() for f in by_family}
    complete = [
        (float(np.mean(list(v.values()))), k, v) for k, v in shared.items() if set(v) == families
    ]
    if complete:
        print(f"\nshared settings: mean over {sorted(families)}")
        for mean, key, by_family in sorted(complete, reverse=True)[:top]:
            cols = " ".join(f"{f}={v:.4f}" for f, v in sorted(by_family.items()))
            print(f"  {mean:.4f}  {key}  {cols}")


def compare(result: dict[str, Any], a: str, b: str) -> None:
    """Paired bootstrap of ``b - a`` per dataset and budget (1,000 resamples, seed 0)."""
    for ds, by_spec in result["scores"].items():
        for budget in result["budgets"]:
            x = np.asarray(by_spec[a][str(budget)])
            y = np.asarray(by_spec[b][str(budget)])
            ci = paired_bootstrap(y, x, seed=0)
            print(f"{ds} {budget}: {a}={x.mean():.3f} {b}={y.mean():.3f} diff {ci}")


def _grid(name: str | None) -> list[str]:
    if name is None:
        return []
    return defaults_grid() if name == "defaults" else grid_specs(small=name == "small")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("validation", "test"), help="needed unless --load/--merge")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--budgets", nargs="+", type=int, default=list(BUDGETS))
    ap.add_argument("--selectors", nargs="*", default=[])
    ap.add_argument(
        "--grid",
        choices=("full", "small", "defaults"),
        help="add a validation grid (defaults: the one the selector defaults were chosen on)",
    )
    ap.add_argument(
        "--macro",
        action="store_true",
        help="rank by the mean over datasets of the budgets that cut each (the defaults' rule)",
    )
    ap.add_argument("--data-dir", default=str(Path(__file__).parents[1] / "../shared/data"))
    ap.add_argument(
        "--per-document",
        action="store_true",
        help="score each distinct document once (its first pair) with no query",
    )
    ap.add_argument("--shard", default="0/1", help="K/N: run examples K, K+N, ... only")
    ap.add_argument(
        "--merge", nargs="+", type=Path, help="concatenate the examples of shard outputs"
    )
    ap.add_argument("--out", type=Path)
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--load", type=Path, help="summarise a saved result instead of running")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"))
    args = ap.parse_args()
    if args.merge:
        parts = [json.loads(p.read_text()) for p in args.merge]
        result = parts[0]
        for part in parts[1:]:
            for ds, by_spec in part["scores"].items():
                result["ids"][ds] = result["ids"].get(ds, []) + part["ids"][ds]
                tokens = result.setdefault("tokens", {})
                tokens[ds] = tokens.get(ds, []) + part.get("tokens", {}).get(ds, [])
                for spec, by_budget in by_spec.items():
                    mine = result["scores"].setdefault(ds, {}).setdefault(spec, {})
                    for b, values in by_budget.items():
                        mine[b] = mine.get(b, []) + values
        if args.out:
            args.out.write_text(json.dumps(result))
    elif args.load:
        result = json.loads(args.load.read_text())
    else:
        if args.split is None:
            ap.error("--split is required to run a grid")
        specs = list(dict.fromkeys([*args.selectors, *_grid(args.grid)]))
        result = run(
            args.datasets,
            args.split,
            args.budgets,
            specs,
            args.data_dir,
            per_document=args.per_document,
            shard=(int(args.shard.split("/")[0]), int(args.shard.split("/")[1])),
            checkpoint=args.out,
        )
        if args.out:
            args.out.write_text(json.dumps(result))
    if args.macro:
        summarise_macro(result, args.top)
    else:
        summarise(result, args.top)
    if args.compare:
        compare(result, *args.compare)


if __name__ == "__main__":
    main()
