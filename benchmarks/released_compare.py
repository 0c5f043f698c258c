"""budgetctx's selectors against the paper's released ones, paired on the same documents (issue 21).

The released code (https://github.com/stone-technologies/ACL_budget_paper: ``rcd.py``'s RCD,
``sim_mimic_budget.py``'s Lead, MMR and facility location, and, when the checkout has it,
``full_budgeter.py``'s shuffled control and its hierarchical, sliding-window and graph units;
TF-IDF, "honest" mode: the document itself is the query) is *not* part of budgetctx: pass a
checkout of it with ``--released``. Nothing here downloads it.

The released code has no hierarchical, sliding or graph-cluster *selector*: those names are
unitizations in ``full_budgeter.run_pipeline``, run with a selector that defaults to MMR. So
budgetctx's ``hierarchical``, ``sliding`` and ``graphcluster`` are paired with
``run_pipeline(unitization=..., selector=--pipeline-selector)`` (section-parsed sentences,
density-sized overlapping word windows, connected components of a TF-IDF + proximity graph),
and ``shuffled`` with ``run_pipeline(selector="shuffled")`` (Lead over a seeded shuffle of its
sentences, seed 42 for every document so that the word-budget bisection sees one order).

It counts words, so each released selector is run twice per document and budget B (o200k
tokens):

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

``--rescore SAVED.json ...`` re-runs only budgetctx's side (``--selectors``) on the documents
and budgets of saved results and pairs it with their released side as saved: the released
code is deterministic and slow (hours on L-Eval's transcripts), so a change of ours can be
tried against it in seconds::

    python benchmarks/released_compare.py --rescore /tmp/released_cochrane.json \\
        --selectors hierarchical sliding graphcluster
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import sys
import time
import types
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

# our selector -> the released counterpart (issue 15's pairs, Lead, and full_budgeter.py's
# shuffled control and its three unitizations under run_pipeline's selector)
COUNTERPARTS = {
    "lead": "lead",
    "mmr": "mmr",
    "facility": "facility",
    "rcd": "rcd",
    "shuffled": "shuffled",
    "hierarchical": "hierarchical",
    "sliding": "sliding",
    "graphcluster": "graph",
}
#: counterparts that need ``full_budgeter.py`` in the checkout
PIPELINES = ("shuffled", "hierarchical", "sliding", "graph")
#: ``SELECTOR@UNITIZER`` runs our selector over our unitizer; its counterpart is the released
#: pipeline over the matching released units (the same selector: ``--pipeline-selector``)
UNIT_COUNTERPARTS = {"section": "hierarchical", "window": "sliding", "cluster": "graph"}
MODES = ("ratio", "fit")
#: budgetctx's selectors with no released counterpart (``auto`` chooses among the others)
UNPAIRED = ("least_divergence",)

#: ``f(dataset, document, word_budget) -> context``; the dataset only picks the released
#: section parser (its hierarchical units know Cochrane's headings and MIMIC's)
Released = Callable[[str, str, int], str]


def split_spec(spec: str) -> tuple[str, str]:
    """``"mmr:lambda_=0.5@window"`` -> (``"mmr:lambda_=0.5"``, ``"window"``); sentence by default.

    >>> split_spec("mmr@window"), split_spec("rcd:salience=null")
    (('mmr', 'window'), ('rcd:salience=null', 'sentence'))
    """
    selector, _, unitizer = spec.partition("@")
    return selector, unitizer or "sentence"


def counterpart(spec: str, pipeline_selector: str = "mmr") -> str:
    """The released selector paired with one of ours (a key of :func:`released_selectors`).

    >>> counterpart("graphcluster"), counterpart("mmr@window"), counterpart("rcd:salience=null")
    ('graph', 'sliding', 'rcd')
    """
    selector, unitizer = split_spec(spec)
    name = selector.split(":")[0]
    if unitizer == "sentence":
        if name not in COUNTERPARTS:
            raise ValueError(
                f"{spec!r} has no released counterpart; use one of {sorted(COUNTERPARTS)}"
            )
        return COUNTERPARTS[name]
    if unitizer not in UNIT_COUNTERPARTS or name != pipeline_selector:
        raise ValueError(
            f"{spec!r} has no released counterpart: the released pipelines run "
            f"{pipeline_selector!r} (--pipeline-selector) over {sorted(UNIT_COUNTERPARTS)} units"
        )
    return UNIT_COUNTERPARTS[unitizer]


def section_style(dataset: str) -> str:
    """The released section parser for a dataset: Cochrane's headings, else MIMIC's rules.

    >>> section_style("cochrane"), section_style("leval:news_summ")
    ('cochrane', 'mimic')
    """
    return "cochrane" if dataset.split(":")[0] == "cochrane" else "mimic"


def pipeline_selectors(root: Path, selector: str = "mmr") -> dict[str, Released]:
    """``full_budgeter.py``'s shuffled control and unitizations, or {} if the checkout lacks it.

    ``sentence_transformers`` is imported at its top but used only for BERT embeddings; where it
    is not installed an empty stand-in lets the TF-IDF paths import (they never touch it).
    """
    if not (root / "full_budgeter.py").is_file():
        return {}
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        importlib.import_module("sentence_transformers")
    except ImportError:
        stub = types.ModuleType("sentence_transformers")
        stub.SentenceTransformer = None  # type: ignore[attr-defined]
        sys.modules["sentence_transformers"] = stub
    fb = importlib.import_module("full_budgeter")

    def pipe(unitization: str, sel: str) -> Released:
        def f(dataset: str, doc: str, words: int) -> str:
            return str(
                fb.run_pipeline(
                    doc,
                    doc,
                    words,
                    unitization=unitization,
                    selector=sel,
                    dataset=section_style(dataset),
                    use_bert=False,
                    seed=42,
                )
            )

        return f

    out = {"shuffled": pipe("sentence", "shuffled")}
    out.update({u: pipe(u, selector) for u in ("hierarchical", "sliding", "graph")})
    return out


def released_selectors(root: Path, pipeline_selector: str = "mmr") -> dict[str, Released]:
    """The released selectors as ``f(dataset, document, word_budget) -> context``, honest mode."""
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
        "lead": lambda _, doc, words: str(sim.lead_selector(sim.split_sentences(doc), words)),
        "mmr": lambda _, doc, words: str(
            sim.mmr_selector_tfidf(sim.split_sentences(doc), words, doc, 0.5, True)
        ),
        "facility": lambda _, doc, words: str(
            sim.facility_location_selector(
                sim.split_sentences(doc), words, doc, 1.0, 0.8, 0.15, 0.03
            )
        ),
        "rcd": lambda _, doc, words: run_rcd(doc, words),
        **pipeline_selectors(root, pipeline_selector),
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
    if dataset.split(":")[0] == "leval":  # each document once, first summary, no query
        firsts = {e.document: e for e in reversed(out)}
        out = [replace(e, query=None) for e in out if firsts[e.document] is e]
    return out


def prepared(ex: Any, specs: list[str]) -> dict[str, Any]:
    """The example prepared once per unitizer the specs name (sentences always)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetCtxWarning)
        return {
            u: prepare(ex.document, query=ex.query, unitizer=u)
            for u in dict.fromkeys(["sentence", *(split_spec(s)[1] for s in specs)])
        }


