from __future__ import annotations

import pytest

from budgetctx import InvalidParameterError
from budgetctx.eval._store import SweepRow
from budgetctx.eval.report import Cell, example_counts, summarize
from tests.eval.report._synthetic import row


def _by_key(cells: list[Cell]) -> dict[tuple[str, str, str, int], Cell]:
    return {(c.dataset, c.unitizer, c.selector, c.budget): c for c in cells}


def test_means_and_counts_are_the_hand_computed_ones(toy: list[SweepRow]) -> None:
    cells = _by_key(summarize(toy))
    expected = {
        ("alpha", "sentence", "lead", 256): 0.20,
        ("alpha", "sentence", "mmr", 256): 0.30,
        ("alpha", "sentence", "rcd", 256): 0.20,
        ("alpha", "sentence", "oracle", 256): 0.50,
        ("alpha", "sentence", "lead", 512): 0.30,
        ("alpha", "sentence", "rcd", 512): 0.35,
        ("alpha", "window", "lead", 512): 0.36,
        ("beta", "sentence", "mmr", 512): 0.30,
    }
    for key, mean in expected.items():
        assert cells[key].mean == pytest.approx(mean, abs=1e-12), key
    assert cells[("alpha", "sentence", "lead", 256)].n == 3
    assert cells[("beta", "sentence", "lead", 256)].n == 2
    assert len(cells) == 4 * 2 + 2 * 2 + 2 * 2  # alpha/sentence, alpha/window, beta


def test_interval_brackets_the_mean_and_collapses_on_constant_scores(toy: list[SweepRow]) -> None:
    for c in summarize(toy):
        assert c.low <= c.mean + 1e-12 and c.mean <= c.high + 1e-12
        assert c.confidence == 0.95
    constant = _by_key(summarize(toy))[("alpha", "window", "lead", 256)]
    assert (constant.low, constant.high) == pytest.approx((0.25, 0.25))
    varied = _by_key(summarize(toy))[("alpha", "sentence", "mmr", 256)]
    assert varied.high - varied.low > 0
    narrower = _by_key(summarize(toy, confidence=0.5))[("alpha", "sentence", "mmr", 256)]
    assert narrower.high - narrower.low <= varied.high - varied.low


def test_same_seed_same_interval(toy: list[SweepRow]) -> None:
    assert summarize(toy, seed=3) == summarize(toy, seed=3)


def test_order_is_dataset_unitizer_selector_budget_with_oracle_last(toy: list[SweepRow]) -> None:
    keys = [(c.dataset, c.unitizer, c.selector) for c in summarize(toy)]
    alpha_sentence = [s for d, u, s in dict.fromkeys(keys) if (d, u) == ("alpha", "sentence")]
    assert alpha_sentence == ["lead", "mmr", "rcd", "oracle"]
    assert keys.index(("alpha", "window", "lead")) > keys.index(("alpha", "sentence", "oracle"))


def test_filters_and_other_metrics(toy: list[SweepRow]) -> None:
    test_only = _by_key(summarize(toy, split="test"))
    assert test_only[("alpha", "sentence", "lead", 256)].n == 2
    assert test_only[("alpha", "sentence", "lead", 256)].mean == pytest.approx(0.20)
    window = summarize(toy, unitizer="window")
    assert {c.unitizer for c in window} == {"window"}
    r2 = _by_key(summarize(toy, metric="rouge2"))
    assert r2[("alpha", "sentence", "mmr", 256)].mean == pytest.approx(0.15)
    assert r2[("alpha", "sentence", "mmr", 256)].metric == "rouge2"


def test_rows_without_the_metric_are_left_out() -> None:
    rows = [
        row("d", "a", "lead", 256, {"rouge1": 0.2}),
        row("d", "b", "lead", 256, {}),
        row("d", "c", "lead", 256, {"rouge1": float("nan")}),
    ]
    (cell,) = summarize(rows)
    assert (cell.mean, cell.n) == (0.2, 1)


def test_empty_input_and_bad_options() -> None:
    assert summarize([]) == []
    rows = [row("d", "a", "lead", 256, {"rouge1": 0.2})]
    with pytest.raises(InvalidParameterError, match=r"use one of \['rouge1'\]"):
        summarize(rows, metric="rouge3")
    with pytest.raises(InvalidParameterError, match="confidence"):
        summarize(rows, confidence=1.5)


def test_example_counts_per_dataset_and_split(toy: list[SweepRow]) -> None:
    assert example_counts(toy) == {
        ("alpha", "test"): 2,
        ("alpha", "validation"): 1,
        ("beta", "test"): 2,
    }


def test_cell_to_dict() -> None:
    (cell,) = summarize([row("d", "a", "lead", 256, {"rouge1": 0.2})])
    d = cell.to_dict()
    assert d["mean"] == 0.2 and d["selector"] == "lead" and d["n"] == 1
