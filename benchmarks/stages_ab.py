"""Two checkouts' segmenter, TF-IDF and segment counting side by side in one process (issue 27).

Loads ``unitizers/_segment.py``, ``representations/_tfidf_core.py`` and
``tokenizers/_tiktoken.py`` (``count_segments``, separator ``"\n"``) from two source trees
(``--before`` and ``--after``, each a ``src`` folder) and times them interleaved on the same
documents as ``bench_floor.py`` (~2k, ~16k, ~64k tokens), beside the floor (o200k_base
``encode_ordinary``), in process CPU time, medians. On a busy shared machine this is the
comparison that means something: both sides see the same load. Checks, too, that both give the
same segments, the same TF-IDF matrices and the same counts.

    git worktree add /tmp/before <commit>
    PYTHONPATH=src python benchmarks/stages_ab.py --before /tmp/before/src --after src
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_floor as bf

PATTERN = r"(?u)\b\w+(?:[./\-']\w+)*\b"  # the tfidf representation's token pattern


def load(src: Path, module: str, alias: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(alias, src / "budgetctx" / module)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[alias] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def pair(a: Callable[[], Any], b: Callable[[], Any], reps: int) -> tuple[float, float]:
    a(), b()
    ta, tb = [], []
    for _ in range(reps):
        t = time.process_time()
        a()
        ta.append(time.process_time() - t)
        t = time.process_time()
        b()
        tb.append(time.process_time() - t)
    return statistics.median(ta) * 1e3, statistics.median(tb) * 1e3


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--before", type=Path, required=True)
    p.add_argument("--after", type=Path, required=True)
    p.add_argument("--data-dir")
    p.add_argument("--sizes", nargs="+", default=["2k", "16k", "64k"])
    args = p.parse_args()
    root = bf.data_dir(args.data_dir)
    if not (root / "leval" / "gov_report_summ.jsonl").is_file():
        print(f"no L-Eval data under {root}; pass --data-dir", file=sys.stderr)
        return 0
    from budgetctx import get_tokenizer

    sides = ("before", "after")
    seg = {k: load(getattr(args, k), "unitizers/_segment.py", f"seg_{k}") for k in sides}
    tfidf = {
        k: load(getattr(args, k), "representations/_tfidf_core.py", f"tfidf_{k}") for k in sides
    }
    counter = {
        k: load(getattr(args, k), "tokenizers/_tiktoken.py", f"tiktoken_{k}").TiktokenTokenizer(
            "o200k_base"
        )
        for k in sides
    }
    tok = get_tokenizer("o200k_base")
    floor = bf.floor_fn(tok)
    print(
        "document                 floor ms | segment_text ms (x floor)  | TF-IDF fit_transform ms"
        " | count_segments ms"
    )
    for label in args.sizes:
        for name, text in bf.documents(root, tok, label):
            reps = 15 if bf.tokens_of(label) <= 4096 else 7
            floors = []
            for _ in range(reps):
                t = time.process_time()
                floor(text)
                floors.append(time.process_time() - t)
            fl = statistics.median(floors) * 1e3
            segs = {k: seg[k].segment_text(text) for k in seg}
            same_segments = [(s.start, s.end, s.kind, s.heading) for s in segs["before"]] == [
                (s.start, s.end, s.kind, s.heading) for s in segs["after"]
            ]
            units = [s.text for s in segs["after"]]
            s_b, s_a = pair(
                lambda t=text: seg["before"].segment_text(t),
                lambda t=text: seg["after"].segment_text(t),
                reps,
            )
            fit = {k: tfidf[k].TfidfCounter(token_pattern=PATTERN).fit_transform for k in tfidf}
            x_b, x_a = fit["before"](units)[1], fit["after"](units)[1]
            same_tfidf = (
                (x_b.indptr == x_a.indptr).all()
                and (x_b.indices == x_a.indices).all()
                and x_b.data.tobytes() == x_a.data.tobytes()
            )
            t_b, t_a = pair(
                lambda f=fit["before"], u=units: f(u), lambda f=fit["after"], u=units: f(u), reps
            )
            spans = [(s.start, s.end) for s in segs["after"]]
            same_counts = counter["before"].count_segments(text, spans, "\n") == counter[
                "after"
            ].count_segments(text, spans, "\n")
            c_b, c_a = pair(
                lambda t=text, s=spans: counter["before"].count_segments(t, s, "\n"),
                lambda t=text, s=spans: counter["after"].count_segments(t, s, "\n"),
                reps,
            )
            same = same_segments and same_tfidf and same_counts
            print(
                f"{name:<24} {fl:8.2f} | {s_b:7.2f} -> {s_a:7.2f} ({s_b / fl:.2f}x -> "
                f"{s_a / fl:.2f}x) | {t_b:6.2f} -> {t_a:6.2f} ({t_b / fl:.2f}x -> {t_a / fl:.2f}x)"
                f" | {c_b:6.2f} -> {c_a:6.2f} ({c_b / fl:.2f}x -> {c_a / fl:.2f}x)"
                f"{'' if same else '  DIFFERENT OUTPUT'}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
