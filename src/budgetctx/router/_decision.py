"""What a router decided, and why."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from budgetctx.router._stats import DocumentStats

__all__ = ["RouteDecision"]


@dataclass(frozen=True)
class RouteDecision:
    """The selector a router chose for one (document, budget), with its reason.

    ``fallback`` is true when a feature router was not confident and used its fallback.
    """

    selector: str
    router: str
    reason: str
    stats: DocumentStats
    confidence: float | None = None
    fallback: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["stats"] = self.stats.to_dict()
        return out
