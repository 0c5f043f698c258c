"""Choosers for ``auto`` that do not read the candidates' own TF-IDF view, and a calibrated one
(issue 21, session 5, part D).

``auto`` is ``least_divergence`` over MMR, MMR reading the fused salience and RCD reading it,
kept by the Jensen-Shannon divergence of content-term presence ("OLD" below). On the test
split and on the fresh validation documents that chooser is barely better than a random pick
among the three, while a perfect per-document pick would reach the goal on test. This runs the
three candidates once per document and budget, keeps each context's ROUGE-1 F1 and a set of
reference-free features, and evaluates choosers offline:

A. single scores, the score picked leave-one-dataset-out (LODO) among: presence JS (OLD),
   mass JS, word-bigram presence JS, share of the document's top-10 / top-30 TF-IDF terms
   present, the static-vector cosine distance between the context's and the document's mean
   unit vector, and the static facility value (word-weighted mean over the document's units of
   the best cosine to a kept unit; ``representations/_static.py``'s bundled vectors);
B. a pairwise logistic regression (standardized, C=0.1, no intercept, sample weight
   |delta ROUGE|, ties skipped) on every feature, centred within each (document, budget)
   instance, trained LODO; B' the same without the static-vector features.

The decision rule was written before any result was computed (docs/results.md, issue 21,
"Fifth pass"). The reference is read only to score. ``--split test`` is for the report only::

    nice python benchmarks/route_calibrated.py collect --split validation --limit 1000 \\
        --out /tmp/rc_validation.json                               # ~5 min on 2 busy cores
    python benchmarks/route_calibrated.py evaluate --rows /tmp/rc_validation.json \\
        --grid /work/notes/after4f/validation.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

sys.path.insert(0, str(Path(__file__).parent))
import auto_versions as av
import peer_grid as pg
from budgetctx import prepare
from budgetctx._errors import BudgetCtxWarning
from budgetctx.eval.metrics import Rouge
from budgetctx.representations._static import StaticEmbeddings

CANDIDATES = ("mmr", "mmr:salience=fused", "rcd:salience=fused")
#: single scores, lower is better (coverages and similarities negated)
SCORES = (
    "js_presence",
    "js_mass",
    "js_bigram",
    "neg_top10",
    "neg_top30",
    "static_cos",
    "neg_static_fl",
)
STATIC = ("static_cos", "neg_static_fl")
SHAPE = ("tokens_frac", "log_units", "log_unit_cost", "zero_rel", "pos_mean", "pos_spread")
ONEHOT = tuple(f"is_{c}" for c in CANDIDATES)
FEATURES = SCORES + SHAPE + ONEHOT
_WORD = re.compile(r"(?u)\b\w[\w'-]*\b")


def _js(p: np.ndarray, q: np.ndarray) -> float:
    if p.sum() <= 0 or q.sum() <= 0:
        return 1.0
    p, q = p / p.sum(), q / q.sum()
    m = 0.5 * (p + q)
    return float(sum(0.5 * np.sum(a[a > 0] * np.log2(a[a > 0] / m[a > 0])) for a in (p, q)))


def _bigram_presence(texts: Sequence[str]) -> Any:
    vocab: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for i, text in enumerate(texts):
        words = [w.lower() for w in _WORD.findall(text)]
        for g in {f"{a} {b}" for a, b in itertools.pairwise(words)}:
            rows.append(i)
            cols.append(vocab.setdefault(g, len(vocab)))
    shape = (len(texts), max(len(vocab), 1))
    return sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)


class DocumentView:
    """What a chooser may read of one document: its TF-IDF rows, unit texts and relevance."""

    def __init__(self, X: Any, texts: Sequence[str], relevance: np.ndarray) -> None:
        X = sparse.csr_matrix(X, dtype=np.float64)
        self.n = X.shape[0]
        presence = X.copy()
        presence.data[:] = 1.0
        nnz = np.diff(X.indptr)
        sums = np.asarray(X.sum(axis=1)).ravel()
        mass = sparse.diags(np.divide(nnz, sums, out=np.zeros(self.n), where=sums > 0)) @ X
        self.mats = {
            "js_presence": presence.tocsr(),
            "js_mass": sparse.csr_matrix(mass),
            "js_bigram": _bigram_presence(texts),
        }
        self.whole = {k: np.asarray(m.sum(axis=0)).ravel() for k, m in self.mats.items()}
        weight = np.asarray(X.sum(axis=0)).ravel()
        self.top = {k: np.argsort(-weight, kind="stable")[:k] for k in (10, 30)}
        self.E = StaticEmbeddings.load().encode(list(texts)).astype(np.float64)
        self.doc_vec = self.E.mean(axis=0)
        self.words = np.array([max(len(_WORD.findall(t)), 1) for t in texts], dtype=np.float64)
        self.relevance = np.asarray(relevance, dtype=np.float64)

    def features(self, kept: Sequence[int], tokens: int, budget: int) -> dict[str, float]:
        idx = np.asarray(sorted(set(kept)), dtype=np.int64)
        out: dict[str, float] = {}
        for k, m in self.mats.items():
            q = np.asarray(m[idx].sum(axis=0)).ravel() if idx.size else 0 * self.whole[k]
            out[k] = _js(self.whole[k], q)
        present = np.asarray(self.mats["js_presence"][idx].sum(axis=0)).ravel() > 0
        for k, top in self.top.items():
            out[f"neg_top{k}"] = -float(present[top].mean()) if top.size else 0.0
        if idx.size:
            v = self.E[idx].mean(axis=0)
            d = float(np.linalg.norm(v) * np.linalg.norm(self.doc_vec))
            out["static_cos"] = 1.0 - float(v @ self.doc_vec) / d if d > 0 else 1.0
            best = np.clip(self.E @ self.E[idx].T, 0.0, None).max(axis=1)
            out["neg_static_fl"] = -float(best @ self.words / self.words.sum())
        else:
            out["static_cos"], out["neg_static_fl"] = 1.0, 0.0
        pos = idx / max(self.n - 1, 1)
        out["tokens_frac"] = tokens / budget
        out["log_units"] = float(np.log1p(idx.size))
        out["log_unit_cost"] = float(np.log1p(tokens / max(idx.size, 1)))
        out["zero_rel"] = float((self.relevance[idx] <= 0).mean()) if idx.size else 0.0
        out["pos_mean"] = float(pos.mean()) if idx.size else 0.0
        out["pos_spread"] = float(pos.std()) if idx.size else 0.0
        return out


def collect(split: str, data_dir: str, limit: int, budgets: Sequence[int]) -> dict[str, Any]:
    """Per document and budget: each candidate's ROUGE-1 F1 and features."""
    rouge = Rouge(use_stemmer=True)
    rows = []
    for ds in pg.DATASETS:
        for ex in pg._examples(ds, split, data_dir, limit):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", BudgetCtxWarning)
                doc = prepare(ex.document, query=ex.query)
            texts = [u.text for u in doc.segmentation.units]
            view = DocumentView(doc.features.X, texts, doc.features.relevance)
            for b in budgets:
                row: dict[str, Any] = {"dataset": ds, "id": ex.id, "budget": b}
                row["rouge"], row["features"] = {}, {}
                for spec in CANDIDATES:
                    ctx = doc.select(b, selector=pg._selector(spec))
                    kept = [u.id for u in ctx.units]
                    row["rouge"][spec] = float(rouge.score(ctx.text, ex.reference).rouge1.f)
                    f = view.features(kept, ctx.tokens_used, b)
                    f.update({f"is_{c}": float(c == spec) for c in CANDIDATES})
                    row["features"][spec] = f
                rows.append(row)
        print(f"{ds} {split}: done", file=sys.stderr)
    return {"split": split, "budgets": list(budgets), "rows": rows}


