"""Two checkouts' lazy greedy (facility, RCD, ``auto``) side by side in one process (issue 27).

Loads ``selectors/_greedy.py`` and ``objectives/_objectives.py`` from two source trees
(``--before`` and ``--after``, each a ``src`` folder) and swaps them into the selectors that use
them, then times ``PreparedDocument.select`` for each selector with the two versions
interleaved on the same prepared documents (those of ``bench_select_settings.py``: ~2k-token
MTSamples notes, ~64k-token L-Eval inputs concatenated), in process CPU time, medians. On a
busy shared machine this is the comparison that means something: both sides see the same load.
Checks, too, that both give the same context (every field but the timings, floats by
``repr``). The dense kernel's weighted coverage sums are swapped too (their block size);
``--cold`` recomputes them on every call, as a document's first selection does.

    git worktree add /tmp/before <commit>
    PYTHONPATH=src python benchmarks/greedy_ab.py --before /tmp/before/src --after src
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build_context import (
    ENV_DATA,
    REPO,
    TOKENIZER,
    Corpus,
    load_leval,
    load_mtsamples,
    parse_size,
)
from budgetctx import get_tokenizer, prepare
from budgetctx.representations import _features
from budgetctx.selectors import _submodular
from stages_ab import load  # one module of a source tree, loaded under an alias


def version(src: Path, tag: str) -> dict[str, Any]:
    objectives = load(src, "objectives/_objectives.py", f"_ab_objectives_{tag}")
    greedy = load(src, "selectors/_greedy.py", f"_ab_greedy_{tag}")
    features = load(src, "representations/_features.py", f"_ab_features_{tag}")
    return {
        "lazy_greedy": greedy.lazy_greedy,
        "FacilityLocation": objectives.FacilityLocation,
        "RCDObjective": objectives.RCDObjective,
        # rows per block of the dense kernel's weighted coverage sums (512 before it was named)
        "_ROWS": getattr(features, "_ROWS", 512),
    }


def use(v: dict[str, Any]) -> None:
    for name, obj in v.items():
        setattr(_features if name == "_ROWS" else _submodular, name, obj)


def fingerprint(ctx: Any) -> str:
    """Every field but the timings, floats by ``repr`` (a change in the last bit shows)."""
    out = ctx.to_dict()
    out.pop("timings_ms", None)
    return repr(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, required=True)
    default_data = Path(os.environ.get(ENV_DATA, REPO.parent / "shared" / "data"))
    ap.add_argument("--data-dir", type=Path, default=default_data)
    ap.add_argument("--sizes", nargs="+", default=["2k", "64k"])
    ap.add_argument("--budgets", nargs="+", type=int, default=[512, 2048])
    ap.add_argument("--docs", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--selectors", nargs="+", default=["rcd", "facility", "auto"])
    ap.add_argument(
        "--cold",
        action="store_true",
        help="forget the kernel's weighted coverage sums before each call, as a document's "
        "first selection at a budget (what build_context pays) computes them",
    )
    args = ap.parse_args()
    versions = {"before": version(args.before, "before"), "after": version(args.after, "after")}
    tok = get_tokenizer(TOKENIZER)
    corpus = Corpus(
        load_leval(args.data_dir / "leval"),
        load_mtsamples(args.data_dir / "mtsamples_discharge" / "discharge_summaries.derived.jsonl"),
        seed=0,
    )
    for size, budget in zip(args.sizes, args.budgets, strict=True):
        docs, source = corpus.docs(tok, parse_size(size), args.docs)
        times: dict[tuple[str, str], list[float]] = {}
        same = True
        for text in docs:
            doc = prepare(text, tokenizer=TOKENIZER)
            for sel in args.selectors:
                prints = {}
                for tag, v in versions.items():
                    use(v)
                    prints[tag] = fingerprint(doc.select(budget, selector=sel))  # warm-up
                same &= prints["before"] == prints["after"]
            # one selector at a time: facility's and RCD's coverage weights differ, and the
            # kernel keeps only the last weights' sums
            for sel in args.selectors:
                for _ in range(args.repeats):
                    for tag, v in versions.items():
                        use(v)
                        if args.cold:
                            doc.features.kernel._weighted = None
                        t0 = time.process_time()
                        doc.select(budget, selector=sel)
                        times.setdefault((sel, tag), []).append((time.process_time() - t0) * 1000.0)
        print(
            f"{size} ({len(docs)} docs, {source}), budget {budget}: median select() CPU ms; "
            f"same contexts: {same}"
        )
        for sel in args.selectors:
            a = statistics.median(times[(sel, "before")])
            b = statistics.median(times[(sel, "after")])
            print(f"  {sel}: {a:.1f} -> {b:.1f} ({100 * (b / a - 1):+.0f} %)")


if __name__ == "__main__":
    main()
