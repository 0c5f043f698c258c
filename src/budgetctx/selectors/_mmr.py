"""Maximal Marginal Relevance (paper 3.4, Carbonell & Goldstein 1998)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from budgetctx._core.component import Component
from budgetctx._core.validation import Constraint
from budgetctx.representations._features import DenseKernel
from budgetctx.selectors._base import Selection, SelectionProblem
from budgetctx.selectors._priors import (
    DEFAULT_COST_EXPONENT,
    DEFAULT_MIN_UNIT_TOKENS,
    DEFAULT_POSITION_DECAY,
    MMR_SCORE_RULES,
    allowed_units,
    unit_weights,
)
from budgetctx.selectors._salience import SALIENCE_OPTION, with_salience

__all__ = ["MMRSelector"]


@dataclass(frozen=True)
class MMRSelector(Component, name="mmr"):
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
    #: without a query, the relevance read: "centroid" or "fused" (selectors._salience)
    salience: str = "centroid"

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "salience": SALIENCE_OPTION,
        **MMR_SCORE_RULES,
    }

    def select(self, problem: SelectionProblem) -> Selection:
        kernel = problem.features.kernel
        if problem.overlapping or not isinstance(kernel, DenseKernel) or problem.n == 0:
            return self.select_reference(problem)
        problem = with_salience(problem, self.salience)
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
        scales = _scales(costs, self.cost_exponent) if self.cost_exponent > 0 else None
        ranked = score if scales is None else np.empty(n)
        # Costs never change here and the budget only shrinks: a unit that stops fitting is
        # parked for good, costliest first. Its score then is an upper bound for later.
        by_cost = _costliest_first(costs)
        ascending = costs[by_cost[::-1]]
        descending = costs[by_cost].tolist()  # plain ints: read once per step
        unit_cost = costs.tolist()
        n_parked = 0
        parked: list[tuple[NDArray[np.int64], int, NDArray[np.float64]]] = []
        novelty = np.empty(n)
        nonpositive = False
        order: list[int] = []
        gains: list[float] = []
        while True:
            if n_parked < n and remaining < descending[n_parked]:
                too_costly = n - int(ascending.searchsorted(remaining, side="right"))
                newly = by_cost[n_parked:too_costly]
                newly = newly[np.isfinite(score[newly])]
                if len(newly):
                    parked.append((newly, len(order), score[newly]))
                score[newly] = -np.inf
                n_parked = too_costly
            if scales is not None:
                np.multiply(score, scales[nonpositive], out=ranked)
            e = int(ranked.argmax())
            best = float(ranked[e])
            if best == -np.inf:
                break
            if best <= 0 and scales is not None and not nonpositive:
                # Nothing that fits scores above 0, and scores only fall: from now on every
                # score ranks as score * cost ** r, so that a longer unit is never preferred
                # for being worse (for a score <= 0 that is exactly _rank).
                nonpositive = True
                np.multiply(score, scales[nonpositive], out=ranked)
                e = int(ranked.argmax())
            remaining -= unit_cost[e]
            order.append(e)
            gains.append(float(score[e]))
            score[e] = -np.inf
            # float64 arithmetic on the float32 kernel row, as kernel.column(e) gives it
            np.multiply(kernel.positive_row(e), minus_c, out=novelty, dtype=np.float64)
            novelty += base
            np.minimum(score, novelty, out=score)
        overflow = self._overflow(kernel, base, order, parked, scales)
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
        scales: tuple[NDArray[np.float64], NDArray[np.float64]] | None,
    ) -> int | None:
        """The unit MMR would have taken next had it fitted (a truncation candidate): the
        best parked unit by its score now, exactly as the reference keeps it.

        A parked unit's score when parked is an upper bound (scores only fall), so units are
        brought up to date best bound first, until no bound left can beat or tie the best.
        """
        if not parked:
            return None
        units = np.concatenate([u for u, _, _ in parked])
        stale = np.concatenate([s for _, _, s in parked])
        since = np.concatenate([np.full(len(u), t) for u, t, _ in parked])
        # a copy either way: bounds are struck out as units are brought up to date
        bound = (
            stale.copy() if scales is None else _rank(stale, (scales[0][units], scales[1][units]))
        )
        minus_c = -(1.0 - self.lambda_)
        taken = np.asarray(order, dtype=np.int64)
        best_rank, best_unit = -np.inf, -1
        while True:
            j = int(bound.argmax())
            if bound[j] < best_rank or bound[j] == -np.inf:
                return best_unit
            bound[j] = -np.inf
            u = int(units[j])
            later = taken[since[j] :]
            score = float(stale[j])
            if len(later):
                # the same float64 arithmetic as the running minimum of select()
                news = base[u] + minus_c * kernel.positive_at(later, u).astype(np.float64)
                score = min(score, float(news.min()))
            rank = score
            if scales is not None:
                rank = score * float(scales[score < 0][u])
            if rank > best_rank or (rank == best_rank and u < best_unit):
                best_rank, best_unit = rank, u

    def select_reference(self, problem: SelectionProblem) -> Selection:
        """The same selection, written plainly: every step re-scores every unit. The fast
        path must equal it; it also serves problems the fast path does not (overlapping
        units, whose costs shrink, and sparse kernels, whose columns are computed on demand)."""
        problem = with_salience(problem, self.salience)
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
        scales = _scales(tracker.marginal, rexp) if rexp > 0 else None
        while True:
            score = lam * r - (1.0 - lam) * redundancy
            ranked = score
            if scales is not None:
                if problem.overlapping:  # shared segments make marginal costs shrink
                    scales = _scales(tracker.marginal, rexp)
                ranked = _rank(score, scales)
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


def _scales(
    costs: NDArray[np.int64], exponent: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(cost ** -r, cost ** r)``, indexed by "is the score negative" (ranking multiplies:
    cheaper than dividing)."""
    clipped = np.maximum(costs, 1)
    top = int(clipped.max()) if len(clipped) else 0
    if top < len(clipped):
        # a few hundred distinct small costs: one power per cost, then a lookup (same values)
        scale: NDArray[np.float64] = (np.arange(top + 1, dtype=np.float64) ** exponent)[clipped]
    else:
        scale = clipped.astype(np.float64) ** exponent
    return 1.0 / scale, scale


def _costliest_first(costs: NDArray[np.int64]) -> NDArray[np.int64]:
    """Unit indices by cost, highest first, ties in index order."""
    if len(costs) and int(costs.max()) < 2**16:
        # a stable sort of 16-bit keys is a radix sort: ~6x faster than sorting int64
        key = (int(costs.max()) - costs).astype(np.uint16)
        return np.argsort(key, kind="stable").astype(np.int64)
    return np.argsort(-costs, kind="stable")


def _rank(
    score: NDArray[np.float64], scales: tuple[NDArray[np.float64], NDArray[np.float64]]
) -> NDArray[np.float64]:
    """Score per cost ** r, with a negative score multiplied by cost ** r instead, so that a
    longer unit is never preferred for being worse."""
    shrink, scale = scales
    ranked: NDArray[np.float64] = np.where(score >= 0, score * shrink, score * scale)
    return ranked
