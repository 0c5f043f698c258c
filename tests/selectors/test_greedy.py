"""Lazy greedy must select exactly what the readable naive greedy selects."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from budgetctx.selectors import FacilitySelector, RCDSelector, lazy_greedy, naive_greedy
from budgetctx.selectors._base import SelectionProblem
from tests.selectors._problems import random_problem

SELECTORS = [
    FacilitySelector(),
    RCDSelector(),
    RCDSelector(alpha=0.0, beta=0.0, gamma=1.0, eta=2.0),
    RCDSelector(alpha=0.3, beta=0.6, gamma=0.1),
]


def _feasible(problem: SelectionProblem, order: tuple[int, ...]) -> bool:
    covered = {s for u in order for s in problem.unit_segments[u]}
    return int(problem.segment_costs[sorted(covered)].sum()) <= problem.capacity


@pytest.mark.parametrize("selector", SELECTORS, ids=lambda s: repr(s))
@pytest.mark.parametrize("windows", [False, True], ids=["disjoint", "windows"])
def test_lazy_equals_naive(selector: FacilitySelector | RCDSelector, windows: bool) -> None:
    rng = np.random.default_rng(1234)
    for _ in range(25):
        problem = random_problem(rng, int(rng.integers(2, 18)), windows=windows)
        lazy = lazy_greedy(problem, lambda p=problem: selector.objective(p))
        naive = naive_greedy(problem, lambda p=problem: selector.objective(p))
        assert lazy.order == naive.order
        assert lazy.gains == pytest.approx(naive.gains, rel=1e-6, abs=1e-9)
        assert _feasible(problem, lazy.order)


def test_lazy_greedy_gains_sum_to_objective() -> None:
    rng = np.random.default_rng(5)
    problem = random_problem(rng, 15)
    selector = RCDSelector()
    sel = selector.select(problem)
    value = selector.objective(problem).evaluate(list(sel.order))
    assert sum(sel.gains) == pytest.approx(value)
    assert sel.objective == pytest.approx(value)


def test_gains_are_nonincreasing_per_cost_step_for_unit_costs() -> None:
    # With equal costs greedy takes the largest gain each step; submodularity makes the
    # sequence of gains non-increasing.
    rng = np.random.default_rng(9)
    for _ in range(10):
        problem = random_problem(rng, 12)
        object.__setattr__(problem, "segment_costs", np.ones(12, dtype=np.int64))
        object.__setattr__(problem, "unit_costs", np.ones(12, dtype=np.int64))
        gains = RCDSelector().select(problem).gains
        assert all(a >= b - 1e-9 for a, b in itertools.pairwise(gains))
