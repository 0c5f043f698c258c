"""The paper's budget-regime router (3.5): one selector per budget interval."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from budgetctx._core.results import DocumentStats, RouteDecision
from budgetctx._errors import InvalidParameterError

__all__ = ["BudgetRouter"]


@dataclass(frozen=True)
class BudgetRouter:
    """``selectors[0]`` for ``budget <= b1``, ``selectors[1]`` for ``b1 < budget <= b2``,
    ``selectors[2]`` above ``b2`` (the paper: Lead, MMR, RCD). Thresholds are in tokens of
    ``tokenizer``; ``math.inf`` means "never".

    >>> from budgetctx.router import DocumentStats
    >>> r = BudgetRouter(b1=512, b2=1024)
    >>> r.route(DocumentStats(0.5, 0.1, 3000, 0.2), 600).selector
    'mmr'
    """

    b1: float
    b2: float
    selectors: tuple[str, str, str] = ("lead", "mmr", "rcd")
    tokenizer: str = "o200k_base"
    provenance: Mapping[str, Any] = field(default_factory=dict, compare=False)

    kind = "budget"

    def __post_init__(self) -> None:
        # NaN fails every comparison, so it is refused here too.
        if not (0 <= self.b1 <= self.b2):
            raise InvalidParameterError(
                f"Thresholds must satisfy 0 <= b1 <= b2, got b1={self.b1}, b2={self.b2}.",
                parameter="b1",
                value=(self.b1, self.b2),
            )
        if len(self.selectors) != 3 or not all(isinstance(s, str) and s for s in self.selectors):
            raise InvalidParameterError(
                f"A budget router needs 3 selectors (low, mid, high), got {self.selectors!r}.",
                parameter="selectors",
                value=list(self.selectors),
            )

    def choose(self, budget: int) -> tuple[str, str]:
        """The selector for ``budget`` and, in plain words, the rule that picked it."""
        # Said in words a reader of the CLI or the viewer can follow without the paper:
        # the thresholds are token counts, "inf" means the regime is never left.
        if budget <= self.b1:
            upto = "at every budget" if math.isinf(self.b1) else f"up to {_fmt(self.b1)} tokens"
            return self.selectors[0], f"the calibrated budget rule uses it {upto}"
        if budget <= self.b2:
            upto = "" if math.isinf(self.b2) else f" up to {_fmt(self.b2)}"
            return (
                self.selectors[1],
                f"the calibrated budget rule uses it from {_fmt(self.b1)} tokens{upto}",
            )
        return self.selectors[2], f"the calibrated budget rule uses it above {_fmt(self.b2)} tokens"

    def route(self, stats: DocumentStats, budget: int) -> RouteDecision:
        selector, why = self.choose(budget)
        return RouteDecision(selector, "budget", f"budget {budget} tokens: {why}", stats)

    def to_config(self) -> dict[str, Any]:
        return {
            "kind": "budget",
            "tokenizer": self.tokenizer,
            "b1": _json_threshold(self.b1),
            "b2": _json_threshold(self.b2),
            "selectors": list(self.selectors),
            "provenance": dict(self.provenance),
        }

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> BudgetRouter:
        selectors = config["selectors"]
        if not isinstance(selectors, list):
            raise ValueError(f"selectors must be a list of 3 names, got {type(selectors).__name__}")
        return cls(
            b1=_threshold(config["b1"]),
            b2=_threshold(config["b2"]),
            selectors=tuple(selectors),
            tokenizer=_name(config["tokenizer"], "tokenizer"),
            provenance=dict(config.get("provenance", {})),
        )


def _fmt(x: float) -> str:
    return "inf" if math.isinf(x) else str(int(x))


def _json_threshold(x: float) -> float | str:
    return "inf" if math.isinf(x) else x


def _threshold(x: Any) -> float:
    if x in ("inf", None):
        return math.inf
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise ValueError(f"a threshold must be a number or 'inf', got {x!r:.40}")
    return float(x)


def _name(x: Any, what: str) -> str:
    if not isinstance(x, str) or not x:
        raise ValueError(f"{what} must be a non-empty string, got {x!r:.40}")
    return x
