"""A unit's marginal relevance given what is already kept, for selectors that are not MMR.

Hierarchical and GraphCluster (paper 3.4) choose among a *restricted* set of units at each
step (an anchor within the anchor budget, a neighbour of the selection, a unit of one
component). :class:`MarginalScore` scores those candidates the way MMR scores everything::

    score_i = lambda_ * w_i * r_i - (1 - lambda_) * max_{j in S} k(i, j)

ranked per ``cost ** cost_exponent`` (a negative score multiplied by it, so that a longer
unit is never preferred for being worse), with ``w_i`` the lead prior and fragment rule of
:mod:`budgetctx.selectors._priors`. ``lambda_=1, cost_exponent=0, position_decay=0,
min_unit_tokens=0`` is plain relevance, so a selector keeps its old choices exactly there.

>>> import numpy as np
>>> from budgetctx.representations import DenseKernel, UnitFeatures
>>> f = UnitFeatures(np.array([0.9, 0.8, 0.3]), DenseKernel(np.array(
...     [[1.0, 0.9, 0.0], [0.9, 1.0, 0.0], [0.0, 0.0, 1.0]])), "centroid")
>>> p = SelectionProblem(((0,), (1,), (2,)), np.array([4, 4, 4]), f, capacity=12)
>>> m = MarginalScore(p, p.tracker(), lambda_=0.5, cost_exponent=0.0,
...                   position_decay=0.0, min_unit_tokens=0)
>>> m.take(0)
>>> int(m.best(np.array([1, 2])))
2

:meth:`MarginalScore.keep` also charges the unit to the budget and returns its score:

>>> t = p.tracker()
>>> m = MarginalScore(p, t, lambda_=0.5, cost_exponent=0.0, position_decay=0.0,
...                   min_unit_tokens=0)
>>> m.keep(0), t.remaining, round(float(m.scores(np.array([1]))[0]), 2)
(0.45, 8, -0.05)
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from budgetctx.representations._features import DenseKernel
from budgetctx.selectors._base import BudgetTracker, SelectionProblem
from budgetctx.selectors._priors import unit_weights

__all__ = ["MarginalScore", "ScoreOptions"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


class ScoreOptions(Protocol):
    """The options that define the score: a selector that ranks by it has them as fields."""

    @property
    def lambda_(self) -> float: ...
    @property
    def cost_exponent(self) -> float: ...
    @property
    def position_decay(self) -> float: ...
    @property
    def min_unit_tokens(self) -> int: ...


class MarginalScore:
    """Relevance minus redundancy to the kept units, for any subset of candidates."""

    @classmethod
    def of(
        cls, options: ScoreOptions, problem: SelectionProblem, tracker: BudgetTracker
    ) -> MarginalScore:
        """The score that ``options`` (a selector's fields) define, on ``problem``."""
        return cls(
            problem,
            tracker,
            lambda_=options.lambda_,
            cost_exponent=options.cost_exponent,
            position_decay=options.position_decay,
            min_unit_tokens=options.min_unit_tokens,
        )

    def __init__(
        self,
        problem: SelectionProblem,
        tracker: BudgetTracker,
        *,
        lambda_: float,
        cost_exponent: float,
        position_decay: float,
        min_unit_tokens: int,
    ) -> None:
        w = unit_weights(problem, position_decay=position_decay, min_unit_tokens=min_unit_tokens)
        r = problem.relevance
        self.relevance: FloatArray = r if w is None else r * w
        self.lambda_ = lambda_
        self.cost_exponent = cost_exponent
        self._tracker = tracker
        # a unit's cost changes only where units share segments (overlapping windows): the
        # scales of the others are computed once
        self._scale: FloatArray | None = None
        if cost_exponent != 0 and not problem.overlapping:
            self._scale = np.maximum(problem.unit_costs, 1).astype(np.float64) ** cost_exponent
        self._kernel = problem.features.kernel if lambda_ < 1 else None
        self._redundancy = np.zeros(problem.n)

    def scores(self, units: IntArray) -> FloatArray:
        """``lambda_ * w r - (1 - lambda_) * redundancy`` of ``units`` (unranked)."""
        base = self.lambda_ * self.relevance[units]
        if self._kernel is None:
            return base
        out: FloatArray = base - (1.0 - self.lambda_) * self._redundancy[units]
        return out

    def ranked(self, units: IntArray) -> FloatArray:
        """The scores of ``units`` per ``cost ** cost_exponent`` at their marginal cost now."""
        s = self.scores(units)
        if self.cost_exponent == 0:
            return s
        if self._scale is not None:
            scale = self._scale[units]
        else:
            costs = np.maximum(self._tracker.marginal[units], 1).astype(np.float64)
            scale = costs**self.cost_exponent
        out: FloatArray = np.where(s >= 0, s / scale, s * scale)
        return out

    def best(self, units: IntArray) -> int | None:
        """The best-ranked of ``units`` (the first on ties), or None when there are none."""
        if len(units) == 0:
            return None
        return int(units[int(np.argmax(self.ranked(units)))])

    def keep(self, e: int) -> float:
        """Keep ``e``: charge it to the budget and :meth:`take` it. Returns its score before."""
        gain = float(self.scores(np.array([e]))[0])
        self._tracker.add(e)
        self.take(e)
        return gain

    def take(self, e: int) -> None:
        """Record ``e`` as kept: later scores count their similarity to it."""
        kernel = self._kernel
        if kernel is None:
            return
        # a dense kernel's row is its column (float32, the same values): a deferred kernel of
        # a long document hands it out from X without building the n x n product
        row = kernel.positive_row(e) if isinstance(kernel, DenseKernel) else kernel.column(e)
        np.maximum(self._redundancy, row, out=self._redundancy)