Chooser = Callable[[Mapping[str, Any]], str]


def by_score(name: str) -> Chooser:
    """The candidate with the lowest ``name`` (ties: the earlier candidate, as ``auto``)."""
    return lambda r: min(CANDIDATES, key=lambda c: r["features"][c][name])


def _centred(row: Mapping[str, Any], names: Sequence[str]) -> np.ndarray:
    F = np.array([[row["features"][c][n] for n in names] for c in CANDIDATES])
    return F - F.mean(axis=0)


def fit_pairwise(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> Chooser:
    """Pairwise logistic regression: P(candidate i beats j) = sigma(w . (f_i - f_j))."""
    from sklearn.linear_model import LogisticRegression

    Xs, ys, ws = [], [], []
    for r in rows:
        F = _centred(r, names)
        for i, j in itertools.combinations(range(len(CANDIDATES)), 2):
            d = r["rouge"][CANDIDATES[i]] - r["rouge"][CANDIDATES[j]]
            if abs(d) < 1e-9:
                continue
            for sign in (1, -1):
                Xs.append(sign * (F[i] - F[j]))
                ys.append(int(sign * d > 0))
                ws.append(abs(d))
    X = np.array(Xs)
    scale = X.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=0.1, fit_intercept=False, max_iter=1000)
    model.fit(X / scale, np.array(ys), sample_weight=np.array(ws))
    w = model.coef_.ravel() / scale

    def choose(r: Mapping[str, Any]) -> str:
        s = _centred(r, names) @ w
        return CANDIDATES[int(np.argmax(s))]

    choose.weights = dict(zip(names, w.tolist(), strict=True))  # type: ignore[attr-defined]
    return choose


