"""The Pareto frontier of cost and quality: at each budget, the best mean score over every
policy (unitizer x selector) of the run, and which policy reaches it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from budgetctx.eval.report._cells import Cell, sort_cells
from budgetctx.eval.report._style import ORACLE

__all__ = ["FrontierPoint", "pareto_frontier"]

# Means closer than this are one value (a tie), not a win by rounding noise.
_TIE = 1e-12


@dataclass(frozen=True)
class FrontierPoint:
    """The best policy of one dataset at one budget.

    ``ties`` names the other policies (``unitizer/selector``) with the same mean;
    ``monotone`` is False where the frontier is lower than at the next smaller budget (more
    tokens scored worse, e.g. ROUGE precision falling once the context outgrows the
    reference).

    >>> p = FrontierPoint("d", 512, "rouge1", 0.3, 0.28, 0.32, 20, "sentence", "mmr")
    >>> p.policy, p.monotone
    ('sentence/mmr', True)
    """

    dataset: str
    budget: int
    metric: str
    mean: float
    low: float
    high: float
    n: int
    unitizer: str
    selector: str
    ties: tuple[str, ...] = ()
    monotone: bool = True

    @property
    def policy(self) -> str:
        return f"{self.unitizer}/{self.selector}"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ties"] = list(self.ties)
        out["policy"] = self.policy
        return out


def pareto_frontier(cells: Iterable[Cell], *, metric: str = "rouge1") -> list[FrontierPoint]:
    """Per dataset and budget, the best mean ``metric`` over policies (the oracle excluded:
    it is a ceiling, not a policy).

    >>> from budgetctx.eval.report._cells import Cell
    >>> cells = [Cell("d", "sentence", s, b, "rouge1", m, m, m, 5)
    ...          for s, b, m in [("lead", 256, 0.3), ("mmr", 256, 0.2),
    ...                          ("lead", 512, 0.25), ("mmr", 512, 0.28)]]
    >>> [(p.budget, p.selector, p.mean, p.monotone) for p in pareto_frontier(cells)]
    [(256, 'lead', 0.3, True), (512, 'mmr', 0.28, False)]
    """
    groups: dict[tuple[str, int], list[Cell]] = {}
    # sort_cells puts candidates in the paper's order, so a tie goes to the first of them.
    for c in sort_cells(cells):
        if c.metric == metric and c.selector != ORACLE:
            groups.setdefault((c.dataset, c.budget), []).append(c)
    out: list[FrontierPoint] = []
    previous: dict[str, float] = {}
    for dataset, budget in sorted(groups):
        candidates = groups[(dataset, budget)]
        top = max(c.mean for c in candidates)
        winners = [c for c in candidates if c.mean >= top - _TIE]
        best = winners[0]
        monotone = dataset not in previous or best.mean >= previous[dataset] - _TIE
        previous[dataset] = best.mean
        out.append(
            FrontierPoint(
                dataset=dataset,
                budget=budget,
                metric=metric,
                mean=best.mean,
                low=best.low,
                high=best.high,
                n=best.n,
                unitizer=best.unitizer,
                selector=best.selector,
                ties=tuple(c.policy for c in winners[1:]),
                monotone=monotone,
            )
        )
    return out
