from __future__ import annotations

import pytest

from budgetctx.eval._store import SweepRow
from budgetctx.eval.report import pareto_frontier, summarize


def test_best_policy_per_budget_over_unitizers_and_selectors(toy: list[SweepRow]) -> None:
    points = {(p.dataset, p.budget): p for p in pareto_frontier(summarize(toy))}
    p = points[("alpha", 256)]
    assert (p.policy, p.mean, p.n) == ("sentence/mmr", pytest.approx(0.30), 3)
    p = points[("alpha", 512)]  # window/lead (.36) beats sentence/rcd (.35); oracle excluded
    assert (p.unitizer, p.selector, p.mean) == ("window", "lead", pytest.approx(0.36))
    assert p.monotone


def test_ties_and_a_frontier_that_drops(toy: list[SweepRow]) -> None:
    points = {(p.dataset, p.budget): p for p in pareto_frontier(summarize(toy))}
    p = points[("beta", 256)]
    assert (p.selector, p.ties, p.monotone) == ("lead", ("sentence/mmr",), True)
    p = points[("beta", 512)]
    assert (p.selector, p.mean, p.ties, p.monotone) == ("lead", pytest.approx(0.4), (), False)


def test_other_metric_and_empty(toy: list[SweepRow]) -> None:
    cells = summarize(toy) + summarize(toy, metric="rouge2")
    r2 = pareto_frontier(cells, metric="rouge2")
    assert {p.metric for p in r2} == {"rouge2"}
    assert next(p for p in r2 if (p.dataset, p.budget) == ("alpha", 256)).mean == pytest.approx(
        0.15
    )
    assert pareto_frontier([]) == []
    assert pareto_frontier(summarize(toy)[0:0]) == []


def test_point_to_dict(toy: list[SweepRow]) -> None:
    d = pareto_frontier(summarize(toy))[0].to_dict()
    assert d["policy"] == "sentence/mmr" and d["ties"] == []
