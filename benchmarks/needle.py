"""Needle in a haystack, asked by its words and by its meaning (issue 22).

Each needle sentence (written for this benchmark, no real patient) is put at a seeded random
sentence boundary of each long document; the context at each budget counts as a hit when it
holds the whole needle. Every needle has a lexical question (shares its rare words) and a
paraphrase (shares none of its content words). Corpora: L-Eval inputs (>= 3,000 words:
reports, meetings, patents, news, scripts, papers, reviews), and haystacks of 6 Cochrane
abstracts and of 8 MTSamples notes joined. Choose settings on ``--split validation``; report
``--split test``. Prints hits per selector x budget, per corpus and in all.

    PYTHONPATH=src .venv/bin/python benchmarks/needle.py --split test
    PYTHONPATH=src .venv/bin/python benchmarks/needle.py --split test --lexical-only  # tfidf
    PYTHONPATH=src .venv/bin/python benchmarks/needle.py --split test --selectors mmr --per-needle
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

from budgetctx import BudgetCtxWarning, prepare
from budgetctx.representations import TfidfRepresentation

NEEDLES: list[tuple[str, str, str]] = [
    # (needle, lexical question, paraphrase)
    (
        "The patient's cousin Eleanor keeps 14 parrots named after planets.",
        "How many parrots does Eleanor keep?",
        "Which relative owns birds?",
    ),
    (
        "Her grandmother's violin was sold at an auction in Lisbon for nine thousand euros.",
        "Where was the grandmother's violin auctioned?",
        "What happened to the old family instrument?",
    ),
    (
        "A leaking boiler flooded the basement archive and ruined the 1987 tax records.",
        "What did the leaking boiler ruin in the basement archive?",
        "Which papers were destroyed by water damage?",
    ),
    (
        "The night nurse noticed that the patient became confused and agitated after midnight.",
        "What did the night nurse notice after midnight?",
        "Was there any delirium overnight?",
    ),
    (
        "The team's new mascot is a three-legged greyhound called Pepper.",
        "What is the new mascot called?",
        "Which dog represents the club?",
    ),
    (
        "Inspectors closed the Ardle bridge after finding cracks in two steel girders.",
        "Why did inspectors close the Ardle bridge?",
        "What structural defect shut the crossing?",
    ),
]

BUDGETS = (128, 256, 512)
SELECTORS = ("mmr", "rcd", "facility", "sliding", "lead")


def _boundaries(text: str) -> list[int]:
    """Offsets just after a sentence end followed by a space or newline."""
    return [m.end() for m in re.finditer(r"[.!?][\"')\]]?(?=\s)", text)] or [len(text)]


def insert(text: str, needle: str, seed: str) -> str:
    rng = random.Random(seed)
    cuts = _boundaries(text)
    # not in the first or last tenth: a lead or tail selector should not find it by position
    lo, hi = len(cuts) // 10, max(len(cuts) * 9 // 10, len(cuts) // 10 + 1)
    at = cuts[rng.randrange(lo, hi)]
    return text[:at] + " " + needle + text[at:]


def corpora(split: str, data_dir: str) -> dict[str, list[str]]:
    from budgetctx.eval.datasets import load_dataset

    out: dict[str, list[str]] = {}
    leval = load_dataset("leval", split=split, data_dir=data_dir)
    docs = list(dict.fromkeys(e.document for e in leval))
    out["leval"] = [d for d in docs if len(d.split()) >= 3000][:30]
    coch = [e.document for e in load_dataset("cochrane", split=split, data_dir=data_dir)]
    out["cochrane x6"] = ["\n\n".join(coch[i : i + 6]) for i in range(0, len(coch) - 5, 6)][:10]
    mts = list(
        dict.fromkeys(e.document for e in load_dataset("mtsamples", split=split, data_dir=data_dir))
    )
    out["mtsamples x8"] = ["\n\n".join(mts[i : i + 8]) for i in range(0, len(mts) - 7, 8)][:10]
    return out


def run(args: argparse.Namespace) -> None:
    docs = corpora(args.split, args.data_dir)
    try:
        rep = TfidfRepresentation(semantic=not args.lexical_only)  # type: ignore[call-arg]
    except TypeError:  # a checkout from before issue 22: lexical only
        rep = TfidfRepresentation()
    needles = NEEDLES[: args.needles]
    # hits[(corpus, kind, selector, budget)] -> count; trials[(corpus, kind)] -> count
    hits: dict[tuple[str, str, str, int], int] = defaultdict(int)
    # per_needle[(corpus, k, kind, selector, budget)] -> count (the "of 30" is per needle)
    per_needle: dict[tuple[str, int, str, str, int], int] = defaultdict(int)
    trials: dict[tuple[str, str], int] = defaultdict(int)
    over = 0
    t0 = time.perf_counter()
    for corpus, texts in docs.items():
        for d, text in enumerate(texts):
            for k, (needle, lexical, paraphrase) in enumerate(needles):
                hay = insert(text, needle, f"{corpus}:{d}:{k}")
                for kind, q in (("lexical", lexical), ("paraphrase", paraphrase)):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", BudgetCtxWarning)
                        doc = prepare(hay, query=q, representation=rep)
                    trials[(corpus, kind)] += 1
                    for sel in args.selectors:
                        for b in args.budgets:
                            ctx = doc.select(b, selector=sel)
                            over += ctx.tokens_used > b
                            hit = needle in ctx.text
                            hits[(corpus, kind, sel, b)] += hit
                            per_needle[(corpus, k, kind, sel, b)] += hit
    print(
        f"needle benchmark, split={args.split}, {len(needles)} needles, "
        f"representation={'tfidf (lexical only)' if args.lexical_only else 'tfidf + static'}, "
        f"{time.perf_counter() - t0:.0f} s; contexts over budget: {over}"
    )
    for corpus in [*docs, "all"]:
        names = list(docs) if corpus == "all" else [corpus]
        for kind in ("lexical", "paraphrase"):
            n = sum(trials[(c, kind)] for c in names)
            if not n:
                continue
            print(f"\n{corpus} ({n // len(needles)} documents x {len(needles)} needles), {kind}")
            print("  selector   " + "".join(f"{b:>12d}" for b in args.budgets))
            for sel in args.selectors:
                cells = ""
                for b in args.budgets:
                    h = sum(hits[(c, kind, sel, b)] for c in names)
                    cells += f"{h}/{n} {100 * h / n:.0f}%".rjust(12)
                print(f"  {sel:<10s} {cells}")
    if args.per_needle:
        for corpus in docs:
            n = len(docs[corpus])
            print(f"\n{corpus}, hits per needle (of {n} documents) at {args.budgets} tokens")
            for kind in ("lexical", "paraphrase"):
                for sel in args.selectors:
                    cells = "  ".join(
                        "/".join(str(per_needle[(corpus, k, kind, sel, b)]) for b in args.budgets)
                        for k in range(len(needles))
                    )
                    print(f"  {kind:<10s} {sel:<9s} {cells}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--split", choices=("validation", "test"), default="validation")
    ap.add_argument("--data-dir", default=str(Path(__file__).parents[1] / "../shared/data"))
    ap.add_argument("--budgets", nargs="+", type=int, default=list(BUDGETS))
    ap.add_argument("--selectors", nargs="+", default=list(SELECTORS))
    ap.add_argument("--needles", type=int, default=len(NEEDLES))
    ap.add_argument("--lexical-only", action="store_true", help="TF-IDF without meaning")
    ap.add_argument("--per-needle", action="store_true", help="also print hits per needle")
    args = ap.parse_args()
    if not Path(args.data_dir).is_dir():
        print(f"no data at {args.data_dir}; pass --data-dir", file=sys.stderr)
        return
    run(args)


if __name__ == "__main__":
    main()