def cell_means(rows: Sequence[Mapping[str, Any]], pick: Chooser) -> dict[Any, float]:
    by: dict[Any, list[float]] = {}
    for r in rows:
        by.setdefault((r["dataset"], r["budget"]), []).append(r["rouge"][pick(r)])
    return {c: float(np.mean(v)) for c, v in by.items()}


def as_result(
    split: str, budgets: Sequence[int], rows: Sequence[Mapping[str, Any]], picks: Mapping[str, Any]
) -> dict[str, Any]:
    """``auto_versions``' result layout (scores[dataset][name][budget], one entry per document)
    for the paired bootstrap; ``picks``: name -> chooser, or per-dataset choosers."""
    ids: dict[str, list[str]] = {}
    scores: dict[str, dict[str, dict[str, list[float]]]] = {}
    for r in rows:
        ds = r["dataset"]
        if r["id"] not in ids.setdefault(ds, []):
            ids[ds].append(r["id"])
        for name, pick in picks.items():
            p = pick[ds] if isinstance(pick, dict) else pick
            by = scores.setdefault(ds, {}).setdefault(name, {})
            by.setdefault(str(r["budget"]), []).append(r["rouge"][p(r)])
    return {"split": split, "budgets": list(budgets), "ids": ids, "scores": scores}


def lodo(
    rows: Sequence[Mapping[str, Any]], make: Callable[[Sequence[Mapping[str, Any]]], Chooser]
) -> dict[str, Chooser]:
    """Per dataset: the chooser made from the other datasets' rows."""
    datasets = sorted({r["dataset"] for r in rows})
    return {ds: make([r for r in rows if r["dataset"] != ds]) for ds in datasets}


def pick_score(rows: Sequence[Mapping[str, Any]], names: Sequence[str] = SCORES) -> Chooser:
    """The single score with the best mean over the rows' cells (family A)."""
    best = max(names, key=lambda n: np.mean(list(cell_means(rows, by_score(n)).values())))
    chooser = by_score(best)
    chooser.score = best  # type: ignore[attr-defined]
    return chooser


def pick_fixed(rows: Sequence[Mapping[str, Any]]) -> Chooser:
    """The candidate with the best mean over the rows' cells, used alone (family F)."""
    best = max(CANDIDATES, key=lambda c: np.mean(list(cell_means(rows, lambda r, c=c: c).values())))
    chooser: Chooser = lambda r: best  # noqa: E731
    chooser.score = f"fixed {best}"  # type: ignore[attr-defined]
    return chooser


