"""Maximal Marginal Relevance (paper 3.4, Carbonell & Goldstein 1998)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np

from budgetctx._validation import Constraint, Interval, validate_fields
from budgetctx.selectors._base import Selection, SelectionProblem
from budgetctx.selectors._priors import allowed_units, unit_weights

__all__ = ["MMRSelector"]


@dataclass(frozen=True)
class MMRSelector:
    """Repeatedly takes the unit maximising ``lambda_ * w_i r_i - (1 - lambda_) * max_{j in S}
    k(i, j)`` among those that still fit. Redundancy is measured against *all* selected units,
    and the score is updated after every pick.

    ``cost_exponent`` r divides a positive score by ``cost ** r`` (a negative one is multiplied
    by it, so a longer unit is never preferred for being worse); 0, the default, ignores
    length. ``w_i`` is the lead prior and fragment rule of :mod:`budgetctx.selectors._priors`
    (``position_decay``, ``min_unit_tokens``; 0 and 0 leave relevance as it is).

    >>> MMRSelector(lambda_=0.5).name
    'mmr'
    """

    lambda_: float = 0.7
    cost_exponent: float = 0.0
    position_decay: float = 0.0
    min_unit_tokens: int = 0

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
        n = problem.n
        r = problem.relevance
        w = unit_weights(
            problem, position_decay=self.position_decay, min_unit_tokens=self.min_unit_tokens
        )
        if w is not None:
            r = r * w
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
                ranked = np.where(score >= 0, score / scale, score * scale)
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