def ours(
    docs: dict[str, Any],
    specs: list[str],
    budget: int,
    reference: str,
    score: Callable[[str, str], float],
    *,
    keep_text: bool,
) -> dict[str, Any]:
    """budgetctx's side of one row: each spec's score and tokens (and context)."""
    row: dict[str, Any] = {}
    for spec in specs:
        selector, unitizer = split_spec(spec)
        name, options = parse_selector_spec(selector)
        ctx = docs[unitizer].select(budget, selector=name, selector_options=options)
        row[f"ours:{spec}"] = score(ctx.text, reference)
        row[f"ours:{spec}:tokens"] = ctx.tokens_used
        if keep_text:
            row[f"ours:{spec}:text"] = ctx.text
    return row


def rescore(args: argparse.Namespace, saved: list[dict[str, Any]]) -> dict[str, Any]:
    """budgetctx's side re-run on the documents and budgets of saved results, paired with the
    released side *as saved* (it is deterministic, and minutes to hours to re-run): for
    trying a change of ours against the released code without running it again. Only the
    released columns of the counterparts the specs need are kept."""
    rouge = Rouge(use_stemmer=True)
    specs = args.selectors
    pairs_now = {spec: counterpart(spec, args.pipeline_selector) for spec in specs}
    rows: list[dict[str, Any]] = []
    result = {"selectors": specs, "pairs": pairs_now, "budgets": saved[0]["budgets"], "rows": rows}

    def score(text: str, reference: str) -> float:
        return float(rouge.score(text, reference).to_dict()["rouge1"]["f"])

    old = [r for res in saved for r in res["rows"]]
    for r in old:
        missing = {n for n in pairs_now.values() if f"released:{n}:fit" not in r}
        if missing:
            raise ValueError(f"the saved results hold no released {sorted(missing)}")
    by_doc: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in old:
        by_doc.setdefault((r["dataset"], r["split"], r["id"]), []).append(r)
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for (ds, split, doc_id), doc_rows in by_doc.items():
        if (ds, split) not in found:
            found[(ds, split)] = {e.id: e for e in examples(ds, split, args.data_dir)}
        ex = found[(ds, split)][doc_id]
        docs = prepared(ex, specs)
        for r in doc_rows:
            row = {k: r[k] for k in ("dataset", "split", "id", "budget")}
            row.update(
                ours(docs, specs, r["budget"], ex.reference, score, keep_text=args.keep_text)
            )
            for n in set(pairs_now.values()):
                for mode in MODES:
                    for key in (f"released:{n}:{mode}", f"released:{n}:{mode}:tokens"):
                        row[key] = r[key]
            rows.append(row)
    return result


