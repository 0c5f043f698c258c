"""Hierarchical selection (paper 3.4): relevant anchors, then their neighbours."""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from budgetctx._core.component import Component
from budgetctx._core.validation import Constraint, Interval
from budgetctx.selectors._base import Selection, SelectionProblem

__all__ = ["HierarchicalSelector"]


@dataclass(frozen=True)
class HierarchicalSelector(Component, name="hierarchical"):
    """Picks the most relevant units as anchors (up to ``anchor_share`` of the budget), then
    grows context around them: the most relevant unit adjacent to the selection is added
    next, until no neighbour fits; then a new anchor is taken and grown, and so on.

    >>> HierarchicalSelector(anchor_share=0.3).params()
    {'anchor_share': 0.3}
    """

    anchor_share: float = 0.5

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "anchor_share": Interval(
            float,
            0,
            1,
            closed="right",
            fix="it is the share of the budget spent on anchors before context is added "
            "around them; try 0.5.",
        ),
    }

    def select(self, problem: SelectionProblem) -> Selection:
        n = problem.n
        r = problem.relevance
        tracker = problem.tracker()
        by_relevance = np.argsort(-r, kind="stable")
        order: list[int] = []
        overflow: int | None = None
        frontier: list[tuple[float, int]] = []

        def take(e: int) -> None:
            tracker.add(e)
            order.append(e)
            for nb in (e - 1, e + 1):
                if 0 <= nb < n and not tracker.is_selected[nb]:
                    heapq.heappush(frontier, (-float(r[nb]), nb))

        anchor_budget = self.anchor_share * problem.capacity
        for e in by_relevance:
            e = int(e)
            spent = problem.capacity - tracker.remaining
            if tracker.fits(e) and spent + tracker.marginal[e] <= anchor_budget:
                take(e)
            elif overflow is None and not tracker.fits(e):
                overflow = e
        cursor = 0
        while True:
            while frontier:
                _, e = heapq.heappop(frontier)
                if not tracker.is_selected[e] and tracker.fits(e):
                    take(e)
            while cursor < n and (
                tracker.is_selected[by_relevance[cursor]] or not tracker.fits(by_relevance[cursor])
            ):
                cursor += 1
            if cursor >= n:
                break
            take(int(by_relevance[cursor]))
        return Selection(tuple(order), tuple(float(r[e]) for e in order), overflow)
