"""Scoring cost per context: fast ROUGE (budgetctx) vs plain rouge-score, and BERTScore.

Informational: prints a table, asserts nothing. Reads an L-Eval document as the candidate
pool from ../shared/data (or BUDGETCTX_SHARED_DATA) and exits 0 when it is absent.

    .venv/bin/python benchmarks/bench_metrics.py [--bertscore]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _data_dir() -> Path:
    return Path(os.environ.get("BUDGETCTX_SHARED_DATA", REPO.parent / "shared" / "data"))


def _time(fn: Callable[[], object], repeats: int) -> float:
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bertscore", action="store_true", help="also time BERTScore (slow)")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    source = _data_dir() / "leval" / "gov_report_summ.jsonl"
    if not source.is_file():
        print(f"skipped: {source} not found (set BUDGETCTX_SHARED_DATA)")
        return 0
    from rouge_score import rouge_scorer

    from budgetctx import build_context
    from budgetctx.eval.metrics import Rouge

    record = json.loads(source.read_text(encoding="utf-8").splitlines()[0])
    reference = record["outputs"][0]
    candidate = build_context(record["input"], 2048, selector="lead").text
    print(f"candidate: {len(candidate.split())} words; reference: {len(reference.split())} words")
    print("| scorer | stemmer | ms per score (median) |")
    print("|---|---|---|")
    for stem in (True, False):
        plain = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=stem)
        fast = Rouge(use_stemmer=stem)

        def run_plain(scorer: rouge_scorer.RougeScorer = plain) -> object:
            return scorer.score(reference, candidate)

        def run_fast(scorer: Rouge = fast) -> object:
            return scorer.score(candidate, reference)

        for label, fn in (("rouge-score R1/R2/RL", run_plain), ("budgetctx Rouge", run_fast)):
            print(f"| {label} | {stem} | {_time(fn, args.repeats):.1f} |")
    if args.bertscore:
        from budgetctx.eval.metrics import BERTScore

        scorer = BERTScore()
        cands = [candidate[: 2000 + 50 * i] for i in range(16)]
        refs = [reference] * len(cands)
        ms = _time(lambda: scorer.score(cands, refs), 2)
        print(f"| BERTScore (MiniLM L6, 16 pairs per call) | - | {ms / len(cands):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