def run(args: argparse.Namespace) -> dict[str, Any]:
    rouge = Rouge(use_stemmer=True)
    theirs = released_selectors(Path(args.released), args.pipeline_selector)
    specs = args.selectors
    pairs = {spec: counterpart(spec, args.pipeline_selector) for spec in specs}
    rows: list[dict[str, Any]] = []
    result = {"selectors": specs, "pairs": pairs, "budgets": args.budgets, "rows": rows}

    def score(text: str, reference: str) -> float:
        return float(rouge.score(text, reference).to_dict()["rouge1"]["f"])

    for ds in args.datasets:
        for split in args.splits:
            t0 = time.perf_counter()
            exs = examples(ds, split, args.data_dir)
            if args.limit and len(exs) > args.limit:  # spread over the split, as peer_grid does
                exs = [exs[round(i * len(exs) / args.limit)] for i in range(args.limit)]
            for ex in exs:
                docs = prepared(ex, specs)
                doc = docs["sentence"]
                count = doc.tokenizer.count
                words = len(ex.document.split())
                for b in args.budgets:
                    row: dict[str, Any] = {"dataset": ds, "split": split, "id": ex.id, "budget": b}
                    row.update(ours(docs, specs, b, ex.reference, score, keep_text=args.keep_text))
                    for name in sorted(set(pairs.values())):
                        f = theirs[name]
                        at = functools.partial(f, ds, ex.document)
                        by_mode = {
                            "ratio": at(round(b * words / doc.document_tokens)),
                            "fit": fit_words(at, count, b, words),
                        }
                        for mode, text in by_mode.items():
                            row[f"released:{name}:{mode}"] = score(text, ex.reference)
                            row[f"released:{name}:{mode}:tokens"] = count(text)
                            if args.keep_text:
                                row[f"released:{name}:{mode}:text"] = text
                    rows.append(row)
            print(
                f"{ds} {split}: {len(exs)} documents, {time.perf_counter() - t0:.0f} s",
                file=sys.stderr,
            )
            if args.out:  # what is done so far survives a run stopped part-way
                args.out.write_text(json.dumps(result))
    return result


def pairs(result: dict[str, Any]) -> dict[str, str]:
    """Each selector's counterpart in a saved result (older results saved none: sentence pairs)."""
    return result.get("pairs") or {s: counterpart(s) for s in result["selectors"]}


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
                name = pairs(result)[spec]
                for mode in MODES:
                    rel = np.array([r[f"released:{name}:{mode}"] for r in cell])
                    rel_tok = np.mean([r[f"released:{name}:{mode}:tokens"] for r in cell])
                    d = paired_bootstrap(ours, rel, seed=0).difference
                    print(
                        f"| {ds} | {b} | {len(cell)} | {spec} | {ours.mean():.4f} ({ours_tok:.0f}) "
                        f"| {name} | {mode} | {rel.mean():.4f} ({rel_tok:.0f}) "
                        f"| {d.estimate:+.4f} [{d.low:+.4f}, {d.high:+.4f}] |"
                    )


def family(dataset: str) -> str:
    """The table's data column: the L-Eval tasks are pooled (``leval:news_summ`` -> ``leval``)."""
    return dataset.split(":")[0]


def equal_tokens(result: dict[str, Any], *, line: float = -0.005) -> list[dict[str, Any]]:
    """Ours against the released counterpart at the fit budget (equal tokens), per data family,
    split (and both splits pooled), budget and selector: means, mean tokens, the paired
    bootstrap difference, and whether it is below ``line`` (the issue's bar)."""
    rows = result["rows"]
    out: list[dict[str, Any]] = []
    splits = list(dict.fromkeys(r["split"] for r in rows))
    groups = [(s,) for s in splits] + ([tuple(splits)] if len(splits) > 1 else [])
    for fam in dict.fromkeys(family(r["dataset"]) for r in rows):
        for group in groups:
            for b in result["budgets"]:
                cell = [
                    r
                    for r in rows
                    if family(r["dataset"]) == fam and r["split"] in group and r["budget"] == b
                ]
                for spec in result["selectors"]:
                    name = pairs(result)[spec]
                    ours = np.array([r[f"ours:{spec}"] for r in cell])
                    rel = np.array([r[f"released:{name}:fit"] for r in cell])
                    d = paired_bootstrap(ours, rel, seed=0).difference
                    out.append(
                        {
                            "data": fam,
                            "split": "+".join(group),
                            "budget": b,
                            "n": len(cell),
                            "selector": spec,
                            "released": name,
                            "ours": float(ours.mean()),
                            "ours_tokens": float(np.mean([r[f"ours:{spec}:tokens"] for r in cell])),
                            "theirs": float(rel.mean()),
                            "theirs_tokens": float(
                                np.mean([r[f"released:{name}:fit:tokens"] for r in cell])
                            ),
                            "difference": d.estimate,
                            "low": d.low,
                            "high": d.high,
                            "below": bool(d.estimate < line),
                        }
                    )
    return out


