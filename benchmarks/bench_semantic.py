"""Latency of query relevance by meaning (issue 22): ``build_context`` with a query on ~2k-token
documents, TF-IDF alone (``TfidfRepresentation(semantic=False)``) against TF-IDF plus the
bundled static embeddings (the default), interleaved in one process so that a busy machine
slows both alike. Target: the semantic path at most 2x the TF-IDF path's median.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_semantic.py [--reps 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

from budgetctx import BudgetCtxWarning, build_context, get_tokenizer
from budgetctx.representations import TfidfRepresentation
from budgetctx.representations._static import StaticEmbeddings

QUERIES = ("Which relative owns birds?", "What was decided about the budget?", "anticoagulation")


def documents(data_dir: str, n: int, tokens: int) -> list[str]:
    from budgetctx.eval.datasets import load_dataset

    tok = get_tokenizer("o200k_base")
    examples = load_dataset("leval", split="test", data_dir=data_dir)
    docs = list(dict.fromkeys(e.document for e in examples))
    return [tok.truncate(d, tokens) for d in docs[:n]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data-dir", default=str(Path(__file__).parents[1] / "../shared/data"))
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--docs", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=2000)
    ap.add_argument("--budget", type=int, default=512)
    args = ap.parse_args()
    if not Path(args.data_dir).is_dir():
        print(f"no data at {args.data_dir}; pass --data-dir", file=sys.stderr)
        return
    t = time.perf_counter()
    StaticEmbeddings.load()
    print(
        f"static embeddings: loaded once per process in {1000 * (time.perf_counter() - t):.0f} ms"
    )
    docs = documents(args.data_dir, args.docs, args.tokens)
    reps = {
        "tfidf": TfidfRepresentation(semantic=False),
        "tfidf+static": TfidfRepresentation(semantic=True),
    }
    times: dict[str, list[float]] = {k: [] for k in reps}
    warnings.simplefilter("ignore", BudgetCtxWarning)
    for r in range(args.reps + 1):
        for d in docs:
            for q in QUERIES:
                for name, rep in reps.items():
                    t = time.perf_counter()
                    build_context(d, args.budget, query=q, representation=rep)
                    if r:  # the first round warms caches
                        times[name].append(1000 * (time.perf_counter() - t))
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in times.items():
        p95 = sorted(v)[int(0.95 * (len(v) - 1))]
        print(f"{k:<14s} median {med[k]:7.2f} ms   p95 {p95:7.2f} ms   ({len(v)} calls)")
    ratio = med["tfidf+static"] / med["tfidf"]
    flag = "" if ratio <= 2 else "  ! over the 2x target"
    print(f"ratio (median) {ratio:.2f}x, target <= 2x{flag}; ~{args.tokens}-token documents")


if __name__ == "__main__":
    main()
