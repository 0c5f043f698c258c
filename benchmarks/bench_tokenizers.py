"""Tokenizer throughput: budgetctx's o200k_base / cl100k_base against quicktok and toktok.

Reads the L-Eval documents from the shared datasets and prints tokens/s for ``count()`` (one call
per document) and ``count_batch()`` (one call for all documents). Informational only: nothing is
asserted. Columns for quicktok / toktok are skipped when the package is not importable.

    .venv/bin/python benchmarks/bench_tokenizers.py [--data DIR] [--repeat N] [--docs N]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from budgetctx.tokenizers import get_tokenizer

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = Path(os.environ.get("BUDGETCTX_SHARED_DATA", REPO.parent / "shared" / "data"))
ENCODINGS = ("o200k_base", "cl100k_base")


def load_leval(folder: Path) -> list[str]:
    docs: list[str] = []
    for path in sorted(folder.glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            docs.extend(json.loads(line)["input"] for line in fh if line.strip())
    return docs


def _optional(module: str) -> Any | None:
    try:
        return __import__(module)
    except ImportError:
        return None


def best_seconds(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def contenders(
    encoding: str, quicktok: Any | None, toktok: Any | None
) -> dict[str, dict[str, Callable[[Sequence[str]], list[int]]]]:
    """name -> {"count": per-document loop, "count_batch": one batched call}."""
    tok = get_tokenizer(encoding)
    out: dict[str, dict[str, Callable[[Sequence[str]], list[int]]]] = {
        "budgetctx": {
            "count": lambda docs: [tok.count(d) for d in docs],
            "count_batch": tok.count_batch,
        }
    }
    if quicktok is not None:
        enc = quicktok.get_encoding(encoding)
        out["quicktok"] = {
            "count": lambda docs: [enc.count(d) for d in docs],
            "count_batch": lambda docs: [int(n) for n in quicktok.count_batch(enc, docs)],
        }
    if toktok is not None:
        out["toktok"] = {
            "count": lambda docs: [toktok.batch_count([d], encoding)[0] for d in docs],
            "count_batch": lambda docs: list(toktok.batch_count(docs, encoding)),
        }
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared data folder")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the best is kept")
    parser.add_argument("--docs", type=int, default=0, help="use only the first N documents")
    args = parser.parse_args(argv)

    folder = args.data / "leval"
    if not folder.is_dir():
        print(f"skipped: L-Eval documents not found at {folder} (set BUDGETCTX_SHARED_DATA)")
        return 0
    docs = load_leval(folder)
    if args.docs:
        docs = docs[: args.docs]
    if not docs:
        print(f"skipped: no documents in {folder}")
        return 0

    quicktok, toktok = _optional("quicktok"), _optional("toktok")
    names = ["budgetctx", "quicktok", "toktok"]
    print(
        f"{len(docs)} L-Eval documents, {sum(map(len, docs)) / 1e6:.2f}M characters; "
        f"best of {args.repeat}; python {sys.version.split()[0]}, {os.cpu_count()} CPUs"
    )
    for name, mod in (("quicktok", quicktok), ("toktok", toktok)):
        if mod is None:
            print(f"{name}: not importable here, column skipped")

    header = f"{'encoding':<12} {'method':<12} {'tokens':>10}" + "".join(
        f" {n + ' tok/s':>16}" for n in names
    )
    print()
    print(header)
    print("-" * len(header))
    for encoding in ENCODINGS:
        fns = contenders(encoding, quicktok, toktok)
        expected = fns["budgetctx"]["count"](docs)
        total = sum(expected)
        for method in ("count", "count_batch"):
            cells = []
            for name in names:
                if name not in fns:
                    cells.append("skipped")
                    continue
                fn = fns[name][method]
                if fn(docs) != expected:  # warm-up, and a sanity check (never fatal)
                    cells.append("MISMATCH")
                    continue
                seconds = best_seconds(functools.partial(fn, docs), args.repeat)
                cells.append(f"{total / seconds / 1e6:.2f}M")
            print(f"{encoding:<12} {method:<12} {total:>10,}" + "".join(f" {c:>16}" for c in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