def equal_tokens_table(result: dict[str, Any]) -> None:
    """The equal-token table in markdown, one row per data family, budget and selector: both
    sides' mean ROUGE-1 (mean tokens) over every split, then ours − released [95 %] per split
    and pooled; a difference below the line is bold."""
    cells = equal_tokens(result)
    groups = list(dict.fromkeys(c["split"] for c in cells))
    print(
        "| data | B | ours | released | ours (tokens) | released, fit (tokens) | "
        + " | ".join(f"{g} (n={next(c['n'] for c in cells if c['split'] == g)})" for g in groups)
        + " |"
    )
    print("|:--|--:|:--|:--|--:|--:|" + ":--|" * len(groups))
    by_key: dict[tuple[str, int, str], dict[str, dict[str, Any]]] = {}
    for c in cells:
        by_key.setdefault((c["data"], c["budget"], c["selector"]), {})[c["split"]] = c
    for (data, b, spec), row in by_key.items():
        a = row[groups[-1]]
        diffs = []
        for g in groups:
            c = row[g]
            d = f"{c['difference']:+.4f}"
            diffs.append(f"{f'**{d}**' if c['below'] else d} [{c['low']:+.4f}, {c['high']:+.4f}]")
        print(
            f"| {data} | {b} | `{spec}` | {a['released']} "
            f"| {a['ours']:.4f} ({a['ours_tokens']:.0f}) "
            f"| {a['theirs']:.4f} ({a['theirs_tokens']:.0f}) | " + " | ".join(diffs) + " |"
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
    ap.add_argument("--load", type=Path, nargs="+", help="print the tables of saved results")
    ap.add_argument(
        "--rescore",
        type=Path,
        nargs="+",
        help="re-run budgetctx's --selectors on the documents of saved results (--keep-text "
        "not needed), paired with their released side as saved; no --released needed",
    )
    ap.add_argument(
        "--pipeline-selector",
        default="mmr",
        choices=["lead", "mmr", "facility"],
        help="the released selector over its hierarchical, sliding and graph units "
        "(run_pipeline's default is mmr)",
    )
    ap.add_argument("--keep-text", action="store_true", help="save every context in --out")
    args = ap.parse_args()
    if args.load:  # several saved runs of the same selectors and budgets are read as one
        loaded = [json.loads(path.read_text()) for path in args.load]
        merged = {**loaded[0], "rows": [r for res in loaded for r in res["rows"]]}
        table(merged)
        print()
        equal_tokens_table(merged)
        return
    if args.rescore:
        if not Path(args.data_dir).is_dir():
            print(f"no shared data at {args.data_dir}: nothing to compare (pass --data-dir)")
            return
        try:
            result = rescore(args, [json.loads(path.read_text()) for path in args.rescore])
        except ValueError as exc:
            ap.error(str(exc))
        if args.out:
            args.out.write_text(json.dumps(result))
        equal_tokens_table(result)
        return
    if not args.released or not (Path(args.released) / "rcd.py").is_file():
        ap.error(
            "--released DIR must be a checkout of the paper's released code (rcd.py and "
            "sim_mimic_budget.py); clone https://github.com/stone-technologies/ACL_budget_paper"
        )
    if not Path(args.data_dir).is_dir():
        print(f"no shared data at {args.data_dir}: nothing to compare (pass --data-dir)")
        return
    has_pipelines = (Path(args.released) / "full_budgeter.py").is_file()
    for spec in args.selectors:
        try:
            name = counterpart(spec, args.pipeline_selector)
        except ValueError as exc:
            ap.error(str(exc))
        if name in PIPELINES and not has_pipelines:
            ap.error(
                f"{spec!r}'s counterpart is in the released full_budgeter.py, which "
                f"{args.released} lacks; pass a checkout that has it or drop {spec!r}"
            )
    result = run(args)
    if args.out:
        args.out.write_text(json.dumps(result))
    table(result)
    print()
    equal_tokens_table(result)


if __name__ == "__main__":
    main()