FAMILIES: dict[str, Callable[[Sequence[Mapping[str, Any]]], Chooser]] = {
    "A (single score, picked)": pick_score,
    "B (logistic, all features)": lambda rows: fit_pairwise(rows, FEATURES),
    "B' (logistic, no static)": lambda rows: fit_pairwise(
        rows, [f for f in FEATURES if f not in STATIC]
    ),
}


def _fmt(p: Mapping[str, Any]) -> str:
    return f"{p['diff']:+.4f} [{p['low']:+.4f}, {p['high']:+.4f}] {p['cells_up']}/{p['cells_down']}"


def _name(pick: Any) -> str:
    folds = pick.values() if isinstance(pick, dict) else [pick]
    return ", ".join(sorted({getattr(f, "score", None) or "weights" for f in folds}))


def report(
    title: str,
    split: str,
    budgets: Sequence[int],
    rows: Sequence[Mapping[str, Any]],
    picks: Mapping[str, Any],
    best: Mapping[Any, float] | None,
    cells: Sequence[str] = (),
) -> None:
    """One markdown table: each chooser's means, hits, best-of-three count and paired
    differences (95 % bootstrap, documents resampled within dataset; up/down: cells)."""
    res = as_result(split, budgets, rows, picks)
    print(f"\n## {title} ({len(rows)} document x budget pairs)\n")
    print(
        "| chooser | cells | documents | hits | best of 3 | new - OLD (cells) | "
        "new - MMR (cells) | new - RCD (cells) | new - MMR (documents) |"
    )
    print("|:--|--:|--:|--:|--:|:--|:--|:--|:--|")
    for name, pick in picks.items():
        c = av.cell_means(res, name, None)
        docs = np.mean([v for by in res["scores"].values() for B in by[name].values() for v in B])
        hits = "" if best is None else str(sum(v >= best[k] - 0.005 - 1e-9 for k, v in c.items()))
        right = sum(
            r["rouge"][(pick[r["dataset"]] if isinstance(pick, dict) else pick)(r)]
            >= max(r["rouge"].values()) - 1e-9
            for r in rows
        )
        diffs = [
            _fmt(av.paired(res, name, other)) if name != other else ""
            for other in ("OLD", "MMR", "RCD")
        ]
        diffs.append(_fmt(av.paired(res, name, "MMR", weight="documents")) if name != "MMR" else "")
        print(
            f"| {name} | {np.mean(list(c.values())):.4f} | {docs:.4f} | {hits} | {right} | "
            + " | ".join(diffs)
            + " |"
        )
    print("\n" + signal(rows))
    if cells:
        print("\n| dataset | B | n | " + " | ".join(cells) + " |")
        print("|:--|--:|--:|" + "--:|" * len(cells))
        means = {n: av.cell_means(res, n, None) for n in cells}
        for ds, B in means[cells[0]]:
            n = len(res["scores"][ds][cells[0]][str(B)])
            row = " | ".join(f"{means[m][(ds, B)]:.3f}" for m in cells)
            print(f"| {ds} | {B} | {n} | {row} |")


def signal(rows: Sequence[Mapping[str, Any]]) -> str:
    """Per single score: of the candidate pairs whose ROUGE differs, the share where the score
    prefers the better context (0.5: no signal), plain and weighted by |delta ROUGE|."""
    out = []
    for name in SCORES:
        right = total = wright = wtotal = 0.0
        for r in rows:
            for a, b in itertools.combinations(CANDIDATES, 2):
                d = r["rouge"][a] - r["rouge"][b]
                e = r["features"][a][name] - r["features"][b][name]
                if abs(d) < 1e-9 or abs(e) < 1e-12:
                    continue
                ok = (d > 0) == (e < 0)
                right, total = right + ok, total + 1
                wright, wtotal = wright + ok * abs(d), wtotal + abs(d)
        out.append(f"{name} {right / max(total, 1):.3f} / {wright / max(wtotal, 1e-12):.3f}")
    return "pairwise agreement (plain / weighted): " + "; ".join(out)


