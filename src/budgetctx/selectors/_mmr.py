"""Maximal Marginal Relevance (paper 3.4, Carbonell & Goldstein 1998)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np

from budgetctx._validation import Constraint, Interval, validate_fields
from budgetctx.selectors._base import Selection, SelectionProblem

__all__ = ["MMRSelector"]


@dataclass(frozen=True)
class MMRSelector:
    """Repeatedly takes the unit maximising ``lambda_ * r_i - (1 - lambda_) * max_{j in S} k(i, j)``
    among those that still fit. Redundancy is measured against *all* selected units, and the
    score is updated after every pick.

    >>> MMRSelector(lambda_=0.5).name
    'mmr'
    """

    lambda_: float = 0.7

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "lambda_": Interval(float, 0, 1, fix="1 is pure relevance, 0 pure novelty; try 0.7."),
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
        kernel = problem.features.kernel
        tracker = problem.tracker()
        redundancy = np.zeros(n)
        available = np.ones(n, dtype=bool)
        order: list[int] = []
        gains: list[float] = []
        overflow: int | None = None
        lam = self.lambda_
        while True:
            score = lam * r - (1.0 - lam) * redundancy
            fits = available & (tracker.marginal <= tracker.remaining)
            if not fits.any():
                if available.any():  # the unit MMR would take next, had it fitted
                    overflow = int(np.argmax(np.where(available, score, -np.inf)))
                break
            e = int(np.argmax(np.where(fits, score, -np.inf)))
            tracker.add(e)
            available[e] = False
            order.append(e)
            gains.append(float(score[e]))
            np.maximum(redundancy, kernel.column(e), out=redundancy)
        return Selection(tuple(order), tuple(gains), overflow)
