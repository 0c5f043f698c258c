"""A router that reads the document's route statistics, not just the budget (beyond the paper).

Its kind is ``"feature"`` in router configs (the name configs and reports have always used);
what it reads are the route statistics of :data:`STAT_NAMES`, not the units' features.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from budgetctx._core.results import DocumentStats, RouteDecision
from budgetctx._errors import InvalidParameterError
from budgetctx.router._budget import BudgetRouter, _name
from budgetctx.router._stats import STAT_NAMES
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
        # The reasons are for a reader of the CLI or the viewer: what was chosen and why, in
        # words; the predicted gain stays in RouteDecision.confidence for programs.
        where = f"budget {budget} tokens: {base_why}"
        if base_selector not in self.selectors or gain < self.min_gain:
            margin = (
                "this router always keeps to that rule"
                if self.min_gain >= 1
                else "no other selector was predicted to score at least "
                f"{self.min_gain:g} higher on documents like this one"
            )
            return RouteDecision(
                base_selector,
                "feature",
                f"{where}; {margin}",
                stats,
                confidence=None if np.isnan(gain) else gain,
                fallback=True,
            )
        chosen = self.selectors[best]
        leaf = self.tree.leaf(stats.vector(budget))
        like = f"documents like this one ({self.tree.n_samples[leaf]} calibration cases)"
        if chosen == base_selector:
            why = f"{where}, and {like} scored best with it too"
        else:
            metric = self.provenance.get("metric", "score")
            why = (
                f"{like} scored {gain:.3f} {metric} higher with it than with "
                f"{base_selector}, which the budget rule picks ({where})"
            )
        return RouteDecision(chosen, "feature", why, stats, confidence=gain)

    def to_config(self) -> dict[str, Any]:
        return {
            "kind": "feature",
            "tokenizer": self.tokenizer,
            # "features" is the key configs have always used; it lists route statistics.
            "features": list(STAT_NAMES),
            "selectors": list(self.selectors),
            "min_gain": self.min_gain,
            "tree": self.tree.to_dict(),
            "fallback": self.fallback.to_config(),
            "provenance": dict(self.provenance),
        }

    def __post_init__(self) -> None:
        if not self.selectors or not all(isinstance(s, str) and s for s in self.selectors):
            raise InvalidParameterError(
                f"A feature router needs a non-empty list of selector names, got "
                f"{list(self.selectors)!r:.80}.",
                parameter="selectors",
                value=len(self.selectors),
            )
        if self.tree.n_outputs != len(self.selectors):
            raise InvalidParameterError(
                f"The tree predicts {self.tree.n_outputs} scores per leaf but the router has "
                f"{len(self.selectors)} selectors; give one score per selector.",
                parameter="tree",
                value=self.tree.n_outputs,
            )
        if math.isnan(self.min_gain):
            raise InvalidParameterError(
                "min_gain must be a number, got nan; e.g. min_gain=0.005.",
                parameter="min_gain",
                value=self.min_gain,
            )

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> FeatureRouter:
        names = config.get("features", list(STAT_NAMES))
        # A tree fitted before the dialogue statistics existed reads the first five only.
        if not isinstance(names, list) or tuple(names) not in (STAT_NAMES, STAT_NAMES[:5]):
            raise ValueError(f"features must be {list(STAT_NAMES)}")
        selectors = config["selectors"]
        if not isinstance(selectors, list):
            raise ValueError(f"selectors must be a list, got {type(selectors).__name__}")
        min_gain = config.get("min_gain", 0.005)
        if isinstance(min_gain, bool) or not isinstance(min_gain, int | float):
            raise ValueError(f"min_gain must be a number, got {min_gain!r:.40}")
        fallback = config["fallback"]
        if not isinstance(fallback, Mapping):
            raise ValueError(f"fallback must be an object, got {type(fallback).__name__}")
        return cls(
            tree=TreeModel.from_dict(config["tree"], n_inputs=len(names)),
            selectors=tuple(selectors),
            fallback=BudgetRouter.from_config(fallback),
            min_gain=float(min_gain),
            tokenizer=_name(config["tokenizer"], "tokenizer"),
            provenance=dict(config.get("provenance", {})),
        )
