"""budgetctx's selectors against the paper's released ones, paired on the same documents (issue 21).

The released code (https://github.com/stone-technologies/ACL_budget_paper: ``rcd.py``'s RCD,
``sim_mimic_budget.py``'s Lead, MMR and facility location, TF-IDF, "honest" mode: the document
itself is the query) is *not* part of budgetctx: pass a checkout of it with ``--released``.
Nothing here downloads it. It counts words, so each released selector is run twice per
document and budget B (o200k tokens):

- ``ratio``: a word budget of B times the document's own words-per-token ratio, the
  conversion behind the released figures quoted in issues 15 and 21;
- ``fit``: the largest word budget whose output still fits B tokens, found by bisection
  (output length grows with the word budget, though not strictly), so that both sides get
  the same token budget.

budgetctx runs as ``prepare(document).select(B, ...)``; L-Eval documents are scored once,
against their first summary, with no query (``quality_grid.py --per-document``). Scores
are ROUGE-1 F1 with the Porter stemmer (``budgetctx.eval.metrics.Rouge``) for both sides;
the reference is read only to score. Differences are paired bootstraps over documents::

    nice -n 10 python benchmarks/released_compare.py --released ../ACL_budget_paper \\
        --datasets cochrane --splits validation test --out /tmp/released_cochrane.json
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from budgetctx import prepare
from budgetctx._errors import BudgetCtxWarning
from budgetctx.eval.datasets import load_dataset
from budgetctx.eval.metrics import Rouge, paired_bootstrap
from budgetctx.selectors import parse_selector_spec

# our selector -> the released counterpart (issue 15's pairs, and Lead)
COUNTERPARTS = {"lead": "lead", "mmr": "mmr", "facility": "facility", "rcd": "rcd"}
MODES = ("ratio", "fit")


def released_selectors(root: Path) -> dict[str, Callable[[str, int], str]]:
    """The released selectors as ``f(document, word_budget) -> context``, honest mode."""
    sys.path.insert(0, str(root))
    sim = importlib.import_module("sim_mimic_budget")
    rcd = importlib.import_module("rcd")
    cfg, embedder = rcd.RCDConfig(), rcd.Embedder("tfidf")
    # The word-budget bisection runs RCD ~12 times per document on the same units; its kernel
    # (a dense Gram matrix, seconds on a long L-Eval document) depends only on the units and
    # the query, so the last one is kept. Same outputs, fewer recomputations.
    build_kernel, last = rcd.build_kernel, {}

    def cached_kernel(units: list[str], ref: str, emb: Any) -> Any:
        key = (tuple(units), ref)
        if last.get("key") != key:
            last.update(key=key, value=build_kernel(units, ref, emb))
        return last["value"]

    rcd.build_kernel = cached_kernel

    def run_rcd(doc: str, words: int) -> str:
        units = sim.split_sentences(doc)
        return " ".join(units[i] for i in rcd.rcd_select(list(units), doc, words, cfg, embedder))

    return {
        "lead": lambda doc, words: str(sim.lead_selector(sim.split_sentences(doc), words)),
        "mmr": lambda doc, words: str(
            sim.mmr_selector_tfidf(sim.split_sentences(doc), words, doc, 0.5, True)
        ),
        "facility": lambda doc, words: str(
            sim.facility_location_selector(
                sim.split_sentences(doc), words, doc, 1.0, 0.8, 0.15, 0.03
            )
        ),
        "rcd": run_rcd,
    }


def fit_words(run: Callable[[int], str], count: Callable[[str], int], budget: int, top: int) -> str:
    """The output of the largest word budget in [0, top] whose output fits ``budget`` tokens."""
    lo, hi = 0, top + 1  # invariant: lo fits (0 words keeps nothing), hi does not or is past top
    best = ""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        text = run(mid)
        if count(text) <= budget:
            lo, best = mid, text
        else:
            hi = mid
    return best


def examples(dataset: str, split: str, data_dir: str) -> list[Any]:
    out = load_dataset(dataset, split=split, data_dir=data_dir)
    if len({e.document for e in out}) < len(out):  # L-Eval: each document once, no query
        firsts = {e.document: e for e in reversed(out)}
        out = [replace(e, query=None) for e in out if firsts[e.document] is e]
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    rouge = Rouge(use_stemmer=True)
    theirs = released_selectors(Path(args.released))
    rows: list[dict[str, Any]] = []

    def score(text: str, reference: str) -> float:
        return float(rouge.score(text, reference).to_dict()["rouge1"]["f"])

    for ds in args.datasets:
        for split in args.splits:
            t0 = time.perf_counter()
            exs = examples(ds, split, args.data_dir)
            if args.limit and len(exs) > args.limit:  # spread over the split, as peer_grid does
                exs = [exs[round(i * len(exs) / args.limit)] for i in range(args.limit)]
            for ex in exs:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", BudgetCtxWarning)
                    doc = prepare(ex.document, query=ex.query)
                count = doc.tokenizer.count
                words = len(ex.document.split())
                for b in args.budgets:
                    row: dict[str, Any] = {"dataset": ds, "split": split, "id": ex.id, "budget": b}
                    for spec in args.selectors:
                        name, options = parse_selector_spec(spec)
                        ctx = doc.select(b, selector=name, selector_options=options)
                        row[f"ours:{spec}"] = score(ctx.text, ex.reference)
                        row[f"ours:{spec}:tokens"] = ctx.tokens_used
                    for name in sorted({COUNTERPARTS[s.split(":")[0]] for s in args.selectors}):
                        f = theirs[name]
                        by_mode = {
                            "ratio": f(ex.document, round(b * words / doc.document_tokens)),
                            "fit": fit_words(functools.partial(f, ex.document), count, b, words),
                        }
                        for mode, text in by_mode.items():
                            row[f"released:{name}:{mode}"] = score(text, ex.reference)
                            row[f"released:{name}:{mode}:tokens"] = count(text)
                    rows.append(row)
            print(
                f"{ds} {split}: {len(exs)} documents, {time.perf_counter() - t0:.0f} s",
                file=sys.stderr,
            )
    return {"selectors": args.selectors, "budgets": args.budgets, "rows": rows}


def table(result: dict[str, Any]) -> None:
    """Per dataset and budget: ours, released (both modes), paired difference [95 %]."""
    rows = result["rows"]
    print(
        "| data | B | n | ours | mean (tokens) | released | mode | mean (tokens) "
        "| ours − released [95 %] |"
    )
    print("|:--|--:|--:|:--|--:|:--|:--|--:|:--|")
    for ds in dict.fromkeys(r["dataset"] for r in rows):
        for b in result["budgets"]:
            cell = [r for r in rows if r["dataset"] == ds and r["budget"] == b]
            for spec in result["selectors"]:
                ours = np.array([r[f"ours:{spec}"] for r in cell])
                ours_tok = np.mean([r[f"ours:{spec}:tokens"] for r in cell])
                name = COUNTERPARTS[spec.split(":")[0]]
                for mode in MODES:
                    rel = np.array([r[f"released:{name}:{mode}"] for r in cell])
                    rel_tok = np.mean([r[f"released:{name}:{mode}:tokens"] for r in cell])
                    d = paired_bootstrap(ours, rel, seed=0).difference
                    print(
                        f"| {ds} | {b} | {len(cell)} | {spec} | {ours.mean():.4f} ({ours_tok:.0f}) "
                        f"| {name} | {mode} | {rel.mean():.4f} ({rel_tok:.0f}) "
                        f"| {d.estimate:+.4f} [{d.low:+.4f}, {d.high:+.4f}] |"
                    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--released", help="a checkout of the paper's released code")
    ap.add_argument("--datasets", nargs="+", default=["cochrane"])
    ap.add_argument("--splits", nargs="+", default=["validation", "test"])
    ap.add_argument("--budgets", nargs="+", type=int, default=[256, 512])
    ap.add_argument("--selectors", nargs="+", default=["lead", "mmr", "facility", "rcd"])
    ap.add_argument("--limit", type=int, help="documents per dataset and split (spread)")
    ap.add_argument("--data-dir", default=str(Path(__file__).parents[1] / "../shared/data"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--load", type=Path, help="print the table of a saved result")
    args = ap.parse_args()
    if args.load:
        table(json.loads(args.load.read_text()))
        return
    if not args.released or not (Path(args.released) / "rcd.py").is_file():
        ap.error(
            "--released DIR must be a checkout of the paper's released code (rcd.py and "
            "sim_mimic_budget.py); clone https://github.com/stone-technologies/ACL_budget_paper"
        )
    if not Path(args.data_dir).is_dir():
        print(f"no shared data at {args.data_dir}: nothing to compare (pass --data-dir)")
        return
    for spec in args.selectors:
        if spec.split(":")[0] not in COUNTERPARTS:
            ap.error(f"{spec!r} has no released counterpart; use one of {sorted(COUNTERPARTS)}")
    result = run(args)
    if args.out:
        args.out.write_text(json.dumps(result))
    table(result)


if __name__ == "__main__":
    main()
