"""Oracle bounds: how well could one pick among the selectors, per budget and per example.

Per budget, the best and worst selector means are what a fixed choice of selector can get;
per instance, picking the best (worst) selector for each example separately is the ceiling
(floor) of any router over those selectors. The extractive oracle, built from the reference,
is the ceiling of selection itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from budgetctx._errors import InvalidParameterError
from budgetctx.eval._store import SweepRow
from budgetctx.eval.report._cells import check_metric, filter_rows, score
from budgetctx.eval.report._style import ORACLE, selector_sort_key, unitizer_sort_key

__all__ = ["Bound", "oracle_bounds"]


@dataclass(frozen=True)
class Bound:
    """Bounds of one (dataset, unitizer, budget) over ``selectors``.

    ``upper``/``lower`` are the best/worst selector means over all their rows (they equal
    the best and worst of the summary table's column); ``instance_upper``/``instance_lower``
    average, over the ``n`` examples scored by every selector, the best/worst selector's score
    on each example (``excluded`` examples lacked some selector's row); ``oracle`` is the mean
    of the extractive oracle's ``oracle_n`` rows, None when the run has none.

    >>> b = Bound("d", "sentence", 256, "rouge1", ("lead", "mmr"), 0.3, "mmr", 0.2, "lead",
    ...           0.35, 0.15, 2, 0, 0.5, 2)
    >>> b.to_dict()["instance_upper"]
    0.35
    """

    dataset: str
    unitizer: str
    budget: int
    metric: str
    selectors: tuple[str, ...]
    upper: float
    upper_selector: str
    lower: float
    lower_selector: str
    instance_upper: float | None
    instance_lower: float | None
    n: int
    excluded: int
    oracle: float | None
    oracle_n: int

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["selectors"] = list(self.selectors)
        return out


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def oracle_bounds(
    rows: Iterable[SweepRow],
    *,
    metric: str = "rouge1",
    split: str | None = None,
    unitizer: str | None = None,
    selectors: Sequence[str] | None = None,
) -> list[Bound]:
    """Per-budget and per-instance bounds per (dataset, unitizer, budget).

    ``selectors`` restricts the policies bounded over (the paper's Fig. 6 uses
    ``("lead", "mmr", "rcd")``); None takes every selector except the oracle.

    >>> from budgetctx.eval._store import SweepRow
    >>> def row(e, s, v):
    ...     return SweepRow("d", e, "sentence", s, 256, "test", 1, 1, 1, (), {"rouge1": v})
    >>> rows = [row("a", "lead", 0.4), row("a", "mmr", 0.1),
    ...         row("b", "lead", 0.2), row("b", "mmr", 0.3)]
    >>> b = oracle_bounds(rows)[0]
    >>> b.upper_selector, b.lower_selector, b.n, b.excluded
    ('lead', 'mmr', 2, 0)
    >>> [round(x, 6) for x in (b.upper, b.lower, b.instance_upper, b.instance_lower)]
    [0.3, 0.2, 0.35, 0.15]
    """
    kept = filter_rows(rows, split=split, unitizer=unitizer)
    check_metric(kept, metric)
    wanted = _check_selectors(kept, selectors)

    # (dataset, unitizer, budget) -> selector -> example -> score
    table: dict[tuple[str, str, int], dict[str, dict[str, float]]] = {}
    oracle: dict[tuple[str, str, int], list[float]] = {}
    for r in kept:
        value = score(r, metric)
        if value is None:
            continue
        key = (r.dataset, r.unitizer, r.budget)
        if r.selector == ORACLE:
            oracle.setdefault(key, []).append(value)
        elif wanted is None or r.selector in wanted:
            table.setdefault(key, {}).setdefault(r.selector, {})[r.example_id] = value

    out = []
    for key in sorted(table, key=lambda k: (k[0], unitizer_sort_key(k[1]), k[2])):
        by_selector = table[key]
        names = sorted(by_selector, key=selector_sort_key)
        means = {s: _mean(list(by_selector[s].values())) for s in names}
        # max/min keep the first in the paper's order on a tie.
        best = max(names, key=lambda s: means[s])
        worst = min(names, key=lambda s: means[s])
        # An example counts per instance only when every bounded selector scored it: a missing
        # row would otherwise make its best (worst) look better (worse) than it is.
        required = list(wanted) if wanted is not None else names
        examples = set().union(*(by_selector[s] for s in names))
        complete = sorted(e for e in examples if all(e in by_selector.get(s, {}) for s in required))
        per_example = [[by_selector[s][e] for s in required] for e in complete]
        ora = oracle.get(key, [])
        out.append(
            Bound(
                dataset=key[0],
                unitizer=key[1],
                budget=key[2],
                metric=metric,
                selectors=tuple(names),
                upper=means[best],
                upper_selector=best,
                lower=means[worst],
                lower_selector=worst,
                instance_upper=_mean([max(v) for v in per_example]) if per_example else None,
                instance_lower=_mean([min(v) for v in per_example]) if per_example else None,
                n=len(complete),
                excluded=len(examples) - len(complete),
                oracle=_mean(ora) if ora else None,
                oracle_n=len(ora),
            )
        )
    return out


def _check_selectors(
    rows: Sequence[SweepRow], selectors: Sequence[str] | None
) -> tuple[str, ...] | None:
    if selectors is None:
        return None
    if isinstance(selectors, str):
        selectors = [s.strip() for s in selectors.split(",") if s.strip()]
    present = sorted({r.selector for r in rows} - {ORACLE}, key=selector_sort_key)
    if ORACLE in selectors:
        raise InvalidParameterError(
            "The oracle is the ceiling the bounds are compared with, not a policy to bound "
            f"over; leave it out of selectors (e.g. {present}).",
            parameter="selectors",
            value=list(selectors),
        )
    unknown = [s for s in selectors if s not in present]
    if unknown or not selectors:
        raise InvalidParameterError(
            f"No rows for selectors {unknown or list(selectors)}; use some of {present}.",
            parameter="selectors",
            value=list(selectors),
        )
    return tuple(dict.fromkeys(selectors))
