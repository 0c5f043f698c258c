"""Hierarchical selection (paper 3.4): relevant anchors, then their neighbours."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from budgetctx._core.component import Component
from budgetctx._core.validation import Constraint, Interval
from budgetctx.selectors._base import Selection, SelectionProblem
from budgetctx.selectors._marginal import MarginalScore
from budgetctx.selectors._priors import (
    DEFAULT_COST_EXPONENT,
    DEFAULT_MIN_UNIT_TOKENS,
    DEFAULT_POSITION_DECAY,
    MMR_SCORE_RULES,
    allowed_units,
)

__all__ = ["HierarchicalSelector"]


@dataclass(frozen=True)
class HierarchicalSelector(Component, name="hierarchical"):
    """Anchors first, then context around them (paper 3.4, "identifies high-relevance anchor
    sentences and progressively adds adjacent context until the budget is filled").

    Anchors take up to ``anchor_share`` of the budget, best first; then the best unit
    adjacent to the selection is added, until no neighbour fits; then a new anchor is taken
    and grown, and so on. "Best" is MMR's score, ``lambda_ * w_i r_i - (1 - lambda_) *
    max_{j in S} k(i, j)`` per ``cost ** cost_exponent`` (:mod:`budgetctx.selectors._marginal`):
    an anchor that repeats one already kept is passed over for one that adds something, and
    so is such a neighbour. Fragments (``min_unit_tokens``) are never anchors, though they may
    be kept as a neighbour's context. ``lambda_=1, cost_exponent=0, position_decay=0,
    min_unit_tokens=0, anchor_share=0.5`` is the old selector (relevance alone), which lost
    0.05-0.07 ROUGE-1 on L-Eval; the defaults were chosen on validation splits (issue 21,
    session 6, part E in docs/results.md).

    >>> HierarchicalSelector(anchor_share=0.3).params()["anchor_share"]
    0.3
    """

    # chosen on validation (issue 21, part E): 0.75 of the budget on anchors, MMR's score
    # and priors for both anchors and their neighbours
    anchor_share: float = 0.75
    lambda_: float = 0.7
    cost_exponent: float = DEFAULT_COST_EXPONENT
    position_decay: float = DEFAULT_POSITION_DECAY
    min_unit_tokens: int = DEFAULT_MIN_UNIT_TOKENS

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "anchor_share": Interval(
            float,
            0,
            1,
            closed="right",
            fix="it is the share of the budget spent on anchors before context is added "
            "around them; try 0.75.",
        ),
        **MMR_SCORE_RULES,
    }

    def select(self, problem: SelectionProblem) -> Selection:
        n = problem.n
        tracker = problem.tracker()
        marginal = MarginalScore.of(self, problem, tracker)
        keep = allowed_units(problem, min_unit_tokens=self.min_unit_tokens)
        may_anchor = np.ones(n, dtype=bool) if keep is None else keep
        order: list[int] = []
        gains: list[float] = []
        frontier: set[int] = set()  # unselected units next to a selected one
        overflow: int | None = None

        def take(e: int) -> None:
            gains.append(marginal.keep(e))
            order.append(e)
            frontier.discard(e)
            for nb in (e - 1, e + 1):
                if 0 <= nb < n and not tracker.is_selected[nb]:
                    frontier.add(nb)

        def fitting(mask: NDArray[np.bool_]) -> NDArray[np.int64]:
            free = mask & ~tracker.is_selected & (tracker.marginal <= tracker.remaining)
            return np.flatnonzero(free)

        def fitting_neighbours() -> NDArray[np.int64]:
            # in index order, so that ties go to the earliest unit as everywhere else
            units = np.array(sorted(frontier), dtype=np.int64)
            return units[tracker.marginal[units] <= tracker.remaining]

        # Anchors: the best units (by relevance, less redundancy to the anchors already
        # taken when lambda_ < 1) until anchor_share of the budget is spent.
        anchor_budget = self.anchor_share * problem.capacity
        while True:
            spent = problem.capacity - tracker.remaining
            room = spent + tracker.marginal <= anchor_budget
            e = marginal.best(fitting(may_anchor & room))
            if e is None:
                break
            take(e)
        # The unit an anchor pass would take next, had it fitted (a truncation candidate).
        unfit = np.flatnonzero(
            may_anchor & ~tracker.is_selected & (tracker.marginal > tracker.remaining)
        )
        if len(unfit):
            overflow = marginal.best(unfit)
        # Context: the best unit adjacent to the selection, until none fits; then a new
        # anchor, and so on until nothing fits.
        while True:
            e = marginal.best(fitting_neighbours())
            if e is None:
                e = marginal.best(fitting(may_anchor))
            if e is None:
                break
            take(e)
        return Selection(tuple(order), tuple(gains), overflow)
