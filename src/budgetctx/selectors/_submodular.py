"""Facility-location and RCD selectors: cost-scaled lazy greedy (paper 3.4, App. B)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from budgetctx._validation import Boolean, Constraint, Interval, validate_fields
from budgetctx.objectives import FacilityLocation, Objective, RCDObjective
from budgetctx.selectors._base import Selection, SelectionProblem
from budgetctx.selectors._greedy import lazy_greedy

__all__ = ["FacilitySelector", "RCDSelector"]

_BEST_SINGLETON = Boolean(
    fix="True keeps the best single unit when it beats the greedy set (the approximation bound)."
)
_WEIGHT = Interval(
    float,
    0,
    None,
    fix="use a finite weight >= 0 such as 0.25; a negative weight breaks monotone submodularity.",
)


@dataclass(frozen=True)
class FacilitySelector:
    """Maximises facility-location coverage ``sum_i max_{j in S} k(i, j)`` only.

    >>> FacilitySelector().name
    'facility'
    """

    best_singleton: bool = True

    _constraints: ClassVar[Mapping[str, Constraint]] = {"best_singleton": _BEST_SINGLETON}

    def __post_init__(self) -> None:
        validate_fields(self)

    @property
    def name(self) -> str:
        return "facility"

    def params(self) -> dict[str, Any]:
        return asdict(self)

    def objective(self, problem: SelectionProblem) -> Objective:
        return FacilityLocation(problem.features)

    def select(self, problem: SelectionProblem) -> Selection:
        return lazy_greedy(
            problem, lambda: self.objective(problem), best_singleton=self.best_singleton
        )


@dataclass(frozen=True)
class RCDSelector:
    """Relevance + Coverage + Diversity: ``alpha R + beta C + gamma log det(I + eta K_S)``.

    Each term is scaled so that its best single unit scores 1 (see :class:`RCDObjective`).
    Optimised by cost-scaled lazy greedy with a best-singleton check.

    Default weights were chosen on the *validation* splits of L-Eval, Cochrane and MTSamples
    (a 0.25-step simplex grid, budgets 256/512/1024, mean ROUGE-1 over dataset x budget
    cells; docs/results.md): alpha=0.25, beta=0.75, gamma=0 scored 0.2247, the paper-style
    mix 0.5/0.3/0.2 scored 0.2216, and the five best settings were within 0.0014. The
    log-det term did not help extractive ROUGE there; set gamma > 0 to use it.

    >>> RCDSelector(alpha=1.0, beta=0.0, gamma=0.0).params()["alpha"]
    1.0
    """

    alpha: float = 0.25
    beta: float = 0.75
    gamma: float = 0.0
    eta: float = 1.0
    best_singleton: bool = True

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "alpha": _WEIGHT,
        "beta": _WEIGHT,
        "gamma": _WEIGHT,
        "eta": Interval(
            float,
            0,
            None,
            closed="neither",
            fix="use a finite eta > 0 such as 1; it scales the kernel in log det(I + eta K).",
        ),
        "best_singleton": _BEST_SINGLETON,
    }

    def __post_init__(self) -> None:
        # Validate eagerly so that a bad weight fails at construction, not mid-sweep.
        validate_fields(self)

    @property
    def name(self) -> str:
        return "rcd"

    def params(self) -> dict[str, Any]:
        return asdict(self)

    def objective(self, problem: SelectionProblem) -> Objective:
        return RCDObjective(
            problem.features, alpha=self.alpha, beta=self.beta, gamma=self.gamma, eta=self.eta
        )

    def select(self, problem: SelectionProblem) -> Selection:
        return lazy_greedy(
            problem, lambda: self.objective(problem), best_singleton=self.best_singleton
        )
