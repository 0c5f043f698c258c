"""Cost-scaled greedy for monotone submodular objectives under a token knapsack.

``lazy_greedy`` is the fast one; ``naive_greedy`` is the readable reference that recomputes
every marginal gain from the objective's definition at every step. The tests check that they
select the same set for every cost exponent.

Both pick, at each step, the unit with the largest ``gain / marginal_cost ** r`` among those
that still fit, skipping (not stopping at) units that no longer fit, so smaller units keep
filling the budget. At the end the best single feasible unit is compared with the greedy set
and wins if its value is larger (the best-singleton check).

Where the guarantee holds (Lin and Bilmes 2010, "Multi-document summarization via budgeted
maximization of submodular functions"): with ``r = 1`` and the best-singleton check, greedy
is within a constant factor (1 - e^(-1/2), about 0.39) of the optimum for a *monotone
submodular* objective (facility location, RCD). ``r < 1`` (``r = 0`` ignores length) is a
heuristic with no such bound; it stops short fragments from winning on gain per token. The
singleton check is kept for every ``r``.

``allowed`` restricts the ground set (e.g. the fragment rule); a restriction of a monotone
submodular function is monotone submodular, so the bound above still holds on it.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from budgetctx.objectives import Objective
from budgetctx.selectors._base import Selection, SelectionProblem

__all__ = ["lazy_greedy", "naive_greedy"]


def _ratio(gain: float, cost: int, r: float) -> float:
    if cost <= 0:
        return math.inf  # already fully rendered by other units: free to keep
    if r == 1.0:
        return gain / cost
    return gain / math.pow(cost, r)


def lazy_greedy(
    problem: SelectionProblem,
    make_objective: Callable[[], Objective],
    *,
    best_singleton: bool = True,
    cost_exponent: float = 1.0,
    allowed: NDArray[np.bool_] | None = None,
) -> Selection:
    """Greedy by ``gain / cost ** cost_exponent`` with lazy (stale upper bound) evaluations.

    Exact for any ``cost_exponent >= 0``: ``cost ** r`` only shrinks when a cost does, and a
    cost change refreshes the unit's bound, so a stale ratio is always an upper bound.
    """
    rexp = float(cost_exponent)
    objective = make_objective()
    tracker = problem.tracker()
    n = problem.n
    init = getattr(objective, "initial_gains", None)
    first = np.asarray(
        init() if init is not None else [objective.gain(e) for e in range(n)], dtype=np.float64
    )
    # The per-unit bookkeeping lives in Python lists, not numpy arrays: the loop below reads
    # one element at a time, and a numpy scalar read costs several times a list read (about
    # a third of a 64k-token RCD call went to such reads and to the setup loop).
    units = np.arange(n) if allowed is None else np.flatnonzero(allowed)
    marginal: list[int] = tracker.marginal.tolist()
    last_gain: list[float] = first.tolist() if n else []
    fresh_at = [0] * n  # only read for allowed units, which all start fresh at step 0
    version = [0] * n
    selected = [False] * n
    pow_of: dict[int, float] = {}

    def power(cost: int) -> float:
        # cost ** r as _ratio computes it, once per distinct cost
        d = pow_of.get(cost)
        if d is None:
            d = pow_of[cost] = float(cost) if rexp == 1.0 else math.pow(cost, rexp)
        return d

    def ratio(gain: float, cost: int) -> float:
        return math.inf if cost <= 0 else gain / power(cost)

    # Heap entries: (-upper bound on ratio, unit, version). Gains only shrink and costs only
    # shrink when a neighbour is selected, so a bound is refreshed whenever a cost changes.
    # Units that never fit stay in the heap so that the first one popped is reported as the
    # overflow (the unit the truncate option cuts to size).
    costs = tracker.marginal[units]
    distinct, which = np.unique(costs, return_inverse=True)
    den = np.array([power(c) if c > 0 else 1.0 for c in distinct.tolist()])
    with np.errstate(divide="ignore"):
        # the same IEEE division as ratio(); a cost <= 0 is free to keep (ratio inf)
        keys = np.where(costs > 0, -(first[units] / den[which.reshape(-1)]), -math.inf)
    heap = list(zip(keys.tolist(), units.tolist(), [0] * len(units), strict=True))
    heapq.heapify(heap)
    # The best single unit that fits: the first of the largest gains, as a scan would keep.
    singleton_value, singleton = -math.inf, None
    fitting = units[tracker.marginal[units] <= tracker.remaining]
    if fitting.size:
        best = int(fitting[int(np.argmax(first[fitting]))])
        if first[best] > singleton_value:
            singleton_value, singleton = float(first[best]), best

    order: list[int] = []
    gains: list[float] = []
    overflow: int | None = None
    step = 0
    remaining = tracker.remaining
    # whether no unselected allowed unit fits, as of step `checked`
    checked, nothing_fits = 0, fitting.size == 0
    gain = objective.gain
    push, pop = heapq.heappush, heapq.heappop
    while heap:
        _, e, ver = pop(heap)
        if ver != version[e] or selected[e]:
            continue
        if marginal[e] > remaining:
            # It cannot fit later either: the budget shrinks at least as fast as its cost.
            if overflow is None:
                overflow = e
            if checked != step:
                # asked only when a unit no longer fits, at most once a step (an O(n) pass)
                checked = step
                open_units = ~tracker.is_selected
                if allowed is not None:
                    open_units &= allowed
                nothing_fits = not bool((tracker.marginal[open_units] <= remaining).any())
            if nothing_fits:
                # the rest of the heap could only be popped and dropped: stop here
                break
            continue
        if fresh_at[e] == step:
            objective.add(e)
            order.append(e)
            gains.append(float(last_gain[e]))
            changed = tracker.add(e)
            selected[e] = True
            marginal[e] = 0
            remaining = tracker.remaining
            for u in changed:
                marginal[u] = int(tracker.marginal[u])
                if not selected[u] and (allowed is None or allowed[u]):
                    version[u] += 1
                    push(heap, (-ratio(last_gain[u], marginal[u]), u, version[u]))
            step += 1
            continue
        g = gain(e)
        last_gain[e] = g
        fresh_at[e] = step
        push(heap, (-ratio(g, marginal[e]), e, version[e]))
    return _finish(order, gains, overflow, singleton, singleton_value, best_singleton)


def naive_greedy(
    problem: SelectionProblem,
    make_objective: Callable[[], Objective],
    *,
    best_singleton: bool = True,
    cost_exponent: float = 1.0,
    allowed: NDArray[np.bool_] | None = None,
) -> Selection:
    """Reference implementation: every step evaluates ``F(S + e) - F(S)`` from scratch."""
    rexp = float(cost_exponent)
    f = make_objective()
    tracker = problem.tracker()
    order: list[int] = []
    gains: list[float] = []
    overflow: int | None = None
    current = 0.0
    singleton_value, singleton = -math.inf, None
    candidates = [e for e in range(problem.n) if allowed is None or allowed[e]]
    for e in candidates:
        if tracker.fits(e):
            v = f.evaluate([e])
            if v > singleton_value:
                singleton_value, singleton = v, e
    while True:
        best, best_ratio, best_gain = None, -math.inf, 0.0
        for e in candidates:
            if tracker.is_selected[e]:
                continue
            if not tracker.fits(e):
                continue
            g = f.evaluate([*order, e]) - current
            ratio = _ratio(g, int(tracker.marginal[e]), rexp)
            if ratio > best_ratio:
                best, best_ratio, best_gain = e, ratio, g
        if best is None:
            break
        tracker.add(best)
        order.append(best)
        gains.append(best_gain)
        current += best_gain
    return _finish(order, gains, overflow, singleton, singleton_value, best_singleton)


def _finish(
    order: list[int],
    gains: list[float],
    overflow: int | None,
    singleton: int | None,
    singleton_value: float,
    best_singleton: bool,
) -> Selection:
    total = float(sum(gains))
    if best_singleton and singleton is not None and singleton_value > total + 1e-12:
        return Selection(
            order=(singleton,),
            gains=(float(singleton_value),),
            objective=float(singleton_value),
            note="best single unit beat the greedy set",
        )
    return Selection(order=tuple(order), gains=tuple(gains), overflow=overflow, objective=total)
