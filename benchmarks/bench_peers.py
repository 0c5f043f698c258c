"""``build_context`` against the peers end to end: document text in, a context within B tokens
out (issue 27: "faster than the released MMR, pyversity and submodlib end to end at every size
and budget").

What "end to end" means for each contender. Every one gets the cheapest honest pipeline that
turns the text into a context whose rendered text is within B o200k tokens, and none is given
work another one is spared:

- ``budgetctx:<selector>``: ``build_context(text, B, selector=...)`` as a caller runs it (its
  own segmenter, exact counts, TF-IDF, selector, render, and the final count of the rendered
  text; ``mmr``, ``facility`` and ``auto``, the default).
- ``released:mmr`` / ``released:facility``: the paper's released ``sim_mimic_budget.py`` as
  released (its regex sentence split, its scikit-learn TF-IDF over the units and the document,
  its selector and post-trim dedup, units joined by spaces), driven from ``--released DIR``
  (nothing of it is copied here). It budgets words, so B tokens become a word budget by the
  document's own words-per-token ratio (one tiktoken encode of the document); the output is
  counted, and while it is above B the word budget is cut by the overshoot and the selector
  run again (the "runs" column says how often that was needed). A document that fits B is
  returned whole after that first count.
- ``pyversity:mmr`` (pyversity's ``mmr``, diversity 0.5) and ``submodlib:facility``
  (``FacilityLocationFunction``, dense mode, LazyGreedy, cost-sensitive under a cost budget)
  share one minimal pipeline. A document that fits B is returned whole (counted only when it
  has at most 16 characters per budget token, so a long one pays no extra encode). Else: the
  released code's sentence rule (a regex split after ``.?!`` and whitespace, written here);
  scikit-learn ``TfidfVectorizer`` rows (L2-normalised, so cosine is a dot product); relevance
  as cosine to the rows' normalised mean (no query, as budgetctx); each sentence counted with
  tiktoken's o200k ``encode_ordinary``; units joined by ``\\n`` (one token, as budgetctx
  renders); the rendered context counted once, the last unit added dropped while it is above
  B.
- pyversity needs dense embeddings and a count ``k``: it gets ``X.toarray()`` (float32,
  ``normalize=False`` as the rows are unit length) and ``k`` = twice the units the budget holds
  at the mean unit cost; its ranking is walked, adding each unit that still fits. It is not
  re-run with a larger ``k`` to fill the last few tokens: every further unit costs it a dense
  product over all units (doubling ``k`` until nothing more fit took 5 calls and 7-10 s at 64k
  tokens and B=512), so it may stop a little under B where budgetctx fills on.
- submodlib gets the kernel ``X @ X.T`` (what it would compute from the rows, without the
  per-element Python lists its ``data=`` path builds), costs ``tokens + 1`` (the separator)
  and budget ``B + 1``, both scaled by a power of two below 1/B: its Python wrapper refuses a
  budget at or above the number of units, and the scaling is exact in binary floating point.

Documents are bench_floor.py's (gov_report inputs cut to ~2k/16k/64k tokens; MTSamples notes at
2k). Every repeat runs all contenders on the same document and budget, interleaved in one
process, so machine load hits all alike; cells are medians of process CPU time (all threads:
the BLAS library's second thread is paid) and of wall time, and the table is
``median(budgetctx) / median(peer)``: below 1 budgetctx is faster. Informational: nothing is
asserted; every context's tokens are checked against B and printed.

Order cannot bias a cell (session 6, part K). A rotated order, which this benchmark used
before, keeps each contender behind the same one, and a call's time depends on what ran just
before it: the contender listed first, after the last of the other family (budgetctx counts
with its own encoder, the peers with tiktoken's), was always the slowest, peers included, and
reversing the list moved the effect. Now: every contender is warmed before any timing; the
repeats walk a balanced order (:func:`balanced_orders`: a Williams design, shuffled with a fixed
``--seed``), in which each contender holds each position, and follows each other contender,
equally often over a full cycle of orders; and each timed call comes right after an untimed
call of the same contender on the same input (``--no-rewarm`` to time the switch too), so
every contender is timed from the same state: its own warm one.
``--reverse`` reverses the contender lists, to check that the cells do not move.

    PYTHONPATH=src python benchmarks/bench_peers.py --released /path/to/ACL_budget_paper
    PYTHONPATH=src python benchmarks/bench_peers.py --released DIR --sizes 2k --repeats 9
    PYTHONPATH=src python benchmarks/bench_peers.py --peers pyversity:mmr submodlib:facility
    PYTHONPATH=src python benchmarks/bench_peers.py --released DIR --sizes 2k --reverse

Needs the ``peers`` extra (pyversity, submodlib-py); a peer whose package is missing, or the
released pair without ``--released``, is left out with a note.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

OURS = ("budgetctx:mmr", "budgetctx:facility", "budgetctx:auto")
PEERS = ("released:mmr", "released:facility", "pyversity:mmr", "submodlib:facility")
STAGES = ("unitize", "count", "represent", "select", "render")
SEPARATOR = "\n"

# The released code's sentence rule (a split after . ? or ! and whitespace), written here.
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")


def split_sentences(text: str) -> list[str]:
    """Non-empty, stripped pieces of ``text`` split after ``.?!`` followed by whitespace."""
    return [s for s in (p.strip() for p in _SENTENCE_END.split(text)) if s]


def fill(order: Sequence[int], costs: Sequence[int], budget: int, sep_cost: int = 1) -> list[int]:
    """Walk ``order`` and keep each unit that still fits ``budget`` with its separator.

    Returns the kept indices in the order they were added. ``k`` units cost
    ``sum(costs) + (k - 1) * sep_cost``.

    >>> fill([2, 0, 1], [3, 4, 5], 9)
    [2, 0]
    """
    kept: list[int] = []
    used = 0
    for i in order:
        extra = costs[i] + (sep_cost if kept else 0)
        if used + extra <= budget:
            kept.append(i)
            used += extra
    return kept


def render_within(
    kept: Sequence[int], units: Sequence[str], count: Callable[[str], int], budget: int
) -> str:
    """Units ``kept`` in document order joined by ``SEPARATOR``; the last added dropped while
    the rendered text is above ``budget`` (token merges across a separator can differ)."""
    kept = list(kept)
    while True:
        text = SEPARATOR.join(units[i] for i in sorted(kept))
        if not kept or count(text) <= budget:
            return text
        kept.pop()


def cost_scale(budget: int) -> float:
    """A power of two at most ``1 / (budget + 1)``: token costs times it stay exact floats."""
    return 2.0 ** -math.ceil(math.log2(budget + 1))


def balanced_orders(n: int, seed: int = 0) -> list[list[int]]:
    """Orders of ``n`` contenders in which each holds each position, and follows each other
    contender, equally often: a Williams design (``n`` orders for even ``n``, ``2n`` for odd),
    its rows and its labels shuffled with ``seed`` so that no contender is favoured by the
    list it was given in.

    >>> sorted(map(tuple, balanced_orders(3)))
    [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    """
    if n <= 1:
        return [list(range(n))]
    first = [0]
    lo, hi = 1, n - 1
    while len(first) < n:
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    rows = [[(x + i) % n for x in first] for i in range(n)]
    if n % 2:
        rows += [row[::-1] for row in rows]
    rng = random.Random(seed)
    label = list(range(n))
    rng.shuffle(label)
    rng.shuffle(rows)
    return [[label[x] for x in row] for row in rows]


def ratio_rows(
    cpu: dict[str, float], ours: Sequence[str], peers: Sequence[str]
) -> list[tuple[str, list[float]]]:
    """``(ours, [median(ours) / median(peer) for peer])`` for each of ours."""
    return [(o, [cpu[o] / cpu[p] for p in peers]) for o in ours]


# --- contenders ------------------------------------------------------------------------------


#: the stage clock: wall until use_cpu_stage_clock() (what --stage-clock cpu, the default, does)
_clock = time.perf_counter


def _ms(since: float) -> float:
    return (_clock() - since) * 1000


def use_cpu_stage_clock() -> None:
    """Stages in process CPU time, budgetctx's (``Context.timings_ms``) and the peers' alike:
    on a busy machine wall-clock stages mostly measure waiting for a core."""
    global _clock
    from types import SimpleNamespace

    import budgetctx.build._pipeline as pipeline

    # the pipeline reads only time.perf_counter for its timings
    pipeline.time = SimpleNamespace(perf_counter=time.process_time)  # type: ignore[assignment]
    _clock = time.process_time


def _tfidf(units: list[str]) -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer().fit_transform(units).tocsr()


def _centroid_relevance(x: Any) -> Any:
    import numpy as np

    mean = np.asarray(x.mean(axis=0)).ravel()
    norm = float(np.linalg.norm(mean))
    return x @ (mean / norm if norm else mean)


def make_simple(
    kind: str, encode: Callable[[str], list[int]]
) -> Callable[[str, int], tuple[str, int]]:
    """The pyversity / submodlib pipeline (see the module docstring)."""
    import numpy as np

    def count(text: str) -> int:
        return len(encode(text))

    def rank_pyversity(x: Any, rel: Any, costs: list[int], budget: int) -> list[int]:
        from pyversity import mmr

        n = len(costs)
        k = min(n, 2 * max(1, math.ceil(budget * n / max(1, sum(costs)))))
        dense = x.toarray().astype(np.float32)
        order = mmr(dense, rel.astype(np.float32), k, diversity=0.5, normalize=False)
        return fill(order.indices.tolist(), costs, budget)

    def rank_submodlib(x: Any, rel: Any, costs: list[int], budget: int) -> list[int]:
        from submodlib import FacilityLocationFunction

        kernel = (x @ x.T).toarray()
        fl = FacilityLocationFunction(n=len(costs), mode="dense", sijs=kernel, separate_rep=False)
        s = cost_scale(budget)
        picked = fl.maximize(
            budget=(budget + 1) * s,
            optimizer="LazyGreedy",
            costs=[(c + 1) * s for c in costs],
            costSensitiveGreedy=True,
            show_progress=False,
        )
        return [int(i) for i, _ in picked]

    rank = rank_pyversity if kind == "pyversity" else rank_submodlib

    def run(text: str, budget: int) -> tuple[str, int]:
        # A document that fits is sent whole, as budgetctx sends it (after preparing it) and
        # as the released pipeline does after its first count. Tried only where it can fit
        # (no text averages 16 characters a token), so a long document pays no extra encode.
        t0 = _clock()
        if len(text) <= 16 * budget and count(text) <= budget:
            run.timings = {"count": _ms(t0), "total": _ms(t0)}  # type: ignore[attr-defined]
            return text, 0
        # the stages budgetctx reports in Context.timings_ms, in the stage clock
        units = split_sentences(text)
        t1 = _clock()
        costs = [len(encode(u)) for u in units]
        t2 = _clock()
        x = _tfidf(units)
        relevance = _centroid_relevance(x)
        t3 = _clock()
        kept = rank(x, relevance, costs, budget)
        t4 = _clock()
        out = render_within(kept, units, count, budget)
        run.timings = {  # type: ignore[attr-defined]
            "unitize": (t1 - t0) * 1000,
            "count": (t2 - t1) * 1000,
            "represent": (t3 - t2) * 1000,
            "select": (t4 - t3) * 1000,
            "render": _ms(t4),
            "total": _ms(t0),
        }
        return out, 1

    return run


def make_released(
    root: Path, kind: str, encode: Callable[[str], list[int]]
) -> Callable[[str, int], tuple[str, int]]:
    """The released MMR / facility location, word budget from the document's ratio, re-run
    with a smaller word budget while the output is above B tokens."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    sim = importlib.import_module("sim_mimic_budget")

    def select(doc: str, words: int) -> str:
        units = sim.split_sentences(doc)
        if kind == "mmr":
            return str(sim.mmr_selector_tfidf(units, words, doc, 0.5, True))
        return str(sim.facility_location_selector(units, words, doc, 1.0, 0.8, 0.15, 0.03))

    def run(text: str, budget: int) -> tuple[str, int]:
        doc_tokens = len(encode(text))
        if doc_tokens <= budget:
            return text, 0
        words = max(1, math.floor(budget * len(text.split()) / doc_tokens))
        runs = 0
        while True:
            out = select(text, words)
            runs += 1
            used = len(encode(out))
            if used <= budget or words <= 1:
                return out, runs
            words = max(1, min(words - 1, math.floor(words * budget / used)))

    return run


def make_ours(selector: str) -> Callable[[str, int], tuple[str, int]]:
    from budgetctx import build_context

    def run(text: str, budget: int) -> tuple[str, int]:
        ctx = build_context(text, budget, selector=selector)
        run.timings = ctx.timings_ms  # type: ignore[attr-defined]
        return ctx.text, 1

    return run


def contenders(
    args: argparse.Namespace, encode: Callable[[str], list[int]]
) -> dict[str, Callable[[str, int], tuple[str, int]]]:
    out: dict[str, Callable[[str, int], tuple[str, int]]] = {}
    for name in args.ours:
        out[name] = make_ours(name.split(":", 1)[1])
    for name in args.peers:
        lib, kind = name.split(":", 1)
        if lib == "released":
            if not args.released or not (Path(args.released) / "sim_mimic_budget.py").is_file():
                print(f"skip {name}: pass --released DIR (a checkout with sim_mimic_budget.py)")
                continue
            out[name] = make_released(Path(args.released), kind, encode)
            continue
        try:
            importlib.import_module(lib)
        except ImportError:
            print(f"skip {name}: {lib} is not installed (pip install 'budgetctx[peers]')")
            continue
        out[name] = make_simple(lib, encode)
    return out


# --- the run ---------------------------------------------------------------------------------


def measure(args: argparse.Namespace, root: Path) -> list[dict[str, Any]]:
    from bench_floor import documents, floor_fn
    from budgetctx import get_tokenizer

    tok = get_tokenizer("o200k_base")
    encode = floor_fn(tok)  # tiktoken's own o200k encode_ordinary: the peers' counter
    runs = contenders(args, encode)
    names = list(runs)
    orders = balanced_orders(len(names), args.seed)
    rows: list[dict[str, Any]] = []
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    if args.repeats % len(orders):
        print(
            f"note: {args.repeats} repeats are not a multiple of the {len(orders)} balanced "
            "orders, so the positions are nearly, not exactly, balanced"
        )
    for label in args.sizes:
        docs = documents(root, tok, label)
        for doc_name, text in docs if args.all_documents else docs[:1]:
            n_tokens = tok.count(text)
            for budget in args.budgets:
                cpu: dict[str, list[float]] = {n: [] for n in names}
                wall: dict[str, list[float]] = {n: [] for n in names}
                stages: dict[str, dict[str, list[float]]] = {n: {} for n in names}
                check: dict[str, tuple[int, int]] = {}
                for n in names:  # warm-up, and the budget check (outside the timing)
                    out, reruns = runs[n](text, budget)
                    check[n] = (tok.count(out), reruns)
                for r in range(args.repeats):
                    for n in (names[i] for i in orders[r % len(orders)]):
                        # the same state for all: right after the contender's own call (no
                        # forced collection: one before the pair made every call 10-50 %
                        # slower, Python-heavy ones most)
                        if not args.no_rewarm:
                            runs[n](text, budget)
                        c, w = time.process_time(), time.perf_counter()
                        runs[n](text, budget)
                        cpu[n].append(time.process_time() - c)
                        wall[n].append(time.perf_counter() - w)
                        for k, v in getattr(runs[n], "timings", {}).items():
                            stages[n].setdefault(k, []).append(v / 1000.0)
                row = {
                    "document": doc_name,
                    "tokens": n_tokens,
                    "budget": budget,
                    "cpu": {n: statistics.median(v) for n, v in cpu.items()},
                    "wall": {n: statistics.median(v) for n, v in wall.items()},
                    "stages": {
                        n: {k: statistics.median(v) for k, v in s.items()}
                        for n, s in stages.items()
                    },
                    "tokens_out": {n: check[n][0] for n in names},
                    "runs": {n: check[n][1] for n in names},
                }
                rows.append(row)
                report_cell(row, names)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return rows


def report_cell(row: dict[str, Any], names: Sequence[str]) -> None:
    b = row["budget"]
    print(f"\n== {row['document']} ({row['tokens']} tokens), B={b}")
    for n in names:
        flag = "" if row["tokens_out"][n] <= b else "  OVER BUDGET"
        extra = f", {row['runs'][n]} selector run(s)" if not n.startswith("budgetctx") else ""
        print(
            f"  {n:<20} cpu {row['cpu'][n] * 1000:>9.2f} ms  wall {row['wall'][n] * 1000:>9.2f} ms"
            f"  ({row['tokens_out'][n]} tokens{extra}){flag}"
        )
    for n in names:
        st = row["stages"].get(n) or {}
        if st.get("total"):
            parts = " ".join(f"{k}={st.get(k, 0.0) * 1000:.2f}" for k in STAGES)
            other = st["total"] - sum(st.get(k, 0.0) for k in STAGES)
            clock = "cpu" if _clock is time.process_time else "wall"
            print(f"  {n:<20} stages ms ({clock}): {parts} other={other * 1000:.2f}")
    sys.stdout.flush()


def table(rows: list[dict[str, Any]], clock: str) -> None:
    if not rows:
        return
    names = list(rows[0]["cpu"])
    ours = [n for n in names if n.startswith("budgetctx:")]
    peers = [n for n in names if not n.startswith("budgetctx:")]
    print(f"\nratio budgetctx / peer, medians of {clock} time (below 1: budgetctx is faster)")
    print("| document | B | budgetctx | " + " | ".join(peers) + " |")
    print("|:--|--:|:--|" + "--:|" * len(peers))
    for row in rows:
        for o, ratios in ratio_rows(row[clock], ours, peers):
            cells = " | ".join(f"{r:.2f}" + ("!" if r > 1 else "") for r in ratios)
            print(f"| {row['document']} | {row['budget']} | {o} | {cells} |")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--data-dir")
    p.add_argument("--released", help="a checkout of the paper's released code")
    p.add_argument("--sizes", nargs="+", default=["2k", "16k", "64k"])
    p.add_argument("--budgets", nargs="+", type=int, default=[256, 512, 2048])
    p.add_argument("--ours", nargs="+", default=list(OURS))
    p.add_argument("--peers", nargs="+", default=list(PEERS))
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--all-documents", action="store_true", help="the MTSamples notes too at 2k")
    p.add_argument(
        "--stage-clock",
        choices=("wall", "cpu"),
        default="cpu",
        help="the clock of the per-stage lines (cpu: process time, steadier on a busy machine)",
    )
    p.add_argument("--seed", type=int, default=0, help="the shuffle of the balanced orders")
    p.add_argument(
        "--reverse", action="store_true", help="reverse --ours and --peers (an order check)"
    )
    p.add_argument(
        "--no-rewarm",
        action="store_true",
        help="time each call right after the previous contender's (the switch is paid too)",
    )
    p.add_argument("--out", type=Path, help="write the medians as JSON")
    p.add_argument("--load", type=Path, help="print the tables of a saved --out")
    args = p.parse_args()
    if args.reverse:
        args.ours, args.peers = args.ours[::-1], args.peers[::-1]
    if args.load:
        rows = json.loads(args.load.read_text())
    else:
        from bench_floor import data_dir

        root = data_dir(args.data_dir)
        if not (root / "leval" / "gov_report_summ.jsonl").is_file():
            print(f"no L-Eval data under {root}; pass --data-dir", file=sys.stderr)
            return 0
        if args.stage_clock == "cpu":
            use_cpu_stage_clock()
        rows = measure(args, root)
        if args.out:
            args.out.write_text(json.dumps(rows, indent=1))
    table(rows, "cpu")
    table(rows, "wall")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
