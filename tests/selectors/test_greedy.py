"""Lazy greedy must select exactly what the readable naive greedy selects."""

from __future__ import annotations

import heapq
import itertools
import math
from typing import Any

import numpy as np
import pytest

from budgetctx.selectors import FacilitySelector, RCDSelector, lazy_greedy, naive_greedy
from budgetctx.selectors._base import SelectionProblem
from budgetctx.selectors._priors import allowed_units
from tests.selectors._problems import make_problem, random_problem

SELECTORS = [
    FacilitySelector(),
    RCDSelector(),
    RCDSelector(alpha=0.0, beta=0.0, gamma=1.0, eta=2.0),
    RCDSelector(alpha=0.3, beta=0.6, gamma=0.1),
    FacilitySelector(position_decay=0.2, min_unit_tokens=5),
    RCDSelector(alpha=0.3, beta=0.6, gamma=0.1, position_decay=0.1, min_unit_tokens=8),
]


def _feasible(problem: SelectionProblem, order: tuple[int, ...]) -> bool:
    covered = {s for u in order for s in problem.unit_segments[u]}
    return int(problem.segment_costs[sorted(covered)].sum()) <= problem.capacity


@pytest.mark.parametrize("selector", SELECTORS, ids=lambda s: repr(s))
@pytest.mark.parametrize("windows", [False, True], ids=["disjoint", "windows"])
@pytest.mark.parametrize("r", [1.0, 0.5, 0.0], ids=lambda r: f"r={r}")
def test_lazy_equals_naive(
    selector: FacilitySelector | RCDSelector, windows: bool, r: float
) -> None:
    rng = np.random.default_rng(1234)
    for _ in range(25):
        problem = random_problem(rng, int(rng.integers(2, 18)), windows=windows)
        allowed = allowed_units(problem, min_unit_tokens=selector.min_unit_tokens)
        options = {"cost_exponent": r, "allowed": allowed}
        lazy = lazy_greedy(problem, lambda p=problem: selector.objective(p), **options)
        naive = naive_greedy(problem, lambda p=problem: selector.objective(p), **options)
        assert lazy.order == naive.order
        if allowed is not None:
            assert all(allowed[u] for u in lazy.order)
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


def test_cost_exponent_zero_ignores_length() -> None:
    # gain per token prefers the two short units; r = 0 takes the most relevant (long) one
    problem = make_problem([1.0, 0.3, 0.3], [10, 2, 2], 10)
    plain = {"alpha": 1, "beta": 0, "gamma": 0, "min_unit_tokens": 0}
    assert RCDSelector(**plain, cost_exponent=0).select(problem).order == (0,)
    per_token = RCDSelector(**plain, cost_exponent=1, best_singleton=False).select(problem)
    assert per_token.order == (1, 2)


def test_selectors_pass_their_options_to_greedy() -> None:
    problem = make_problem([1.0, 0.3, 0.3], [10, 2, 2], 10)
    for sel in (FacilitySelector(cost_exponent=0.0), RCDSelector(cost_exponent=0.0)):
        lazy = sel.select(problem)
        naive = naive_greedy(problem, lambda s=sel: s.objective(problem), cost_exponent=0.0)
        assert lazy.order == naive.order


def _drain_greedy(
    problem: SelectionProblem,
    objective: Any,
    *,
    cost_exponent: float,
    allowed: np.ndarray | None,
) -> tuple[tuple[int, ...], tuple[float, ...], int | None]:
    """The lazy greedy as it was before issue 27's follow-up: numpy bookkeeping, one heap
    entry built at a time, and the heap drained to the end (every unit that no longer fits
    popped and dropped). What the faster one must reproduce, overflow included."""

    def ratio(g: float, cost: int) -> float:
        if cost <= 0:
            return math.inf
        return g / cost if cost_exponent == 1.0 else g / math.pow(cost, cost_exponent)

    tracker = problem.tracker()
    n = problem.n
    last_gain, fresh_at = np.zeros(n), np.full(n, -1)
    version = np.zeros(n, dtype=np.int64)
    first = objective.initial_gains()
    heap = []
    for e in range(n):
        if allowed is not None and not allowed[e]:
            continue
        last_gain[e], fresh_at[e] = float(first[e]), 0
        heap.append((-ratio(float(first[e]), int(tracker.marginal[e])), e, 0))
    heapq.heapify(heap)
    order: list[int] = []
    gains: list[float] = []
    overflow, step = None, 0
    while heap:
        _, e, ver = heapq.heappop(heap)
        if ver != version[e] or tracker.is_selected[e]:
            continue
        if not tracker.fits(e):
            overflow = e if overflow is None else overflow
            continue
        if fresh_at[e] == step:
            objective.add(e)
            order.append(e)
            gains.append(float(last_gain[e]))
            for u in tracker.add(e):
                if not tracker.is_selected[u] and (allowed is None or allowed[u]):
                    version[u] += 1
                    key = -ratio(last_gain[u], int(tracker.marginal[u]))
                    heapq.heappush(heap, (key, u, int(version[u])))
            step += 1
            continue
        g = objective.gain(e)
        last_gain[e], fresh_at[e] = g, step
        heapq.heappush(heap, (-ratio(g, int(tracker.marginal[e])), e, int(version[e])))
    return tuple(order), tuple(gains), overflow


@pytest.mark.parametrize("selector", SELECTORS, ids=lambda s: repr(s))
@pytest.mark.parametrize("windows", [False, True], ids=["disjoint", "windows"])
@pytest.mark.parametrize("r", [1.0, 0.25], ids=lambda r: f"r={r}")
def test_lazy_greedy_is_the_drained_heap_bit_for_bit(
    selector: FacilitySelector | RCDSelector, windows: bool, r: float
) -> None:
    # The fast lazy greedy stops once nothing can fit and keeps its state in lists: the same
    # order, the same gains to the last bit and the same overflow (the unit truncate cuts)
    rng = np.random.default_rng(77)
    for _ in range(25):
        problem = random_problem(rng, int(rng.integers(2, 30)), windows=windows)
        allowed = allowed_units(problem, min_unit_tokens=selector.min_unit_tokens)
        fast = lazy_greedy(
            problem,
            lambda p=problem: selector.objective(p),
            cost_exponent=r,
            allowed=allowed,
            best_singleton=False,
        )
        ref = _drain_greedy(problem, selector.objective(problem), cost_exponent=r, allowed=allowed)
        assert (fast.order, fast.gains, fast.overflow) == ref
