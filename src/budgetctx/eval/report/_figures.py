"""The report's figures (the paper's Figs. 3-6) as PNG files.

Figures are drawn on :class:`matplotlib.figure.Figure` objects with the Agg canvas, never
through pyplot: no display, no global figure state, safe in a worker or a server.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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
    selector_colors,
    selector_markers,
    selector_name,
    selector_sort_key,
    unitizer_name,
    unitizer_sort_key,
)

__all__ = ["plot_bounds", "plot_curves", "plot_frontier"]

# Datasets in one figure (the frontier) are told apart by line style and a name at the line's
# end, so that colour stays the selector's.
_DATASET_STYLES: tuple[Literal["-", "--", "-.", ":"], ...] = ("-", "--", "-.", ":")
_UNIT_MARKERS = ("o", "s", "^", "D", "v", "P")
_EXTRA_COLORS = ("#e7298a", "#1b9e77", "#7570b3", "#d95f02")
_PANEL_W, _PANEL_H, _LEGEND_W = 4.0, 3.4, 1.9


def _figure(n_panels: int, *, panel_width: float = _PANEL_W) -> tuple[Any, list[Any]]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    # Every figure has its legend outside the panels, on the right.
    width = panel_width * n_panels + _LEGEND_W
    fig = Figure(figsize=(width, _PANEL_H), layout="constrained")
    FigureCanvasAgg(fig)
    axes = list(fig.subplots(1, n_panels, squeeze=False)[0])
    return fig, axes


def _budget_axis(ax: Any, budgets: Sequence[int]) -> None:
    """log2 x axis with a labelled tick at each budget (and no minor ticks between)."""
    from matplotlib.ticker import NullLocator

    ax.set_xscale("log", base=2)
    ax.set_xticks(list(budgets), labels=[str(b) for b in budgets])
    ax.xaxis.set_minor_locator(NullLocator())
    if len(budgets) == 1:
        ax.set_xlim(budgets[0] / 1.5, budgets[0] * 1.5)
    ax.set_xlabel("token budget")
    ax.grid(True, alpha=0.3, linewidth=0.6)


def _legend(fig: Any, axes: Sequence[Any]) -> None:
    """One legend for every panel, outside them on the right, so it never covers a line."""
    handles: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    if handles:
        fig.legend(
            list(handles.values()),
            list(handles),
            loc="outside right center",
            fontsize="small",
            frameon=False,
        )


def _save(fig: Any, path: str | Path, dpi: int) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, format="png")
    return path


def _datasets(items: Iterable[Any]) -> list[str]:
    return sorted({item.dataset for item in items})


def _short(dataset: str) -> str:
    """A file dataset's label without its folder and column mapping (``jsonl:notes.jsonl``):
    the full spec would squeeze the plot to nothing."""
    kind, sep, rest = dataset.partition(":")
    if sep and kind in ("jsonl", "csv", "mimic-bhc"):
        return f"{kind}:{Path(rest.partition('?')[0]).name}"
    return dataset


def _nothing_to_plot(what: str) -> InvalidParameterError:
    return InvalidParameterError(
        f"Nothing to plot: no {what}; pass the output of summarize() on a run with rows.",
        parameter=what,
        value=[],
    )


def plot_curves(
    cells: Iterable[Cell],
    path: str | Path,
    *,
    metric: str = "rouge1",
    unitizer: str | None = None,
    colors: Mapping[str, str] | None = None,
    title: str | None = None,
    dpi: int = 150,
) -> Path:
    """``metric`` against budget, a panel per dataset (the paper's Figs. 3 and 4): a line per
    selector with its confidence band shaded, the extractive oracle dashed black.

    ``colors`` maps selector labels to colours; pass one mapping to every figure of a report
    (default: :func:`selector_colors` of the selectors here).

    >>> import tempfile, pathlib
    >>> from budgetctx.eval.report._cells import Cell
    >>> cells = [Cell("d", "sentence", s, b, "rouge1", m, m - .01, m + .01, 5)
    ...          for s, m in [("lead", .3), ("oracle", .5)] for b in (256, 512)]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> plot_curves(cells, pathlib.Path(tmp.name) / "curves.png").name
    'curves.png'
    >>> tmp.cleanup()
    """
    chosen = [c for c in cells if c.metric == metric]
    unit = unitizer if unitizer is not None else default_unitizer(c.unitizer for c in chosen)
    chosen = sort_cells(c for c in chosen if c.unitizer == unit)
    if not chosen:
        raise _nothing_to_plot("cells")
    datasets = _datasets(chosen)
    palette = dict(colors) if colors is not None else selector_colors(c.selector for c in chosen)
    markers = selector_markers(c.selector for c in chosen)
    fig, axes = _figure(len(datasets))
    for ax, dataset in zip(axes, datasets, strict=True):
        mine = [c for c in chosen if c.dataset == dataset]
        budgets = sorted({c.budget for c in mine})
        for selector in dict.fromkeys(c.selector for c in mine):
            line = sorted((c for c in mine if c.selector == selector), key=lambda c: c.budget)
            xs = [c.budget for c in line]
            oracle = selector == ORACLE
            color = "black" if oracle else palette.get(selector, "grey")
            ax.plot(
                xs,
                [c.mean for c in line],
                color=color,
                linestyle="--" if oracle else "-",
                marker=None if oracle else markers[selector],
                markersize=4,
                linewidth=1.5,
                label="Oracle (extractive)" if oracle else selector_name(selector),
                zorder=3,
            )
            ax.fill_between(
                xs,
                [c.low for c in line],
                [c.high for c in line],
                color=color,
                alpha=0.08 if oracle else 0.10,
                linewidth=0,
                zorder=2,
            )
        _budget_axis(ax, budgets)
        ax.set_ylabel(metric_name(metric))
        ax.set_title(f"{_short(dataset)} (n={max(c.n for c in mine)})")
    fig.suptitle(
        title
        or f"{metric_name(metric)} vs token budget "
        f"({unitizer_name(unit or '').lower()} units; shaded: "
        f"{chosen[0].confidence:.0%} bootstrap CI)"
    )
    _legend(fig, axes)
    return _save(fig, path, dpi)


def plot_frontier(
    points: Iterable[FrontierPoint],
    path: str | Path,
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = None,
    dpi: int = 150,
) -> Path:
    """The best score at each budget (the paper's Fig. 5, its "Pareto frontier"): a line per
    dataset through the best mean over policies at each budget. Each point is filled with the
    colour of the selector that reaches it (the colours of the curves) and shaped by its
    unitizer; a black ring marks a budget scoring below a smaller one.

    >>> import tempfile, pathlib
    >>> from budgetctx.eval.report._frontier import FrontierPoint
    >>> pts = [FrontierPoint("d", b, "rouge1", m, m, m, 5, "sentence", "lead")
    ...        for b, m in [(256, .3), (512, .35)]]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> plot_frontier(pts, pathlib.Path(tmp.name) / "frontier.png").name
    'frontier.png'
    >>> tmp.cleanup()
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    items = list(points)
    if not items:
        raise _nothing_to_plot("points")
    metric = items[0].metric
    selectors = sorted({p.selector for p in items}, key=selector_sort_key)
    palette = dict(colors) if colors is not None else selector_colors(selectors)
    units = sorted({p.unitizer for p in items}, key=unitizer_sort_key)
    shapes = {u: _UNIT_MARKERS[i % len(_UNIT_MARKERS)] for i, u in enumerate(units)}
    budgets = sorted({p.budget for p in items})
    fig, axes = _figure(1, panel_width=5.2)
    ax = axes[0]
    handles: list[Any] = []
    for i, dataset in enumerate(_datasets(items)):
        line = sorted((p for p in items if p.dataset == dataset), key=lambda p: p.budget)
        style = _DATASET_STYLES[i % len(_DATASET_STYLES)]
        ax.plot(
            [p.budget for p in line],
            [p.mean for p in line],
            color="#333333",
            linestyle=style,
            linewidth=1.4,
            zorder=2,
        )
        ax.annotate(
            _short(dataset),
            (line[-1].budget, line[-1].mean),
            textcoords="offset points",
            xytext=(12, 0),
            va="center",
            fontsize=8,
            color="#333333",
        )
        handles.append(Line2D([], [], color="#333333", linestyle=style, label=_short(dataset)))
        for p in line:
            ax.plot(
                [p.budget],
                [p.mean],
                marker=shapes[p.unitizer],
                markersize=8,
                markerfacecolor=palette.get(p.selector, "grey"),
                markeredgecolor="black",
                markeredgewidth=0.6,
                linestyle="none",
                zorder=3,
            )
            if not p.monotone:
                ax.plot(
                    [p.budget],
                    [p.mean],
                    marker="o",
                    markersize=15,
                    markerfacecolor="none",
                    markeredgecolor="black",
                    markeredgewidth=1.0,
                    linestyle="none",
                    zorder=4,
                )
    handles += [
        Patch(
            facecolor=palette.get(s, "grey"),
            edgecolor="black",
            linewidth=0.6,
            label=selector_name(s),
        )
        for s in selectors
    ]
    if len(units) > 1:
        handles += [
            Line2D(
                [],
                [],
                marker=shapes[u],
                markersize=8,
                linestyle="none",
                color="white",
                markeredgecolor="black",
                label=f"{unitizer_name(u)} units",
            )
            for u in units
        ]
    if any(not p.monotone for p in items):
        handles.append(
            Line2D(
                [],
                [],
                marker="o",
                markersize=12,
                linestyle="none",
                markerfacecolor="none",
                markeredgecolor="black",
                label="ringed: scores below\na smaller budget",
            )
        )
    _budget_axis(ax, budgets)
    # Room on the right for the dataset names at the line ends.
    ax.set_xlim(budgets[0] / 1.25, budgets[-1] * (2.0 if len(budgets) > 1 else 3.0))
    ax.set_ylabel(f"best {metric_name(metric)}")
    # Not "Pareto frontier": on some datasets the best score falls as the budget grows, and
    # the figure shows that (the rings) rather than a frontier that only rises.
    ax.set_title(
        title or f"Best {metric_name(metric)} at each budget, over all policies",
        fontsize="medium",
    )
    fig.legend(handles=handles, loc="outside right center", fontsize="small", frameon=False)
    return _save(fig, path, dpi)


def plot_bounds(
    bounds: Iterable[Bound],
    path: str | Path,
    *,
    unitizer: str | None = None,
    extra: Mapping[str, Mapping[int, float]] | None = None,
    extra_label: str = "router",
    title: str | None = None,
    dpi: int = 150,
) -> Path:
    """Oracle bounds per dataset (the paper's Fig. 6): the band between the worst and best
    selector mean at each budget, the per-instance upper bound dotted, the extractive oracle
    dashed black.

    ``extra`` adds one more line, e.g. a router's mean scores: ``{dataset: {budget: score}}``,
    drawn solid and labelled ``extra_label``; datasets it does not name get no line.

    >>> import tempfile, pathlib
    >>> from budgetctx.eval.report._bounds import Bound
    >>> bs = [Bound("d", "sentence", b, "rouge1", ("lead", "mmr"), .3, "mmr", .2, "lead",
    ...             .35, .15, 2, 0, .5, 2) for b in (256, 512)]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> plot_bounds(bs, pathlib.Path(tmp.name) / "bounds.png",
    ...             extra={"d": {256: .28, 512: .31}}, extra_label="router").name
    'bounds.png'
    >>> tmp.cleanup()
    """
    items = list(bounds)
    unit = unitizer if unitizer is not None else default_unitizer(b.unitizer for b in items)
    items = [b for b in items if b.unitizer == unit]
    if not items:
        raise _nothing_to_plot("bounds")
    datasets = _datasets(items)
    unknown = sorted(set(extra or {}) - set(datasets))
    if unknown:
        raise InvalidParameterError(
            f"extra names datasets {unknown} that have no bounds; key it by dataset, one of "
            f"{datasets}.",
            parameter="extra",
            value=unknown,
        )
    fig, axes = _figure(len(datasets))
    for ax, dataset in zip(axes, datasets, strict=True):
        line = sorted((b for b in items if b.dataset == dataset), key=lambda b: b.budget)
        xs = [b.budget for b in line]
        ax.fill_between(
            xs,
            [b.lower for b in line],
            [b.upper for b in line],
            color="#4c72b0",
            alpha=0.22,
            linewidth=0,
            label="worst–best selector mean",
            zorder=2,
        )
        for edge in ([b.lower for b in line], [b.upper for b in line]):
            ax.plot(xs, edge, color="#4c72b0", linewidth=0.8, zorder=2)
        inst = [(b.budget, b.instance_upper) for b in line if b.instance_upper is not None]
        if inst:
            ax.plot(
                *zip(*inst, strict=True),
                color="#4c72b0",
                linestyle=":",
                linewidth=2.0,
                label="per-instance upper bound",
                zorder=3,
            )
        ora = [(b.budget, b.oracle) for b in line if b.oracle is not None]
        if ora:
            ax.plot(
                *zip(*ora, strict=True),
                color="black",
                linestyle="--",
                linewidth=1.5,
                label="Oracle (extractive)",
                zorder=3,
            )
        curve = sorted((extra or {}).get(dataset, {}).items())
        if curve:
            ax.plot(
                *zip(*curve, strict=True),
                color=_EXTRA_COLORS[0],
                marker="o",
                markersize=4,
                linewidth=1.8,
                label=extra_label,
                zorder=4,
            )
        _budget_axis(ax, sorted(set(xs) | {b for b, _ in curve}))
        ax.set_ylabel(metric_name(line[0].metric))
        ax.set_title(f"{_short(dataset)} (n={max(b.n for b in line)})")
    over = ", ".join(
        selector_name(s)
        for s in sorted({s for b in items for s in b.selectors}, key=selector_sort_key)
    )
    fig.suptitle(
        title
        or f"Oracle bounds on {metric_name(items[0].metric)} over {over} "
        f"({unitizer_name(unit or '').lower()} units)"
    )
    _legend(fig, axes)
    return _save(fig, path, dpi)
