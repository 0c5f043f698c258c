"""MMR's fast path (running minimum, parked units) must select exactly what the readable
reference selects: the same order, gains and overflow, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx.selectors import MMRSelector
from tests.selectors._problems import make_problem, random_problem

SETTINGS = [
    MMRSelector(),
    MMRSelector(lambda_=0.7, cost_exponent=0.0, position_decay=0.0, min_unit_tokens=0),
    MMRSelector(lambda_=0.3, cost_exponent=1.0, position_decay=0.1, min_unit_tokens=8),
    MMRSelector(lambda_=1.0, cost_exponent=0.5),
    MMRSelector(lambda_=0.0, cost_exponent=0.25),
]


@pytest.mark.parametrize("selector", SETTINGS, ids=repr)
def test_fast_path_equals_reference_on_random_problems(selector: MMRSelector) -> None:
    rng = np.random.default_rng(2024)
    for _ in range(40):
        problem = random_problem(rng, int(rng.integers(1, 40)))
        assert selector.select(problem) == selector.select_reference(problem)


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    n=st.integers(0, 12),
    lam=st.sampled_from([0.0, 0.3, 0.7, 1.0]),
    r=st.sampled_from([0.0, 0.25, 1.0]),
)
def test_fast_path_equals_reference_with_ties_and_negative_scores(
    data: st.DataObject, n: int, lam: float, r: float
) -> None:
    # coarse values make ties common; similarities near 1 drive scores below zero
    grid = st.sampled_from([0.0, 0.25, 0.5, 1.0])
    rel = data.draw(st.lists(grid, min_size=n, max_size=n))
    costs = data.draw(st.lists(st.integers(1, 9), min_size=n, max_size=n))
    sim = np.array(data.draw(st.lists(grid, min_size=n * n, max_size=n * n))).reshape(n, n)
    K = np.maximum(sim, sim.T)
    np.fill_diagonal(K, 1.0)
    capacity = data.draw(st.integers(1, max(1, sum(costs))))
    problem = make_problem(rel, costs, capacity, kernel=K)
    selector = MMRSelector(
        lambda_=lam, cost_exponent=r, min_unit_tokens=data.draw(st.integers(0, 4))
    )
    assert selector.select(problem) == selector.select_reference(problem)


def test_overflow_is_the_best_unit_that_did_not_fit() -> None:
    # unit 0 is the most relevant but too long; once 1 is taken the overflow is still 0
    problem = make_problem([1.0, 0.5, 0.2], [10, 2, 2], 4)
    sel = MMRSelector(lambda_=1.0, cost_exponent=0.0, min_unit_tokens=0).select(problem)
    assert sel.order == (1, 2)
    assert sel.overflow == 0
