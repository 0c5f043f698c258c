"""Mean score per (dataset, unitizer, selector, budget), with a bootstrap interval over
examples: the numbers every table and figure of a report is drawn from."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from budgetctx._errors import InvalidParameterError
from budgetctx.eval._store import SweepRow
from budgetctx.eval.report._ci import interval
from budgetctx.eval.report._style import selector_sort_key, unitizer_sort_key

__all__ = ["Cell", "example_counts", "summarize"]


@dataclass(frozen=True)
class Cell:
    """The mean of ``metric`` over the ``n`` examples of one (dataset, unitizer, selector,
    budget), with a bootstrap interval ``[low, high]`` at ``confidence``.

    >>> c = Cell("mimic", "sentence", "lead", 256, "rouge1", 0.24, 0.22, 0.26, 100)
    >>> c.policy, round(c.half_width, 3)
    ('sentence/lead', 0.02)
    """

    dataset: str
    unitizer: str
    selector: str
    budget: int
    metric: str
    mean: float
    low: float
    high: float
    n: int
    confidence: float = 0.95

    @property
    def policy(self) -> str:
        """``unitizer/selector``: what a router chooses between."""
        return f"{self.unitizer}/{self.selector}"

    @property
    def half_width(self) -> float:
        """Half the interval's width (the ``±`` of a table; the interval may be skewed)."""
        return (self.high - self.low) / 2.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise InvalidParameterError(
            f"confidence must be in (0, 1), got {confidence!r}; e.g. 0.95.",
            parameter="confidence",
            value=confidence,
        )


def filter_rows(
    rows: Iterable[SweepRow], *, split: str | None, unitizer: str | None
) -> list[SweepRow]:
    return [
        r
        for r in rows
        if (split is None or r.split == split) and (unitizer is None or r.unitizer == unitizer)
    ]


def check_metric(rows: Sequence[SweepRow], metric: str) -> None:
    """Fail with the metrics that exist when no row has ``metric`` (a typo, or an old run)."""
    if not rows or any(metric in r.metrics for r in rows):
        return
    available = sorted({m for r in rows for m in r.metrics})
    raise InvalidParameterError(
        f"No row has the metric {metric!r}; use one of {available}.",
        parameter="metric",
        value=metric,
    )


def score(row: SweepRow, metric: str) -> float | None:
    """The row's value of ``metric``, or None when absent or not a number (left out)."""
    value = row.metrics.get(metric)
    if value is None or not math.isfinite(float(value)):
        return None
    return float(value)


def summarize(
    rows: Iterable[SweepRow],
    *,
    metric: str = "rouge1",
    split: str | None = None,
    unitizer: str | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[Cell]:
    """Mean ``metric`` per (dataset, unitizer, selector, budget) with a bootstrap interval.

    ``split`` and ``unitizer`` keep only those rows (None: all, splits pooled). Rows without
    the metric are left out of their cell's ``n``. Cells come in the paper's order: dataset,
    unitizer, selector (oracle last), budget.

    >>> from budgetctx.eval._store import SweepRow
    >>> rows = [SweepRow("d", str(i), "sentence", "lead", 256, "test", 1, 1, 1, (),
    ...                  {"rouge1": v}) for i, v in enumerate([0.2, 0.4])]
    >>> [(c.selector, c.budget, round(c.mean, 3), c.n) for c in summarize(rows)]
    [('lead', 256, 0.3, 2)]
    """
    check_confidence(confidence)
    kept = filter_rows(rows, split=split, unitizer=unitizer)
    check_metric(kept, metric)
    groups: dict[tuple[str, str, str, int], list[float]] = {}
    for r in kept:
        value = score(r, metric)
        if value is not None:
            groups.setdefault((r.dataset, r.unitizer, r.selector, r.budget), []).append(value)
    cells = []
    for (dataset, unit, selector, budget), values in groups.items():
        _, low, high = interval(values, confidence=confidence, seed=seed)
        # The plain mean (fsum: exact to the last bit), whatever point estimate the
        # bootstrap reports.
        mean = math.fsum(values) / len(values)
        cells.append(
            Cell(dataset, unit, selector, budget, metric, mean, low, high, len(values), confidence)
        )
    return sort_cells(cells)


def sort_cells(cells: Iterable[Cell]) -> list[Cell]:
    return sorted(
        cells,
        key=lambda c: (
            c.dataset,
            unitizer_sort_key(c.unitizer),
            selector_sort_key(c.selector),
            c.budget,
            c.metric,
        ),
    )


def example_counts(rows: Iterable[SweepRow]) -> dict[tuple[str, str], int]:
    """Distinct examples per (dataset, split).

    >>> from budgetctx.eval._store import SweepRow
    >>> rows = [SweepRow("d", e, "sentence", s, 256, "test", 1, 1, 1, (), {})
    ...         for e in "ab" for s in ("lead", "mmr")]
    >>> example_counts(rows)
    {('d', 'test'): 2}
    """
    seen: dict[tuple[str, str], set[str]] = {}
    for r in rows:
        seen.setdefault((r.dataset, r.split), set()).add(r.example_id)
    return {key: len(ids) for key, ids in sorted(seen.items())}
