"""Result objects of :func:`budgetctx.build_context`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from budgetctx.router._decision import RouteDecision

__all__ = ["Context", "SelectedUnit"]


@dataclass(frozen=True)
class SelectedUnit:
    """A kept unit and where it came from.

    ``spans`` are exact ``(start, end)`` character offsets into the input, one per segment
    (a truncated unit's last span is shortened); ``text`` is the text of those spans joined by
    a space. ``tokens`` is the unit's own cost (its
    segments plus one separator each); overlapping window units share tokens. ``rank`` is the
    0-based position in the selector's order, ``gain`` the selector's score at that step.
    """

    id: int
    spans: tuple[tuple[int, int], ...]
    text: str
    tokens: int
    relevance: float
    gain: float
    rank: int
    section: str | None = None
    truncated: bool = False


@dataclass(frozen=True)
class Context:
    """A budgeted context with full provenance.

    ``text`` is what goes to the model; ``tokens_used`` is its exact count with
    ``tokenizer`` and is never above ``budget``. ``units`` are the kept units in document
    order; ``excluded`` lists the ids of every unit left out.

    >>> from budgetctx import build_context
    >>> ctx = build_context("Chest pain. Troponin negative. Discharged home.", budget=5)
    >>> ctx.tokens_used <= ctx.budget
    True
    """

    text: str
    tokens_used: int
    budget: int
    document_tokens: int
    tokenizer: str
    unitizer: str
    representation: str
    selector: str
    units: tuple[SelectedUnit, ...]
    excluded: tuple[int, ...]
    n_units: int
    separator: str = "\n"
    query: str | None = None
    relevance_source: str = "centroid"
    params: dict[str, Any] = field(default_factory=dict)
    #: why the context is empty or whole, when it is ("empty input", "document fits", ...)
    reason: str | None = None
    notes: tuple[str, ...] = ()
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: router features at this budget: phi (front-loading), rho (redundancy), length, ratio
    stats: dict[str, Any] = field(default_factory=dict)
    #: set when a router chose the selector (selector="auto" or a router instance)
    route: RouteDecision | None = None

    @property
    def tokens_saved(self) -> int:
        """Tokens not sent compared with the whole document."""
        return max(self.document_tokens - self.tokens_used, 0)

    @property
    def kept_ids(self) -> tuple[int, ...]:
        return tuple(u.id for u in self.units)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (spans become lists)."""
        out = asdict(self)
        out["tokens_saved"] = self.tokens_saved
        out["units"] = [{**asdict(u), "spans": [list(s) for s in u.spans]} for u in self.units]
        out["excluded"] = list(self.excluded)
        out["notes"] = list(self.notes)
        out["route"] = self.route.to_dict() if self.route is not None else None
        return out
