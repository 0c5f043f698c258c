"""Tables of a report as data (:class:`Table`), rendered to GitHub Markdown and to CSV.

A table keeps the raw values; formatting (3 decimals, bold best, ``±`` half-widths) happens
only in :meth:`Table.to_markdown`, so the CSV carries full precision and joins with the
cells file on the raw selector and unitizer labels.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from budgetctx._errors import InvalidParameterError
from budgetctx.eval.report._bounds import Bound
from budgetctx.eval.report._cells import Cell, sort_cells
from budgetctx.eval.report._frontier import FrontierPoint
from budgetctx.eval.report._style import (
    ORACLE,
    default_unitizer,
    metric_name,
    selector_name,
    unitizer_name,
)

__all__ = [
    "Interval",
    "Table",
    "bounds_table",
    "frontier_table",
    "read_cells_csv",
    "selector_table",
    "unitization_table",
    "write_cells_csv",
]

Value = str | int | float | None
#: How a table shows a confidence interval beside a mean: not at all, ``0.242 ± 0.012`` or
#: ``0.242 [0.230, 0.254]``.
Interval = Literal["none", "halfwidth", "range"]
_INTERVALS = ("none", "halfwidth", "range")
_MISSING = "–"  # an en dash: a cell with no rows, as in printed tables

_CELL_FIELDS = (
    "dataset",
    "unitizer",
    "selector",
    "budget",
    "metric",
    "mean",
    "low",
    "high",
    "n",
    "confidence",
)


@dataclass(frozen=True)
class Table:
    """Rows of values under ``columns``; ``bold`` holds ``(row, column)`` positions and
    ``intervals`` maps a position to its ``(low, high)``.

    The first ``group_columns`` columns are row labels: Markdown prints a label only where it
    changes (``dataset`` then its selectors, as the paper's Table A1) and ``display`` renames
    raw labels (``mmr`` -> ``MMR``); the CSV repeats every label, raw.

    >>> t = Table("T", ("dataset", "selector", "256"),
    ...           (("d", "lead", 0.25), ("d", "mmr", 0.25)), bold=frozenset({(0, 2), (1, 2)}),
    ...           group_columns=2)
    >>> print(t.to_markdown(title=False), end="")
    | dataset | selector |       256 |
    |:--------|:---------|----------:|
    | d       | lead     | **0.250** |
    |         | mmr      | **0.250** |
    """

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Value, ...], ...]
    bold: frozenset[tuple[int, int]] = frozenset()
    intervals: Mapping[tuple[int, int], tuple[float, float]] = field(default_factory=dict)
    interval: Interval = "none"
    decimals: int = 3
    group_columns: int = 0
    display: Mapping[str, str] = field(default_factory=dict)
    caption: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "columns": list(self.columns),
            "rows": [list(r) for r in self.rows],
            "bold": sorted([list(p) for p in self.bold]),
            "intervals": [[r, c, lo, hi] for (r, c), (lo, hi) in sorted(self.intervals.items())],
            "caption": self.caption,
        }

    # -- Markdown -----------------------------------------------------------------------------

    def _format(self, r: int, c: int, value: Value) -> str:
        if value is None:
            return _MISSING
        if isinstance(value, bool) or not isinstance(value, float):
            text = str(value)
            if isinstance(value, str):
                text = self.display.get(text, text)
            # A pipe would end the Markdown cell, a newline the row.
            return text.replace("|", "\\|").replace("\n", " ")
        text = f"{value:.{self.decimals}f}"
        if (r, c) in self.bold:
            text = f"**{text}**"
        span = self.intervals.get((r, c))
        if span is not None and self.interval == "halfwidth":
            text += f" ± {(span[1] - span[0]) / 2:.{self.decimals}f}"
        elif span is not None and self.interval == "range":
            text += f" [{span[0]:.{self.decimals}f}, {span[1]:.{self.decimals}f}]"
        return text

    def to_markdown(self, *, title: bool = True) -> str:
        """GitHub Markdown: numbers right-aligned to ``decimals``, labels left-aligned, cells
        padded so that the source reads as a table too."""
        numeric = [
            any(
                isinstance(row[c], int | float) and not isinstance(row[c], bool)
                for row in self.rows
            )
            and c >= self.group_columns
            for c in range(len(self.columns))
        ]
        body: list[list[str]] = []
        previous: tuple[Value, ...] | None = None
        for r, row in enumerate(self.rows):
            texts = [self._format(r, c, v) for c, v in enumerate(row)]
            # Print a group label only where it (or a label left of it) changes.
            for c in range(self.group_columns):
                if previous is not None and row[: c + 1] == previous[: c + 1]:
                    texts[c] = ""
            previous = row
            body.append(texts)
        header = [h.replace("|", "\\|") for h in self.columns]
        widths = [max([len(header[c]), 3, *(len(t[c]) for t in body)]) for c in range(len(header))]

        def line(cells: Sequence[str]) -> str:
            padded = [
                cell.rjust(widths[c]) if numeric[c] else cell.ljust(widths[c])
                for c, cell in enumerate(cells)
            ]
            return "| " + " | ".join(padded) + " |"

        rule = (
            "|"
            + "|".join(
                ("-" * (widths[c] + 1) + ":") if numeric[c] else (":" + "-" * (widths[c] + 1))
                for c in range(len(header))
            )
            + "|"
        )
        lines = [line(header), rule, *(line(t) for t in body)]
        parts = []
        if title:
            parts.append(f"**{self.title}**\n")
        parts.append("\n".join(lines))
        if title and self.caption:
            parts.append(f"\n{self.caption}")
        return "\n".join(parts) + "\n"

    # -- CSV ----------------------------------------------------------------------------------

    def to_csv(self) -> str:
        """Full-precision values; a column with intervals gets ``<column> low`` and
        ``<column> high`` beside it."""
        with_span = sorted({c for _, c in self.intervals})
        header: list[str] = []
        for c, name in enumerate(self.columns):
            header.append(name)
            if c in with_span:
                header += [f"{name} low", f"{name} high"]
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(header)
        for r, row in enumerate(self.rows):
            out: list[str] = []
            for c, value in enumerate(row):
                out.append(_csv_value(value))
                if c in with_span:
                    span = self.intervals.get((r, c))
                    out += [_csv_value(span[0]), _csv_value(span[1])] if span else ["", ""]
            writer.writerow(out)
        return buf.getvalue()


def _csv_value(value: Value) -> str:
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def _check_table_options(interval: str, decimals: int) -> None:
    if interval not in _INTERVALS:
        raise InvalidParameterError(
            f"interval must be one of {list(_INTERVALS)}, got {interval!r}; "
            "e.g. interval='halfwidth' for '0.242 ± 0.012'.",
            parameter="interval",
            value=interval,
        )
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= 10:
        raise InvalidParameterError(
            f"decimals must be an integer in [0, 10], got {decimals!r}; e.g. 3.",
            parameter="decimals",
            value=decimals,
        )


def _bold_best(
    rows: Sequence[tuple[Value, ...]],
    *,
    groups: Sequence[Any],
    columns: range,
    eligible: Sequence[bool],
    decimals: int,
) -> frozenset[tuple[int, int]]:
    """Positions of the best value of each column within each group. Ties are judged on the
    printed value, so that equal-looking numbers are all bold (as 0.249 on Cochrane in the
    paper's Table A1)."""
    bold: set[tuple[int, int]] = set()
    for group in dict.fromkeys(groups):
        members = [i for i, g in enumerate(groups) if g == group and eligible[i]]
        for c in columns:
            shown = {
                i: round(float(v), decimals) for i in members if isinstance(v := rows[i][c], float)
            }
            if shown:
                top = max(shown.values())
                bold.update((i, c) for i, v in shown.items() if v == top)
    return frozenset(bold)


def _grid(
    cells: Sequence[Cell],
    labels: Sequence[str],
    interval: Interval,
    decimals: int,
    title: str,
    caption: str,
) -> Table:
    """Rows keyed by the ``labels`` fields of the cells, one column per budget; the best
    non-oracle mean per dataset and budget in bold."""
    budgets = sorted({c.budget for c in cells})
    keys: dict[tuple[str, ...], dict[int, Cell]] = {}
    for c in sort_cells(cells):
        keys.setdefault(tuple(str(getattr(c, f)) for f in labels), {})[c.budget] = c
    rows: list[tuple[Value, ...]] = []
    spans: dict[tuple[int, int], tuple[float, float]] = {}
    for r, (key, by_budget) in enumerate(keys.items()):
        values: list[Value] = list(key)
        for j, b in enumerate(budgets):
            cell = by_budget.get(b)
            values.append(cell.mean if cell else None)
            if cell is not None:
                spans[(r, len(key) + j)] = (cell.low, cell.high)
        rows.append(tuple(values))
    selector_at = labels.index("selector")
    bold = _bold_best(
        rows,
        groups=[row[0] for row in rows],  # the dataset
        columns=range(len(labels), len(labels) + len(budgets)),
        eligible=[row[selector_at] != ORACLE for row in rows],
        decimals=decimals,
    )
    display = {c.selector: selector_name(c.selector) for c in cells}
    display.update({c.unitizer: unitizer_name(c.unitizer) for c in cells})
    return Table(
        title=title,
        columns=(*labels, *(str(b) for b in budgets)),
        rows=tuple(rows),
        bold=bold,
        intervals=spans if interval != "none" else {},
        interval=interval,
        decimals=decimals,
        group_columns=len(labels),
        display=display,
        caption=caption,
    )


def _caption(cells: Sequence[Cell], interval: Interval) -> str:
    parts = ["Best per dataset and budget in bold (ties, at the printed precision, all bold)."]
    if any(c.selector == ORACLE for c in cells):
        parts.append("Oracle: the extractive ceiling, never bold.")
    if interval != "none" and cells:
        what = "± half-width of" if interval == "halfwidth" else "[low, high]:"
        parts.append(f"{what} the {cells[0].confidence:.0%} bootstrap interval over examples.")
    return " ".join(parts)


def selector_table(
    cells: Iterable[Cell],
    *,
    metric: str = "rouge1",
    unitizer: str | None = None,
    interval: Interval = "none",
    decimals: int = 3,
) -> Table:
    """The paper's Table A1: rows dataset -> selector, a column per budget, the mean
    ``metric`` of one unitization (default ``sentence``), the best of each column in bold.

    >>> from budgetctx.eval.report._cells import Cell
    >>> cells = [Cell("d", "sentence", s, 256, "rouge1", m, m, m, 9)
    ...          for s, m in [("lead", 0.2421), ("mmr", 0.1411)]]
    >>> print(selector_table(cells).to_markdown(title=False), end="")
    | dataset | selector |       256 |
    |:--------|:---------|----------:|
    | d       | Lead     | **0.242** |
    |         | MMR      |     0.141 |
    """
    _check_table_options(interval, decimals)
    chosen = [c for c in cells if c.metric == metric]
    unit = unitizer if unitizer is not None else default_unitizer(c.unitizer for c in chosen)
    chosen = [c for c in chosen if c.unitizer == unit]
    title = (
        f"Mean {metric_name(metric)} across {unitizer_name(unit or '').lower()}-level "
        "selection policies"
    )
    return _grid(
        chosen, ("dataset", "selector"), interval, decimals, title, _caption(chosen, interval)
    )


def unitization_table(
    cells: Iterable[Cell],
    *,
    metric: str = "rouge1",
    interval: Interval = "none",
    decimals: int = 3,
) -> Table:
    """The unitization study (the paper's Table A2 layout): rows dataset -> unitizer ->
    selector, a column per budget, the best per dataset and budget in bold.

    >>> from budgetctx.eval.report._cells import Cell
    >>> cells = [Cell("d", u, "lead", 256, "rouge1", m, m, m, 9)
    ...          for u, m in [("sentence", 0.25), ("window", 0.24)]]
    >>> unitization_table(cells).rows
    (('d', 'sentence', 'lead', 0.25), ('d', 'window', 'lead', 0.24))
    """
    _check_table_options(interval, decimals)
    chosen = [c for c in cells if c.metric == metric]
    title = f"Mean {metric_name(metric)} by unitization and selector"
    return _grid(
        chosen,
        ("dataset", "unitizer", "selector"),
        interval,
        decimals,
        title,
        _caption(chosen, interval),
    )


def bounds_table(bounds: Iterable[Bound], *, decimals: int = 3) -> Table:
    """Oracle bounds: a row per (dataset, unitizer, budget).

    >>> from budgetctx.eval.report._bounds import Bound
    >>> b = Bound("d", "sentence", 256, "rouge1", ("lead", "mmr"), 0.3, "mmr", 0.2, "lead",
    ...           0.35, 0.15, 2, 0, 0.5, 2)
    >>> bounds_table([b]).rows[0][:6]
    ('d', 'sentence', 256, 0.2, 'lead', 0.3)
    """
    _check_table_options("none", decimals)
    items = list(bounds)
    rows = tuple(
        (
            b.dataset,
            b.unitizer,
            b.budget,
            b.lower,
            b.lower_selector,
            b.upper,
            b.upper_selector,
            b.instance_lower,
            b.instance_upper,
            b.oracle,
            b.n,
            b.excluded,
        )
        for b in items
    )
    metric = items[0].metric if items else ""
    over = sorted({s for b in items for s in b.selectors})
    display = {s: selector_name(s) for b in items for s in (b.lower_selector, b.upper_selector)}
    display.update({b.unitizer: unitizer_name(b.unitizer) for b in items})
    return Table(
        title=f"Oracle bounds on {metric_name(metric)}",
        columns=(
            "dataset",
            "unitizer",
            "budget",
            "lower",
            "worst",
            "upper",
            "best",
            "per-instance lower",
            "per-instance upper",
            "extractive oracle",
            "n",
            "excluded",
        ),
        rows=rows,
        decimals=decimals,
        group_columns=2,
        display=display,
        caption=(
            f"Over {', '.join(selector_name(s) for s in over)}. lower/upper: worst/best "
            "selector mean (a fixed choice of selector); per-instance: the mean over examples "
            "of the worst/best selector for each example (the floor/ceiling of any router), "
            "over the n examples scored by every selector (excluded: examples missing a "
            "selector's row). Extractive oracle: greedy ROUGE-optimal selection under the same "
            "budget."
        ),
    )


def frontier_table(points: Iterable[FrontierPoint], *, decimals: int = 3) -> Table:
    """The Pareto frontier: per dataset and budget the best mean and the policy reaching it.

    >>> from budgetctx.eval.report._frontier import FrontierPoint
    >>> p = FrontierPoint("d", 512, "rouge1", 0.3, 0.28, 0.32, 20, "sentence", "mmr")
    >>> frontier_table([p]).rows
    (('d', 512, 0.3, 'sentence/mmr', '', ''),)
    """
    _check_table_options("none", decimals)
    items = list(points)
    rows = tuple(
        (
            p.dataset,
            p.budget,
            p.mean,
            p.policy,
            ", ".join(p.ties),
            "" if p.monotone else "below a smaller budget",
        )
        for p in items
    )
    metric = items[0].metric if items else ""
    return Table(
        title=f"Pareto frontier of {metric_name(metric)}",
        columns=("dataset", "budget", "best", "policy", "tied with", "not monotone"),
        rows=rows,
        decimals=decimals,
        group_columns=1,
        caption="best: the highest mean over every unitizer/selector policy at that budget "
        "(the oracle excluded).",
    )


def write_cells_csv(cells: Iterable[Cell], path: str | Path) -> Path:
    """Every cell, one per line, at full precision (``read_cells_csv`` reads it back)."""
    path = Path(path)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(_CELL_FIELDS)
        for c in cells:
            writer.writerow([_csv_value(getattr(c, f)) for f in _CELL_FIELDS])
    return path


def read_cells_csv(path: str | Path) -> list[Cell]:
    """The cells written by :func:`write_cells_csv`, equal to the ones written."""
    with Path(path).open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = set(_CELL_FIELDS) - set(reader.fieldnames or ())
        if missing:
            raise InvalidParameterError(
                f"{path} lacks the columns {sorted(missing)}; read a cells.csv written by "
                "write_cells_csv.",
                parameter="path",
                value=str(path),
            )
        return [
            Cell(
                dataset=rec["dataset"],
                unitizer=rec["unitizer"],
                selector=rec["selector"],
                budget=int(rec["budget"]),
                metric=rec["metric"],
                mean=float(rec["mean"]),
                low=float(rec["low"]),
                high=float(rec["high"]),
                n=int(rec["n"]),
                confidence=float(rec["confidence"]),
            )
            for rec in reader
        ]