def _best(grid: Mapping[str, Any] | None, budgets: Sequence[int]) -> dict[Any, float] | None:
    if grid is None:
        return None
    return {
        (ds, b): max(float(np.mean(grid["scores"][ds][m][str(b)])) for m in av.RIVALS["+ sumy"])
        for ds in grid["scores"]
        for b in budgets
    }


WIDE = {
    "C (logistic, every document)": FAMILIES["B (logistic, all features)"],
    "C' (logistic, every document, no static)": FAMILIES["B' (logistic, no static)"],
}
FIXED = {
    "OLD": by_score("js_presence"),
    "MMR": lambda r: "mmr",
    "RCD": lambda r: "rcd:salience=fused",
}
CELLS = (
    "OLD",
    "MMR",
    "RCD",
    "B (logistic, all features)",
    "C (logistic, every document)",
    "oracle",
)


def _oracle(r: Mapping[str, Any]) -> str:
    return max(CANDIDATES, key=lambda c: r["rouge"][c])


def evaluate(data: Mapping[str, Any], grid: Mapping[str, Any] | None, data_dir: str) -> None:
    """Validation: every family LODO on the ``--limit 10`` documents, then on the fresh ones."""
    split, budgets, rows = data["split"], data["budgets"], data["rows"]
    seen = {ds: {e.id for e in pg._examples(ds, split, data_dir, 10)} for ds in pg.DATASETS}
    chosen_on = [r for r in rows if r["id"] in seen[r["dataset"]]]
    fresh = [r for r in rows if r["id"] not in seen[r["dataset"]]]
    picks: dict[str, Any] = dict(FIXED)
    shipped: dict[str, Chooser] = {}
    for fam, make in FAMILIES.items():
        picks[fam] = lodo(chosen_on, make)
        shipped[fam] = make(chosen_on)
    for fam, make in WIDE.items():  # LODO over every document of the other datasets
        picks[fam] = lodo(rows, make)
    picks["F (fixed candidate, picked)"] = lodo(chosen_on, pick_fixed)
    scores = {f"score {s}": by_score(s) for s in SCORES}
    title = f"{split}: the --limit 10 documents, LODO"
    report(
        title,
        split,
        budgets,
        chosen_on,
        {**picks, **scores, "oracle": _oracle},
        _best(grid, budgets),
        CELLS,
    )
    for fam, pick in picks.items():
        if isinstance(pick, dict):
            print(f"{fam}: LODO folds pick {_name(pick)}")
    for fam, chooser in shipped.items():
        w = getattr(chooser, "weights", None)
        shown = {k: round(v, 3) for k, v in w.items()} if w else _name(chooser)
        print(f"{fam}, trained on every --limit 10 document: {shown}")
    if fresh:
        fpicks: dict[str, Any] = {**FIXED, **shipped}
        fpicks.update({f"{fam} LODO": picks[fam] for fam in FAMILIES})
        fpicks.update({fam: picks[fam] for fam in (*WIDE, "F (fixed candidate, picked)")})
        title = f"{split}: fresh documents (shipped A/B/B': trained on every --limit 10 document)"
        report(title, split, budgets, fresh, {**fpicks, **scores, "oracle": _oracle}, None)


def evaluate_test(
    data: Mapping[str, Any],
    train: Mapping[str, Any],
    grid: Mapping[str, Any] | None,
    data_dir: str,
) -> None:
    """The test split, once: every chooser made on validation only."""
    seen = {ds: {e.id for e in pg._examples(ds, "validation", data_dir, 10)} for ds in pg.DATASETS}
    vrows = train["rows"]
    chosen_on = [r for r in vrows if r["id"] in seen[r["dataset"]]]
    picks: dict[str, Any] = dict(FIXED)
    for fam, make in FAMILIES.items():
        picks[fam] = make(chosen_on)
    for fam, make in WIDE.items():
        picks[fam] = make(vrows)
    picks["F (fixed candidate, picked)"] = pick_fixed(chosen_on)
    picks["oracle"] = _oracle
    budgets = data["budgets"]
    report(
        f"{data['split']} (choosers made on validation)",
        data["split"],
        budgets,
        data["rows"],
        picks,
        _best(grid, budgets),
        CELLS,
    )
    for fam, pick in picks.items():
        if fam not in FIXED and fam != "oracle":
            print(f"{fam}: {_name(pick)}")


