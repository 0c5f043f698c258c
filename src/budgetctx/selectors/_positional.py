"""Lead, Shuffled and Sliding selectors (paper 3.4, baselines)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from budgetctx._core.component import Component
from budgetctx._core.validation import Boolean, Constraint, Interval
from budgetctx.selectors._base import Selection, SelectionProblem, greedy_fill
from budgetctx.selectors._priors import (
    DEFAULT_MIN_UNIT_TOKENS,
    DEFAULT_POSITION_DECAY,
    PRIOR_RULES,
    unit_weights,
)
from budgetctx.selectors._salience import SALIENCE_OPTION, with_salience

__all__ = ["LeadSelector", "ShuffledSelector", "SlidingSelector"]


def _take(problem: SelectionProblem, candidates: np.ndarray, *, fill: bool) -> Selection:
    tracker = problem.tracker()
    r = problem.relevance
    if fill:
        order, gains, overflow = greedy_fill(tracker, candidates, r[candidates].tolist())
        return Selection(tuple(order), tuple(gains), overflow)
    order_l: list[int] = []
    overflow = None
    for e in candidates:
        e = int(e)
        if not tracker.fits(e):
            overflow = e
            break
        tracker.add(e)
        order_l.append(e)
    return Selection(tuple(order_l), tuple(float(r[e]) for e in order_l), overflow)


@dataclass(frozen=True)
class LeadSelector(Component, name="lead"):
    """Units from the start of the document until the next one does not fit.

    With ``fill=True`` it skips a unit that does not fit and keeps going with later, smaller
    ones, which uses more of the budget but is no longer a pure prefix.

    >>> LeadSelector().name
    'lead'
    """

    fill: bool = False

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "fill": Boolean(fix="True keeps filling the budget past a unit that does not fit."),
    }

    def select(self, problem: SelectionProblem) -> Selection:
        return _take(problem, np.arange(problem.n), fill=self.fill)


@dataclass(frozen=True)
class ShuffledSelector(Component, name="shuffled"):
    """Lead over a seeded random permutation: the control that removes position.

    >>> ShuffledSelector(seed=3).params()
    {'seed': 3, 'fill': False}
    """

    seed: int = 0
    fill: bool = False

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        # numpy's default_rng takes any non-negative integer, and only that
        "seed": Interval(int, 0, None, fix="pass a non-negative integer such as 0."),
        "fill": Boolean(fix="True keeps filling the budget past a unit that does not fit."),
    }

    def select(self, problem: SelectionProblem) -> Selection:
        perm = np.random.default_rng(self.seed).permutation(problem.n)
        return _take(problem, perm, fill=self.fill)


@dataclass(frozen=True)
class SlidingSelector(Component, name="sliding"):
    """The contiguous run of units with the largest total relevance that fits the budget
    (paper 3.4).

    Two pointers over units in document order: linear time. Overlapping windows are costed
    by the union of their sentences. Ties go to the earliest run. Each unit counts ``w_i
    r_i``: the lead prior and fragment rule of :mod:`budgetctx.selectors._priors` (a fragment
    such as "OK ." adds nothing to a run's total, though a run may still pass through it),
    chosen on validation (issue 21, session 6, part E); ``position_decay=0,
    min_unit_tokens=0`` is plain relevance.

    >>> SlidingSelector().params()["min_unit_tokens"]
    5
    """

    #: without a query, the relevance read: "centroid" or "fused" (selectors._salience)
    salience: str = "centroid"
    position_decay: float = DEFAULT_POSITION_DECAY
    min_unit_tokens: int = DEFAULT_MIN_UNIT_TOKENS

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "salience": SALIENCE_OPTION,
        **PRIOR_RULES,
    }

    def select(self, problem: SelectionProblem) -> Selection:
        n = problem.n
        problem = with_salience(problem, self.salience)
        w = unit_weights(
            problem, position_decay=self.position_decay, min_unit_tokens=self.min_unit_tokens
        )
        r = problem.relevance if w is None else problem.relevance * w
        seg_cost = problem.segment_costs
        cover = np.zeros(len(seg_cost), dtype=np.int64)
        cost = 0
        total = 0.0
        best = (-1.0, 0, 0)  # (score, left, right exclusive)
        left = 0
        for right in range(n):
            for s in problem.unit_segments[right]:
                if cover[s] == 0:
                    cost += int(seg_cost[s])
                cover[s] += 1
            total += float(r[right])
            while cost > problem.capacity and left <= right:
                for s in problem.unit_segments[left]:
                    cover[s] -= 1
                    if cover[s] == 0:
                        cost -= int(seg_cost[s])
                total -= float(r[left])
                left += 1
            if left <= right and total > best[0] + 1e-12:
                best = (total, left, right + 1)
        _, lo, hi = best
        order = tuple(range(lo, hi))
        overflow = hi if hi < n and order else None
        if not order and n:
            overflow = int(np.argmax(r))
        return Selection(order, tuple(float(r[e]) for e in order), overflow)
