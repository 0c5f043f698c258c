"""Document statistics the router reads (paper 3.5)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from budgetctx.pipeline import PreparedDocument

__all__ = ["DocumentStats", "document_stats"]


@dataclass(frozen=True)
class DocumentStats:
    """``phi``: share of total relevance in the units that fit the budget from the start
    (front-loading); ``rho``: mean similarity of adjacent units (redundancy); ``length``:
    document tokens; ``budget_ratio``: budget / length."""

    phi: float
    rho: float
    length: int
    budget_ratio: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def vector(self, budget: int) -> list[float]:
        """Features in the order routers use: budget, length, ratio, phi, rho."""
        return [float(budget), float(self.length), self.budget_ratio, self.phi, self.rho]


FEATURE_NAMES = ("budget", "length", "budget_ratio", "phi", "rho")


def document_stats(doc: PreparedDocument, budget: int) -> DocumentStats:
    """Router features of a prepared document at ``budget``.

    >>> from budgetctx import prepare
    >>> s = document_stats(prepare("Chest pain. Chest pain again. Diet."), budget=5)
    >>> (round(s.phi, 2), s.length)
    (0.4, 9)
    """
    r = doc.features.relevance
    n = doc.n_units
    if n:
        costs = np.fromiter(
            (int(doc.segment_costs[list(u.segments)].sum()) for u in doc.segmentation.units),
            dtype=np.int64,
            count=n,
        )
        m = int(np.searchsorted(np.cumsum(costs), budget, side="right"))
    else:
        m = 0
    total = float(r.sum())
    phi = float(r[:m].sum() / total) if total > 0 else 0.0
    rho = float(doc.features.kernel.adjacent().mean()) if n > 1 else 0.0
    return DocumentStats(
        phi=round(phi, 6),
        rho=round(rho, 6),
        length=int(doc.document_tokens),
        budget_ratio=round(budget / max(doc.document_tokens, 1), 6),
    )
