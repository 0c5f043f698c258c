"""Check the guard against tiktoken's whitespace-run panic on real text (issue 27, part H).

The guard (``budgetctx.tokenizers._whitespace``) runs only on texts holding a run of 65,536+
whitespace characters, which the shared data never has. So its threshold is lowered here to
``--min-length`` characters, which makes it split nearly every text, and its ids are compared
with tiktoken's own ``encode_ordinary`` of the same text (tiktoken does not panic on such short
runs), for o200k_base, cl100k_base and Tekken; the ``regex`` module's split that the guard used
before is compared too. Texts: every ``--every``-th text of ``verify_bpe_openai``'s corpus
(every string of the shared data), its edge cases, and its seeded random strings. Prints the
mismatches per encoding; exits 1 if the guard's ids ever differ from tiktoken's.

    .venv/bin/python benchmarks/verify_whitespace_guard.py [--every 10] [--random 2000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from budgetctx.tokenizers import _tiktoken, _whitespace
from budgetctx.tokenizers._tekken import TekkenTokenizer
from verify_bpe_openai import EDGE, data_texts, random_texts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("/work/shared/data"))
    parser.add_argument("--every", type=int, default=10, help="keep every N-th data text")
    parser.add_argument("--random", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--min-length", type=int, default=2)
    args = parser.parse_args()
    texts = [t for t in EDGE if len(t) < 65_536]  # the longer ones: tiktoken's own test
    if args.data_dir.is_dir():
        texts += [t for i, (_, t) in enumerate(data_texts(args.data_dir)) if i % args.every == 0]
    texts += [t for _, t in random_texts(args.random, args.seed)]
    encodings = {n: _tiktoken._encoding(n) for n in ("o200k_base", "cl100k_base")}
    encodings["tekken"] = TekkenTokenizer()._enc
    guard_bad = 0
    for name, enc in encodings.items():
        t0 = time.perf_counter()
        split = guard = old = tokens = 0
        for text in texts:
            want = enc.encode_ordinary(text)
            tokens += len(want)
            split += _whitespace._stretches(args.min_length).search(text) is not None
            guard += _whitespace.encode_long_runs(enc, text, args.min_length) != want
            old += _whitespace._regex_split(enc, text) != want
        guard_bad += guard
        print(
            f"{name}: {len(texts)} texts ({split} with a stretch of {args.min_length}+ blanks "
            f"cut out), {tokens} tokens; guard's ids differ from tiktoken's on {guard}; "
            f"the regex module's split (before) on {old}; {time.perf_counter() - t0:.1f} s"
        )
    return 1 if guard_bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
