"""Reference-free choosers among ``least_divergence``'s candidates, offline (issue 21, fourth pass).

Every candidate selector is run once per document and budget on the examples of
``peer_grid.py`` (same spread, same preparation); each context's kept units and ROUGE-1 F1
are kept. Choosers are then evaluated without re-running anything: a chooser reads only the
document (its TF-IDF rows and unit texts) and the candidates' kept units, never the
reference. Reported per candidate set, over the 22 (dataset, budget) cells: the mean and the
"hits" (cells within 0.005 of the best of Lead, MMR, facility, RCD and the three sumy rankers,
read from a ``peer_grid.py`` result with the peers) of

- the third pass's chooser (JS divergence of content-term mass) and of term presence;
- the per-instance oracle among the set's candidates (what a perfect chooser would get);
- the chooser (term distribution x divergence, 63 of them) picked leave-one-dataset-out:
  for each dataset, the chooser with the best mean over the *other* datasets' cells.

::

    nice python benchmarks/peer_grid.py --split validation --limit 10 --sumy-cache /tmp/sumy \\
        --out /tmp/validation.json
    nice python benchmarks/route_choosers.py --split validation --grid /tmp/validation.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

sys.path.insert(0, str(Path(__file__).parent))
import peer_grid as pg
from budgetctx import prepare
from budgetctx._errors import BudgetCtxWarning
from budgetctx.eval.metrics import Rouge
from budgetctx.representations._tfidf_core import ENGLISH_STOP_WORDS

RIVALS = ("lead", "mmr", "facility", "rcd", "sumy-lsa", "sumy-lexrank", "sumy-sumbasic")
SETS = {
    "mmr, mmr fused (third pass)": ("mmr", "mmr:salience=fused"),
    "mmr, rcd": ("mmr", "rcd"),
    "mmr, mmr fused, rcd (kept)": ("mmr", "mmr:salience=fused", "rcd"),
    "mmr, facility, rcd": ("mmr", "facility", "rcd"),
    "mmr, mmr fused, rcd, facility": ("mmr", "mmr:salience=fused", "rcd", "facility"),
    "lead, mmr, mmr fused": ("lead", "mmr", "mmr:salience=fused"),
    "lead, mmr, mmr fused, rcd": ("lead", "mmr", "mmr:salience=fused", "rcd"),
    "mmr fused, rcd": ("mmr:salience=fused", "rcd"),
}
_WORD = re.compile(r"(?u)\b\w[\w'-]*\b")
Vec = np.ndarray


def _js(p: Vec, q: Vec) -> float:
    if p.sum() <= 0 or q.sum() <= 0:
        return 1.0
    p, q = p / p.sum(), q / q.sum()
    m = 0.5 * (p + q)
    return float(sum(0.5 * np.sum(a[a > 0] * np.log2(a[a > 0] / m[a > 0])) for a in (p, q)))


def _kl_doc(p: Vec, q: Vec) -> float:  # KL(document || context smoothed towards it)
    p = p / p.sum()
    q = 0.9 * q / max(q.sum(), 1e-12) + 0.1 * p
    return float(np.sum(p[p > 0] * np.log2(p[p > 0] / q[p > 0])))


def _kl_ctx(p: Vec, q: Vec) -> float:  # KL(context || document)
    p, q = p / p.sum(), q / max(q.sum(), 1e-12)
    return float(np.sum(q[q > 0] * np.log2(q[q > 0] / p[q > 0])))


def _cos(p: Vec, q: Vec) -> float:
    d = float(np.linalg.norm(p) * np.linalg.norm(q))
    return 1 - float(p @ q) / d if d > 0 else 1.0


def _top(k: int) -> Callable[[Vec, Vec], float]:
    def cover(p: Vec, q: Vec) -> float:  # share of the document's top-k terms' mass covered
        idx = np.argsort(-p)[:k]
        return -float(p[idx][q[idx] > 0].sum() / p[idx].sum())

    return cover


DIVERGENCES: dict[str, Callable[[Vec, Vec], float]] = {
    "js": _js,
    "kl(doc|ctx)": _kl_doc,
    "kl(ctx|doc)": _kl_ctx,
    "cosine": _cos,
    "top10": _top(10),
    "top30": _top(30),
    "top100": _top(100),
}


def _counts(texts: Sequence[str], *, content: bool, n: int) -> Any:
    vocab: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for i, text in enumerate(texts):
        words = [w.lower() for w in _WORD.findall(text)]
        if content:
            words = [w for w in words if w not in ENGLISH_STOP_WORDS and not w.isdigit()]
        grams = words if n == 1 else [f"{a} {b}" for a, b in itertools.pairwise(words)]
        for g in grams:
            rows.append(i)
            cols.append(vocab.setdefault(g, len(vocab)))
    shape = (len(texts), max(len(vocab), 1))
    return sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)


def term_matrices(X: Any, texts: Sequence[str]) -> dict[str, Any]:
    """Unit x term matrices a chooser may read: three from the TF-IDF rows (free at run
    time) and six from a second pass over the words."""
    # a small document's rows are budgetctx's own CSR arrays (representations._csr)
    X = sparse.csr_matrix(X.to_scipy() if hasattr(X, "to_scipy") else X, dtype=np.float64)
    nnz = np.diff(X.indptr)
    sums = np.asarray(X.sum(axis=1)).ravel()
    presence = X.copy()
    presence.data[:] = 1.0
    content = _counts(texts, content=True, n=1)
    df = np.diff(content.tocsc().indptr)
    sublinear = content.copy()
    sublinear.data = 1 + np.log(sublinear.data)
    return {
        "mass": sparse.diags(np.divide(nnz, sums, out=np.zeros(len(nnz)), where=sums > 0)) @ X,
        "tfidf": X,
        "presence": presence,
        "words": _counts(texts, content=False, n=1),
        "content words": content,
        "content words, idf": content @ sparse.diags(np.log((1 + len(texts)) / (1 + df)) + 1),
        "content words, sublinear": sublinear,
        "bigrams": _counts(texts, content=False, n=2),
        "content bigrams": _counts(texts, content=True, n=2),
    }


def collect(split: str, data_dir: str, limit: int, budgets: Sequence[int]) -> list[dict[str, Any]]:
    """Per example and budget: every candidate's ROUGE-1 and each chooser's score."""
    specs = sorted({s for c in SETS.values() for s in c})
    rouge = Rouge(use_stemmer=True)
    out = []
    for ds in pg.DATASETS:
        for ex in pg._examples(ds, split, data_dir, limit):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", BudgetCtxWarning)
                doc = prepare(ex.document, query=ex.query)
            mats = term_matrices(doc.features.X, [u.text for u in doc.segmentation.units])
            whole = {k: np.asarray(m.sum(axis=0)).ravel() for k, m in mats.items()}
            for b in budgets:
                row: dict[str, Any] = {"dataset": ds, "budget": b, "rouge": {}, "score": {}}
                for spec in specs:
                    ctx = doc.select(b, selector=pg._selector(spec))
                    kept = [u.id for u in ctx.units]
                    row["rouge"][spec] = float(rouge.score(ctx.text, ex.reference).rouge1.f)
                    for k, m in mats.items():
                        q = np.asarray(m[kept].sum(axis=0)).ravel() if kept else 0 * whole[k]
                        for name, f in DIVERGENCES.items():
                            row["score"][(spec, k, name)] = f(whole[k], q)
                out.append(row)
        print(f"{ds}: done", file=sys.stderr)
    return out


def cells(
    rows: Sequence[dict[str, Any]], pick: Callable[[dict[str, Any]], str]
) -> dict[Any, float]:
    by: dict[Any, list[float]] = {}
    for r in rows:
        by.setdefault((r["dataset"], r["budget"]), []).append(r["rouge"][pick(r)])
    return {c: float(np.mean(v)) for c, v in by.items()}


def chooser(cands: Sequence[str], key: tuple[str, str]) -> Callable[[dict[str, Any]], str]:
    return lambda r: min(cands, key=lambda c: r["score"][(c, *key)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("validation", "test"), required=True)
    ap.add_argument("--grid", type=Path, required=True, help="peer_grid.py result with peers")
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--budgets", nargs="+", type=int, default=list(pg.BUDGETS))
    ap.add_argument("--data-dir", default=str(Path(__file__).parents[1] / "../shared/data"))
    args = ap.parse_args()
    grid = json.loads(args.grid.read_text())["scores"]
    rows = collect(args.split, args.data_dir, args.limit, args.budgets)
    best = {
        (ds, b): max(float(np.mean(grid[ds][m][str(b)])) for m in RIVALS)
        for ds, b in {(r["dataset"], r["budget"]) for r in rows}
    }

    def summary(c: dict[Any, float], keys: Sequence[Any] | None = None) -> str:
        keys = list(keys or c)
        hits = sum(c[k] >= best[k] - 0.005 for k in keys)
        return f"{np.mean([c[k] for k in keys]):.4f} / {hits}"

    kinds = list(term_matrices(sparse.csr_matrix(np.eye(2)), ["a b", "c d"]))
    keys = [(k, d) for k in kinds for d in DIVERGENCES]
    datasets = sorted({r["dataset"] for r in rows})
    print("| candidates | mass JS | presence JS | per-instance oracle | chooser chosen LODO |")
    print("|:--|--:|--:|--:|:--|")
    for label, cands in SETS.items():
        table = {key: cells(rows, chooser(cands, key)) for key in keys}
        held: dict[Any, float] = {}
        picks = []
        for out in datasets:
            kept = max(keys, key=lambda k: np.mean([v for c, v in table[k].items() if c[0] != out]))
            picks.append(kept)
            held.update({c: v for c, v in table[kept].items() if c[0] == out})
        oracle = cells(rows, lambda r, cands=cands: max(cands, key=lambda s: r["rouge"][s]))
        top = ", ".join(f"{k}/{d} x{n}" for (k, d), n in Counter(picks).most_common(2))
        print(
            f"| {label} | {summary(table[('mass', 'js')])} | "
            f"{summary(table[('presence', 'js')])} | {summary(oracle)} | "
            f"{summary(held)} ({top}) |"
        )


if __name__ == "__main__":
    main()
