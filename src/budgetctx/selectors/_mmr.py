"""Maximal Marginal Relevance (paper 3.4, Carbonell & Goldstein 1998)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from budgetctx._validation import Constraint, Interval, validate_fields
from budgetctx.representations._features import DenseKernel
from budgetctx.selectors._base import Selection, SelectionProblem
from budgetctx.selectors._priors import (
    DEFAULT_COST_EXPONENT,
    DEFAULT_MIN_UNIT_TOKENS,
    DEFAULT_POSITION_DECAY,
    allowed_units,
    unit_weights,
)

__all__ = ["MMRSelector"]


@dataclass(frozen=True)
class MMRSelector:
    """Repeatedly takes the unit maximising ``lambda_ * w_i r_i - (1 - lambda_) * max_{j in S}
    k(i, j)`` among those that still fit. Redundancy is measured against *all* selected units,
    and the score is updated after every pick.

    ``cost_exponent`` r divides a positive score by ``cost ** r`` (a negative one is multiplied
    by it, so a longer unit is never preferred for being worse); 0 ignores length. ``w_i`` is
    the lead prior and fragment rule of :mod:`budgetctx.selectors._priors` (``position_decay``,
    ``min_unit_tokens``; 0 and 0 leave relevance as it is). The defaults, r=0.25, 0.01 and 5,
    were chosen on validation data (issue 15); ``cost_exponent=0, position_decay=0,
    min_unit_tokens=0`` is the paper's MMR.

    >>> MMRSelector(lambda_=0.5).name
    'mmr'
    """

    lambda_: float = 0.7
    cost_exponent: float = DEFAULT_COST_EXPONENT
    position_decay: float = DEFAULT_POSITION_DECAY
    min_unit_tokens: int = DEFAULT_MIN_UNIT_TOKENS

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "lambda_": Interval(float, 0, 1, fix="1 is pure relevance, 0 pure novelty; try 0.7."),
        "cost_exponent": Interval(
            float, 0, 1, fix="0 ignores unit length, 1 ranks by score per token."
        ),
        "position_decay": Interval(
            float, 0, None, fix="0 means no lead prior; 0.03 halves a unit's weight every 23 units."
        ),
        "min_unit_tokens": Interval(int, 0, None, fix="0 keeps every unit; e.g. 4 drops 'OK .'."),
    }

    def __post_init__(self) -> None:
        validate_fields(self)

    @property
    def name(self) -> str:
        return "mmr"

    def params(self) -> dict[str, Any]:
        return asdict(self)

    def select(self, problem: SelectionProblem) -> Selection:
        kernel = problem.features.kernel
        if problem.overlapping or not isinstance(kernel, DenseKernel) or problem.n == 0:
            return self.select_reference(problem)
        n = problem.n
        costs = problem.unit_costs
        remaining = int(problem.capacity)
        base = self.lambda_ * self._weighted_relevance(problem)
        minus_c = -(1.0 - self.lambda_)
        keep = allowed_units(problem, min_unit_tokens=self.min_unit_tokens)
        # score = lam * w_i r_i - (1 - lam) * max_{j in S} k(i, j) for units that may still be
        # taken, -inf for the others (taken, fragments, too long for what is left), so that
        # one argmax picks the next unit. It falls by a running minimum: base - c*x is
        # non-increasing in x, so min(score, base - c*k(., e)) equals the reference's
        # base - c*max(redundancy, k(., e)) bit for bit.
        score = np.array(base, dtype=np.float64) if keep is None else np.where(keep, base, -np.inf)
        scale = None
        ranked = score
        if self.cost_exponent > 0:
            scale = np.maximum(costs, 1).astype(np.float64) ** self.cost_exponent
            ranked = np.empty(n)
        # Costs never change here and the budget only shrinks: a unit that stops fitting is
        # parked for good, costliest first. Its score then is an upper bound for later.
        by_cost = np.argsort(-costs, kind="stable")
        ascending = costs[by_cost[::-1]]
        n_parked = 0
        parked: list[tuple[NDArray[np.int64], int, NDArray[np.float64]]] = []
        positive = kernel.positive
        novelty = np.empty(n)
        nonpositive = False
        order: list[int] = []
        gains: list[float] = []
        while True:
            if n_parked < n and remaining < costs[by_cost[n_parked]]:
                too_costly = n - int(ascending.searchsorted(remaining, side="right"))
                newly = by_cost[n_parked:too_costly]
                newly = newly[np.isfinite(score[newly])]
                if len(newly):
                    parked.append((newly, len(order), score[newly]))
                score[newly] = -np.inf
                n_parked = too_costly
            if scale is not None:
                (np.multiply if nonpositive else np.divide)(score, scale, out=ranked)
            e = int(ranked.argmax())
            if ranked[e] == -np.inf:
                break
            if ranked[e] <= 0 and scale is not None and not nonpositive:
                # Nothing that fits scores above 0, and scores only fall: from now on every
                # score ranks as score * cost ** r, so that a longer unit is never preferred
                # for being worse (for a score <= 0 that is exactly _rank).
                nonpositive = True
                np.multiply(score, scale, out=ranked)
                e = int(ranked.argmax())
            remaining -= int(costs[e])
            order.append(e)
            gains.append(float(score[e]))
            score[e] = -np.inf
            # float64 arithmetic on the float32 kernel row, as kernel.column(e) gives it
            np.multiply(positive[e], minus_c, out=novelty, dtype=np.float64)
            novelty += base
            np.minimum(score, novelty, out=score)
        overflow = self._overflow(kernel, base, order, parked, scale)
        return Selection(tuple(order), tuple(gains), overflow)

    def _weighted_relevance(self, problem: SelectionProblem) -> NDArray[np.float64]:
        w = unit_weights(
            problem, position_decay=self.position_decay, min_unit_tokens=self.min_unit_tokens
        )
        return problem.relevance if w is None else problem.relevance * w

    def _overflow(
        self,
        kernel: DenseKernel,
        base: NDArray[np.float64],
        order: list[int],
        parked: list[tuple[NDArray[np.int64], int, NDArray[np.float64]]],
        scale: NDArray[np.float64] | None,
    ) -> int | None:
        """The unit MMR would have taken next had it fitted (a truncation candidate): the
        best parked unit, its score brought up to date with the units taken after it was
        parked, exactly as the reference keeps it."""
        if not parked:
            return None
        units = np.concatenate([u for u, _, _ in parked])
        score = np.concatenate([s for _, _, s in parked])
        since = np.concatenate([np.full(len(u), t) for u, t, _ in parked])
        c = 1.0 - self.lambda_
        for step in range(int(since[0]), len(order)):
            k = int(np.searchsorted(since, step, side="right"))  # parked by then: a prefix
            rows = units[:k]
            later = base[rows] + -c * kernel.entries(order[step], rows)
            np.minimum(score[:k], later, out=score[:k])
        ranked = score if scale is None else _rank(score, scale[units])
        # ties go to the lowest index, as in the reference
        by_index = np.argsort(units, kind="stable")
        return int(units[by_index][int(np.argmax(ranked[by_index]))])

    def select_reference(self, problem: SelectionProblem) -> Selection:
        """The same selection, written plainly: every step re-scores every unit. The fast
        path must equal it; it also serves problems the fast path does not (overlapping
        units, whose costs shrink, and kernels without cheap entries)."""
        n = problem.n
        r = self._weighted_relevance(problem)
        kernel = problem.features.kernel
        tracker = problem.tracker()
        redundancy = np.zeros(n)
        keep = allowed_units(problem, min_unit_tokens=self.min_unit_tokens)
        available = np.ones(n, dtype=bool) if keep is None else keep.copy()
        order: list[int] = []
        gains: list[float] = []
        overflow: int | None = None
        lam = self.lambda_
        rexp = self.cost_exponent
        scale = None
        if rexp > 0:
            scale = np.maximum(tracker.marginal, 1).astype(np.float64) ** rexp
        while True:
            score = lam * r - (1.0 - lam) * redundancy
            ranked = score
            if scale is not None:
                if problem.overlapping:  # shared segments make marginal costs shrink
                    scale = np.maximum(tracker.marginal, 1).astype(np.float64) ** rexp
                ranked = _rank(score, scale)
            fits = available & (tracker.marginal <= tracker.remaining)
            if not fits.any():
                if available.any():  # the unit MMR would take next, had it fitted
                    overflow = int(np.argmax(np.where(available, ranked, -np.inf)))
                break
            e = int(np.argmax(np.where(fits, ranked, -np.inf)))
            tracker.add(e)
            available[e] = False
            order.append(e)
            gains.append(float(score[e]))
            np.maximum(redundancy, kernel.column(e), out=redundancy)
        return Selection(tuple(order), tuple(gains), overflow)


def _rank(score: NDArray[np.float64], scale: NDArray[np.float64]) -> NDArray[np.float64]:
    """Score per cost ** r, with a negative score multiplied instead of divided."""
    ranked: NDArray[np.float64] = np.where(score >= 0, score / scale, score * scale)
    return ranked
