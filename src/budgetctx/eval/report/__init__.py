"""Reports of a sweep: mean scores with bootstrap intervals, oracle bounds, the Pareto
frontier, the paper's tables (Markdown, CSV) and figures (PNG).

Typical use, on the folder a sweep wrote::

    from budgetctx.eval.report import write_report

    files = write_report("runs/cochrane", selectors_for_bounds=["lead", "mmr", "rcd"])
    files.report  # runs/cochrane/report/report.md, beside its tables and figures

The pieces (``summarize``, ``oracle_bounds``, ``pareto_frontier``, the table builders and
``plot_*``) work on rows and cells alone, for notebooks and for the router's own figures.
"""

from __future__ import annotations

from budgetctx.eval.report._bounds import Bound, oracle_bounds
from budgetctx.eval.report._cells import Cell, example_counts, summarize
from budgetctx.eval.report._figures import plot_bounds, plot_curves, plot_frontier
from budgetctx.eval.report._frontier import FrontierPoint, pareto_frontier
from budgetctx.eval.report._style import ORACLE, selector_colors
from budgetctx.eval.report._tables import (
    Interval,
    Table,
    bounds_table,
    frontier_table,
    read_cells_csv,
    selector_table,
    unitization_table,
    write_cells_csv,
)
from budgetctx.eval.report._write import ReportFiles, write_report

__all__ = [
    "ORACLE",
    "Bound",
    "Cell",
    "FrontierPoint",
    "Interval",
    "ReportFiles",
    "Table",
    "bounds_table",
    "example_counts",
    "frontier_table",
    "oracle_bounds",
    "pareto_frontier",
    "plot_bounds",
    "plot_curves",
    "plot_frontier",
    "read_cells_csv",
    "selector_colors",
    "selector_table",
    "summarize",
    "unitization_table",
    "write_cells_csv",
    "write_report",
]
