"""Many documents under one budget: 20 documents x ~2k tokens under a 2,048-token budget,
per selector, beside the same text as ONE 20x-longer document (issue 11).

The documents are MTSamples discharge notes concatenated to ~2k o200k tokens each (L-Eval
inputs when MTSamples is absent). For every selector both shapes are timed in the same run,
calls interleaved (list, concatenation, list, ...) so that machine load hits both alike;
the table reports the median and p95 of ``build_context`` wall time, the tokens used and
the ratio list / concatenation. The concatenation joins the documents with a blank line, no
headers. Informational: nothing is asserted; rows where the list costs more than 1.10x the
concatenation are flagged with "!".

    .venv/bin/python benchmarks/bench_documents.py                   # 20 x 2k, budget 2048
    .venv/bin/python benchmarks/bench_documents.py --docs 50 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from budgetctx import Document, build_context, get_tokenizer, list_selectors

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_build_context import (
    ENV_DATA,
    REPO,
    Corpus,
    load_leval,
    load_mtsamples,
)


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=20)
    ap.add_argument("--tokens", type=int, default=2048, help="tokens per document")
    ap.add_argument("--budget", type=int, default=2048)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--selectors", nargs="*", default=None)
    ap.add_argument("--data-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    data = args.data_dir or Path(os.environ.get(ENV_DATA, REPO.parent / "shared" / "data"))
    leval = load_leval(data / "leval") if (data / "leval").is_dir() else []
    notes = load_mtsamples(data / "mtsamples_discharge" / "discharge_summaries.derived.jsonl")
    if not leval and not notes:
        print(f"no data under {data}: nothing to measure (set {ENV_DATA} or --data-dir)")
        return 0
    tok = get_tokenizer("o200k_base")
    docs, source = Corpus(leval, notes, seed=0).docs(tok, args.tokens, args.docs)
    documents = [Document(t, id=f"note-{i + 1}") for i, t in enumerate(docs)]
    joined = "\n\n".join(docs)
    print(
        f"{len(docs)} documents ({source}), {sum(tok.count(d) for d in docs)} tokens in all; "
        f"concatenation {tok.count(joined)} tokens; budget {args.budget}; "
        f"{args.repeats} calls each; load {os.getloadavg()[0]:.2f}"
    )
    header = ("selector", "list ms", "p95", "concat ms", "p95", "list/concat", "tokens l/c")
    rows = []
    for name in args.selectors or list_selectors():
        build_context(documents, args.budget, selector=name)  # warm-up
        build_context(joined, args.budget, selector=name)
        t_list: list[float] = []
        t_cat: list[float] = []
        used = ("", "")
        for _ in range(args.repeats):
            t = time.perf_counter()
            a = build_context(documents, args.budget, selector=name)
            t_list.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            b = build_context(joined, args.budget, selector=name)
            t_cat.append((time.perf_counter() - t) * 1000)
            assert a.tokens_used <= args.budget and b.tokens_used <= args.budget
            used = (str(a.tokens_used), str(b.tokens_used))
        ratio = statistics.median(t_list) / statistics.median(t_cat)
        rows.append(
            (
                name,
                f"{statistics.median(t_list):.0f}",
                f"{p95(t_list):.0f}",
                f"{statistics.median(t_cat):.0f}",
                f"{p95(t_cat):.0f}",
                f"{ratio:.2f}" + (" !" if ratio > 1.10 else ""),
                "/".join(used),
            )
        )
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    for line in (header, *rows):
        print("  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)))
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
