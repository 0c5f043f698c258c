"""benchmarks/bench_peers.py's pure helpers (how each peer's ranking becomes a context within B
tokens), and one end-to-end run per installed peer on the bundled note. The timings themselves
live in the benchmark, not here."""

from __future__ import annotations

from types import ModuleType

import pytest

from budgetctx import get_tokenizer
from budgetctx.data import sample_note
from tests._benchmarks import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("bench_peers")


def test_split_sentences_after_end_marks_only(bench: ModuleType) -> None:
    text = "  One. Two?  Three!\nFour e.g.five  "
    assert bench.split_sentences(text) == ["One.", "Two?", "Three!", "Four e.g.five"]
    assert bench.split_sentences(" \n ") == []


def test_fill_skips_what_does_not_fit_and_goes_on(bench: ModuleType) -> None:
    # 9 tokens: unit 2 (5) fits, unit 0 (3 + separator) fits, unit 1 (4 + 1) no longer does
    assert bench.fill([2, 0, 1], [3, 4, 5], 9) == [2, 0]
    # a unit too large is skipped, a later small one still taken
    assert bench.fill([1, 0, 2], [2, 50, 3], 6) == [0, 2]
    assert bench.fill([0], [10], 9) == []
    assert bench.fill([0, 1], [4, 4], 9, sep_cost=0) == [0, 1]


def test_render_within_drops_the_last_added_until_it_fits(bench: ModuleType) -> None:
    units = ["aa", "bbbb", "c"]
    text = bench.render_within([2, 0, 1], units, len, 7)
    # in document order: "aa\nbbbb\nc" (9 chars) is over; without unit 1: "aa\nc" (4)
    assert text == "aa\nc"
    assert bench.render_within([1], units, len, 3) == ""


@pytest.mark.parametrize("budget", [1, 256, 511, 512, 2048])
def test_cost_scale_keeps_the_budget_below_one_and_exact(bench: ModuleType, budget: int) -> None:
    s = bench.cost_scale(budget)
    assert (budget + 1) * s <= 1.0 < 2 * (budget + 1) * s
    costs = [7, 13, 1, 250]
    assert sum(c * s for c in costs) == sum(costs) * s  # powers of two: no rounding


def test_ratio_rows(bench: ModuleType) -> None:
    cpu = {"budgetctx:mmr": 2.0, "pyversity:mmr": 4.0, "released:mmr": 1.0}
    rows = bench.ratio_rows(cpu, ["budgetctx:mmr"], ["pyversity:mmr", "released:mmr"])
    assert rows == [("budgetctx:mmr", [0.5, 2.0])]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # submodlib reads scipy.sparse.csr
@pytest.mark.parametrize("peer", ["pyversity", "submodlib"])
@pytest.mark.parametrize("budget", [40, 200])
def test_each_installed_peer_reaches_a_context_within_the_budget(
    bench: ModuleType, peer: str, budget: int
) -> None:
    pytest.importorskip(peer)
    pytest.importorskip("sklearn")
    tok = get_tokenizer("o200k_base")
    from budgetctx.tokenizers import _tiktoken

    encode = _tiktoken._encoding("o200k_base").encode_ordinary
    text = sample_note()
    assert tok.count(text) > budget  # else the count-first exit is all that runs
    out, runs = bench.make_simple(peer, encode)(text, budget)
    assert runs == 1
    assert 0 < tok.count(out) <= budget
    kept = out.split(bench.SEPARATOR)
    assert all(k in text for k in kept)  # whole sentences of the note, nothing made up
    assert bench.make_simple(peer, encode)("Short. Note.", budget) == ("Short. Note.", 0)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_balanced_orders_give_each_contender_each_position_and_predecessor_alike(
    bench: ModuleType, n: int
) -> None:
    # a rotated order keeps each contender behind the same one, which biased the cells
    from collections import Counter

    orders = bench.balanced_orders(n, seed=5)
    assert all(sorted(o) == list(range(n)) for o in orders)
    positions = Counter((x, i) for o in orders for i, x in enumerate(o))
    assert len(positions) == n * n and len(set(positions.values())) == 1
    follows = Counter((o[i - 1], o[i]) for o in orders for i in range(1, n))
    assert len(follows) == n * (n - 1) and len(set(follows.values())) <= 1
    assert orders == bench.balanced_orders(n, seed=5)  # a fixed seed, a fixed walk
