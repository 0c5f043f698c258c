"""Route statistics: what a router reads about a document at one budget (paper 3.5).

Computed from plain arrays so that the router never needs the pipeline's objects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from budgetctx._core.results import DocumentStats

if TYPE_CHECKING:
    from budgetctx.unitizers._turns import TurnStatistics

__all__ = ["STAT_NAMES", "DocumentStats", "document_stats"]

#: The order of :meth:`DocumentStats.vector`, which route trees index into. The dialogue
#: statistics came last (issue 21), so a tree that reads only the first five still loads.
STAT_NAMES = (
    "budget",
    "length",
    "budget_ratio",
    "phi",
    "rho",
    "backchannel_share",
    "hesitation_rate",
    "mean_turn_words",
)


def document_stats(
    *,
    relevance: ArrayLike,
    unit_costs: ArrayLike,
    adjacency: ArrayLike,
    document_tokens: int,
    budget: int,
    turns: TurnStatistics | None = None,
) -> DocumentStats:
    """Route statistics from the units' relevance and token costs (document order) and the
    similarity of each unit to the next (``adjacency``, one entry fewer than the units), and
    the dialogue's :class:`~budgetctx.unitizers._turns.TurnStatistics` when it is one.

    >>> s = document_stats(relevance=[0.4, 0.4, 0.2], unit_costs=[4, 5, 2],
    ...                    adjacency=[0.5, 0.0], document_tokens=11, budget=5)
    >>> (s.phi, s.rho, s.length, s.budget_ratio)
    (0.4, 0.25, 11, 0.454545)
    """
    r = np.asarray(relevance, dtype=np.float64)
    costs = np.asarray(unit_costs, dtype=np.int64)
    adjacent = np.asarray(adjacency, dtype=np.float64)
    m = int(np.searchsorted(np.cumsum(costs), budget, side="right")) if costs.size else 0
    total = float(r.sum())
    phi = float(r[:m].sum() / total) if total > 0 else 0.0
    rho = float(adjacent.mean()) if adjacent.size else 0.0
    return DocumentStats(
        phi=round(phi, 6),
        rho=round(rho, 6),
        length=int(document_tokens),
        budget_ratio=round(budget / max(int(document_tokens), 1), 6),
        backchannel_share=turns.backchannel_share if turns is not None else 0.0,
        hesitation_rate=turns.hesitation_rate if turns is not None else 0.0,
        mean_turn_words=turns.mean_turn_words if turns is not None else 0.0,
    )
