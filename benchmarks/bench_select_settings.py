"""Selection latency of selector *settings*, old against new, on the same prepared documents.

The documents are those of ``bench_build_context.py`` (~2k tokens: MTSamples notes; ~64k:
L-Eval inputs concatenated). Each document is prepared once; then every setting's
``PreparedDocument.select`` is timed ``--repeats`` times, settings interleaved so that a
busy machine slows them alike. Reports the median of ``ctx.timings_ms["select"]`` per size
and setting. Informational only: nothing is asserted.

    python benchmarks/bench_select_settings.py --pairs \\
        mmr 'mmr:cost_exponent=0,position_decay=0.03' facility 'facility:cost_exponent=0'
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from budgetctx import get_tokenizer, prepare
from budgetctx.selectors import parse_selector_spec

sys.path.insert(0, str(Path(__file__).parent))
from bench_build_context import (
    ENV_DATA,
    REPO,
    TOKENIZER,
    Corpus,
    load_leval,
    load_mtsamples,
    parse_size,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_data = Path(os.environ.get(ENV_DATA, REPO.parent / "shared" / "data"))
    ap.add_argument("--data-dir", type=Path, default=default_data)
    ap.add_argument("--sizes", nargs="+", default=["2k", "64k"])
    ap.add_argument("--budgets", nargs="+", type=int, default=[512, 2048])
    ap.add_argument("--docs", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--pairs", nargs="+", required=True, help="settings: old new old new ...")
    ap.add_argument(
        "--total",
        action="store_true",
        help="time the whole select() call (routing and rendering too), e.g. mmr against auto",
    )
    args = ap.parse_args()
    tok = get_tokenizer(TOKENIZER)
    corpus = Corpus(
        load_leval(args.data_dir / "leval"),
        load_mtsamples(args.data_dir / "mtsamples_discharge" / "discharge_summaries.derived.jsonl"),
        seed=0,
    )
    specs = [parse_selector_spec(s) for s in args.pairs]
    for size, budget in zip(args.sizes, args.budgets, strict=True):
        docs, source = corpus.docs(tok, parse_size(size), args.docs)
        times: dict[str, list[float]] = {s: [] for s in args.pairs}
        for text in docs:
            doc = prepare(text, tokenizer=TOKENIZER)
            for name, options in specs:
                doc.select(budget, selector=name, selector_options=options)  # warm-up
            for _ in range(args.repeats):
                for label, (name, options) in zip(args.pairs, specs, strict=True):
                    t0 = time.perf_counter()
                    ctx = doc.select(budget, selector=name, selector_options=options)
                    total = (time.perf_counter() - t0) * 1000.0
                    times[label].append(total if args.total else ctx.timings_ms["select"])
        what = "select() call" if args.total else "select"
        print(f"{size} ({len(docs)} docs, {source}), budget {budget}: median {what} ms")
        for i in range(0, len(args.pairs) - 1, 2):
            old, new = args.pairs[i], args.pairs[i + 1]
            a, b = statistics.median(times[old]), statistics.median(times[new])
            print(f"  {old}: {a:.1f}  ->  {new}: {b:.1f}  ({100 * (b / a - 1):+.0f} %)")


if __name__ == "__main__":
    main()