def cost(data_dir: Path, docs: int, repeats: int, budget: int = 512) -> None:
    """CPU time per call at 2k tokens (``bench_select_settings.py``'s documents), interleaved,
    medians: MMR's and ``auto``'s ``select()``, and what a chooser would add to ``auto``: the
    static vectors of every unit (word cache emptied, then warm) and the bigram presence."""
    import statistics
    import time

    from bench_build_context import TOKENIZER, Corpus, load_leval, load_mtsamples, parse_size
    from budgetctx import get_tokenizer

    tok = get_tokenizer(TOKENIZER)
    corpus = Corpus(
        load_leval(data_dir / "leval"),
        load_mtsamples(data_dir / "mtsamples_discharge" / "discharge_summaries.derived.jsonl"),
        seed=0,
    )
    texts, _ = corpus.docs(tok, parse_size("2k"), docs)
    steps: dict[str, Callable[[Any, list[str]], Any]] = {
        "mmr": lambda doc, units: doc.select(budget, selector="mmr"),
        "auto": lambda doc, units: doc.select(budget, selector="auto"),
        "static, cold": lambda doc, units: (
            StaticEmbeddings.load()._cache.clear(),
            StaticEmbeddings.load().encode(units),
        ),
        "static, warm": lambda doc, units: StaticEmbeddings.load().encode(units),
        "bigrams": lambda doc, units: _bigram_presence(units),
    }
    times: dict[str, list[float]] = {k: [] for k in steps}
    for text in texts:
        doc = prepare(text, tokenizer=TOKENIZER)
        units = [u.text for u in doc.segmentation.units]
        for f in steps.values():  # warm-up
            f(doc, units)
        for _ in range(repeats):
            for key, f in steps.items():
                t = time.process_time()
                f(doc, units)
                times[key].append((time.process_time() - t) * 1000)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"2k tokens, {len(texts)} documents x {repeats}, budget {budget}: median CPU ms")
    for k, v in med.items():
        print(f"  {k}: {v:.2f} ms ({v / med['mmr']:.2f}x MMR)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--split", choices=("validation", "test"), required=True)
    c.add_argument("--limit", type=int, default=10)
    c.add_argument("--budgets", nargs="+", type=int, default=list(pg.BUDGETS))
    c.add_argument("--out", type=Path, required=True)
    e = sub.add_parser("evaluate")
    e.add_argument("--rows", type=Path, required=True)
    e.add_argument("--grid", type=Path, help="peer_grid.py --limit 10 result (for the hits)")
    e.add_argument("--train", type=Path, help="validation rows: evaluate --rows (test) once")
    k = sub.add_parser("cost")
    k.add_argument("--docs", type=int, default=3)
    k.add_argument("--repeats", type=int, default=9)
    for p in (c, e, k):
        p.add_argument("--data-dir", default=str(Path(__file__).parents[1] / "../shared/data"))
    args = ap.parse_args()
    if not Path(args.data_dir).is_dir():
        print(f"no data at {args.data_dir}; nothing to run", file=sys.stderr)
        return
    if args.command == "cost":
        cost(Path(args.data_dir), args.docs, args.repeats)
    elif args.command == "collect":
        data = collect(args.split, args.data_dir, args.limit, args.budgets)
        args.out.write_text(json.dumps(data))
    else:
        grid = json.loads(args.grid.read_text()) if args.grid else None
        data = json.loads(args.rows.read_text())
        if args.train:
            evaluate_test(data, json.loads(args.train.read_text()), grid, args.data_dir)
        else:
            evaluate(data, grid, args.data_dir)


if __name__ == "__main__":
    main()
