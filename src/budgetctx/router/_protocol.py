"""The Router protocol: what ``build_context(selector=router)`` accepts."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from budgetctx._core.results import DocumentStats, RouteDecision

__all__ = ["Router"]


@runtime_checkable
class Router(Protocol):
    """Chooses a selector for one document at one budget.

    ``tokenizer`` names the tokenizer whose tokens the router's budgets are in (``None``: any);
    the pipeline refuses a context counted with another. ``route`` returns a
    :class:`RouteDecision` whose ``selector`` is a selector spec (``"mmr:lambda_=0.3"``).

    >>> from budgetctx import RouteDecision, build_context
    >>> class Always:
    ...     tokenizer = None
    ...     def route(self, stats, budget):
    ...         return RouteDecision("lead", "always", "always lead", stats)
    >>> build_context("Chest pain. Troponin negative.", 4, selector=Always()).selector
    'lead'
    """

    @property
    def tokenizer(self) -> str | None: ...

    def route(self, stats: DocumentStats, budget: int) -> RouteDecision: ...
