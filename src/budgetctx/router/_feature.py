"""A router that reads the document, not just the budget (beyond the paper)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from budgetctx.router._budget import BudgetRouter
from budgetctx.router._decision import RouteDecision
from budgetctx.router._stats import FEATURE_NAMES, DocumentStats
from budgetctx.router._tree import TreeModel

__all__ = ["FeatureRouter"]


@dataclass(frozen=True)
class FeatureRouter:
    """A small regression tree over (budget, length, budget/length, phi, rho) that predicts
    each candidate selector's score; the router takes the best prediction only when it beats
    its fallback's prediction by ``min_gain``, else it defers to ``fallback`` (a budget
    router, itself choosing Lead at small budgets in the paper's policy). So it is never
    worse than the fallback on the rows it was fitted on, and it says when it was unsure.
    """

    tree: TreeModel
    selectors: tuple[str, ...]
    fallback: BudgetRouter
    min_gain: float = 0.005
    tokenizer: str = "o200k_base"
    provenance: Mapping[str, Any] = field(default_factory=dict, compare=False)

    kind = "feature"

    def route(self, stats: DocumentStats, budget: int) -> RouteDecision:
        scores = self.tree.predict(stats.vector(budget))
        base_selector, base_why = self.fallback.choose(budget)
        best = int(np.argmax(scores))
        gain = float("nan")
        if base_selector in self.selectors:
            gain = float(scores[best] - scores[self.selectors.index(base_selector)])
        if base_selector not in self.selectors or gain < self.min_gain:
            return RouteDecision(
                base_selector,
                "feature",
                f"no selector predicted {self.min_gain} above the fallback ({base_why}): "
                f"{base_selector}",
                stats,
                confidence=None if np.isnan(gain) else gain,
                fallback=True,
            )
        chosen = self.selectors[best]
        leaf = self.tree.leaf(stats.vector(budget))
        where = f"leaf {leaf} ({self.tree.n_samples[leaf]} calibration rows)"
        if chosen == base_selector:
            why = f"{where} agrees with the budget rule ({base_why}): {chosen}"
        else:
            why = f"{where} predicts {chosen} {gain:+.3f} over {base_selector} ({base_why})"
        return RouteDecision(chosen, "feature", why, stats, confidence=gain)

    def to_config(self) -> dict[str, Any]:
        return {
            "kind": "feature",
            "tokenizer": self.tokenizer,
            "features": list(FEATURE_NAMES),
            "selectors": list(self.selectors),
            "min_gain": self.min_gain,
            "tree": self.tree.to_dict(),
            "fallback": self.fallback.to_config(),
            "provenance": dict(self.provenance),
        }

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> FeatureRouter:
        if tuple(config.get("features", FEATURE_NAMES)) != FEATURE_NAMES:
            raise ValueError(f"features must be {list(FEATURE_NAMES)}")
        return cls(
            tree=TreeModel.from_dict(config["tree"]),
            selectors=tuple(config["selectors"]),
            fallback=BudgetRouter.from_config(config["fallback"]),
            min_gain=float(config.get("min_gain", 0.005)),
            tokenizer=str(config["tokenizer"]),
            provenance=dict(config.get("provenance", {})),
        )
