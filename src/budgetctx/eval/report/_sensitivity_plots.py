"""Figures of a weight-sensitivity run (paper, Appendix "Sensitivity Analysis"), as PNG.

Drawn on :class:`matplotlib.figure.Figure` objects with the Agg canvas (no pyplot), as the
rest of the report. The simplex is drawn as an equilateral triangle with relevance
(``alpha = 1``) bottom left, coverage (``beta = 1``) bottom right and diversity
(``gamma = 1``) on top.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from budgetctx._errors import InvalidParameterError
from budgetctx.eval.report._sensitivity import (
    TOLERANCES,
    Landscape,
    Weights,
    distance_slope,
    mean_by_distance,
)
from budgetctx.eval.report._style import metric_name

__all__ = ["plot_distance", "plot_ternary", "plot_tolerance", "ternary_xy"]

_H = math.sqrt(3) / 2
_DPI = 90
_BUDGET_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
_TOL_STYLES = ("-", "--", ":")


def ternary_xy(points: Sequence[Weights]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Plane coordinates of simplex points: R=(0, 0), C=(1, 0), D=(1/2, sqrt(3)/2).

    >>> [list(map(float, a)) for a in ternary_xy([(1.0, 0.0, 0.0), (0.0, 1.0, 0.0)])]
    [[0.0, 1.0], [0.0, 0.0]]
    """
    p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    return p[:, 1] + p[:, 2] / 2, p[:, 2] * _H


def _figure(rows: int, cols: int, *, w: float, h: float) -> tuple[Any, Any]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w * cols, h * rows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False)
    return fig, axes


def _save(fig: Any, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=_DPI, format="png")
    return path


def _check(lands: Sequence[Landscape]) -> None:
    if not lands:
        raise InvalidParameterError(
            "Nothing to plot: no landscapes; pass the output of landscapes() on a "
            "sensitivity run with rows.",
            parameter="landscapes",
            value=[],
        )


def _triangulation(points: Sequence[Weights]) -> Any:
    import matplotlib.tri as mtri

    x, y = ternary_xy(points)
    return mtri.Triangulation(x, y)


def plot_ternary(lands: Sequence[Landscape], path: str | Path, *, tolerance: float = 0.01) -> Path:
    """One ternary heat map per landscape (one dataset: one per budget, in a row).

    Colour is the mean score minus the best mean (0 at the best point), on one scale for
    every panel; the star marks the best grid point, the yellow diamond the bundled
    defaults, the dashed line the region within ``tolerance`` of the best.
    """
    _check(lands)
    lands = sorted(lands, key=lambda land: land.budget)
    fig, axes = _figure(1, len(lands), w=3.3, h=3.3)
    worst = max(float(land.means.max() - land.means.min()) for land in lands)
    vmin = -max(worst, 1e-3)
    art = None
    for ax, land in zip(axes[0], lands, strict=True):
        ax.set_aspect("equal")
        ax.axis("off")
        ax.plot([0, 1, 0.5, 0], [0, 0, _H, 0], color="black", linewidth=0.8)
        loss = land.means - land.means.max()
        if len(land.points) >= 3:
            tri = _triangulation(land.points)
            art = ax.tripcolor(tri, loss, shading="gouraud", cmap="viridis", vmin=vmin, vmax=0.0)
            if np.ptp(loss) > tolerance:
                ax.tricontour(
                    tri,
                    loss,
                    levels=[-tolerance],
                    colors="white",
                    linewidths=0.9,
                    linestyles="--",
                )
        x, y = ternary_xy(land.points)
        ax.scatter(x, y, s=3, color="black", alpha=0.35, linewidths=0)
        if np.ptp(land.means) > 0:
            bx, by = ternary_xy([land.best])
            ax.scatter(bx, by, marker="*", s=150, color="white", edgecolors="black", zorder=5)
        if land.default is not None:
            dx, dy = ternary_xy([land.default])
            ax.scatter(dx, dy, marker="D", s=45, color="yellow", edgecolors="black", zorder=5)
        ax.text(0.0, -0.03, "R (α=1)", ha="center", va="top", fontsize=7)
        ax.text(1.0, -0.03, "C (β=1)", ha="center", va="top", fontsize=7)
        ax.text(0.5, _H + 0.02, "D (γ=1)", ha="center", va="bottom", fontsize=7)
        ax.set_xlim(-0.12, 1.12)
        ax.set_ylim(-0.1, _H + 0.1)
        a, b, g = land.best
        where = (
            "flat: every setting scores the same"
            if np.ptp(land.means) == 0
            else f"best {land.means.max():.3f} at ({a:g}, {b:g}, {g:g}), "
            f"range {np.ptp(land.means):.3f}"
        )
        ax.set_title(
            f"{land.dataset}, B={land.budget} (n={land.n}, {land.n_cut} cut)\n{where}",
            fontsize=7.5,
        )
    if art is not None:
        bar = fig.colorbar(art, ax=list(axes[0]), shrink=0.8, pad=0.01)
        bar.set_label(f"mean {metric_name(lands[0].metric)} - best", fontsize=8)
    return _save(fig, path)


def plot_distance(lands: Sequence[Landscape], path: str | Path) -> Path:
    """Mean score against the distance from the best weights: one panel per dataset, one
    colour per budget; dots are grid points, the line the mean at each distance, the dashed
    line the least-squares fit (its slope printed top right)."""
    _check(lands)
    datasets = sorted({land.dataset for land in lands})
    budgets = sorted({land.budget for land in lands})
    colors = {b: _BUDGET_COLORS[i % len(_BUDGET_COLORS)] for i, b in enumerate(budgets)}
    fig, axes = _figure(1, len(datasets), w=3.4, h=3.3)
    for ax, dataset in zip(axes[0], datasets, strict=True):
        notes = []
        for land in sorted((x for x in lands if x.dataset == dataset), key=lambda x: x.budget):
            d = land.distances()
            c = colors[land.budget]
            ax.scatter(d, land.means, s=6, color=c, alpha=0.35, linewidths=0)
            levels, avg = mean_by_distance(land)
            slope = distance_slope(d, land.means)
            ax.plot(
                levels,
                avg,
                color=c,
                linewidth=1.2,
                marker="o",
                markersize=2.5,
                label=f"B={land.budget}",
            )
            if not math.isnan(slope):
                k, b0 = np.polyfit(d, land.means, 1)
                top = float(d.max())
                ax.plot([0, top], [b0, b0 + k * top], color=c, linewidth=0.8, linestyle="--")
            notes.append((f"B={land.budget}: {slope:+.3f}", c))
        # The slopes, top right: the scores fall with distance, so that corner is free.
        for i, (text, c) in enumerate(notes):
            ax.text(
                0.98,
                0.97 - 0.065 * i,
                text,
                color=c,
                fontsize=6.5,
                ha="right",
                va="top",
                transform=ax.transAxes,
            )
        ax.text(
            0.98,
            0.97 - 0.065 * len(notes),
            "(fitted slope)",
            color="#555555",
            fontsize=6,
            ha="right",
            va="top",
            transform=ax.transAxes,
        )
        ax.set_title(dataset, fontsize=9)
        ax.set_xlabel(
            "Wasserstein distance from the best weights\n(uniform ground metric)", fontsize=8
        )
        ax.set_xlim(-0.03, 1.03)
        ax.grid(True, alpha=0.3, linewidth=0.6)
    axes[0][0].set_ylabel(f"mean {metric_name(lands[0].metric)}", fontsize=8)
    axes[0][0].legend(fontsize=6.5, frameon=False, loc="lower left")
    return _save(fig, path)


def plot_tolerance(
    lands: Sequence[Landscape],
    path: str | Path,
    *,
    tolerances: Sequence[float] = TOLERANCES,
    cut_only: Sequence[Landscape] = (),
) -> Path:
    """The share of grid points within each tolerance of the best mean, against the budget:
    one panel per dataset. ``cut_only`` (landscapes over the examples each budget cuts) adds
    faint lines of the same style: where they part from the solid ones, the growth comes
    from documents that fit the budget whole."""
    _check(lands)
    datasets = sorted({land.dataset for land in lands})
    budgets = sorted({land.budget for land in lands})
    fig, axes = _figure(1, len(datasets), w=3.2, h=3.0)
    from matplotlib.ticker import NullLocator

    for ax, dataset in zip(axes[0], datasets, strict=True):
        for i, t in enumerate(tolerances):
            style = _TOL_STYLES[i % len(_TOL_STYLES)]
            for group, alpha, suffix in ((lands, 1.0, ""), (cut_only, 0.45, ", cut only")):
                mine = sorted((x for x in group if x.dataset == dataset), key=lambda x: x.budget)
                if not mine:
                    continue
                ax.plot(
                    [x.budget for x in mine],
                    [x.within_tolerance(t) for x in mine],
                    color="black" if not suffix else "#d62728",
                    alpha=alpha,
                    linestyle=style,
                    marker="o",
                    markersize=3,
                    label=f"within {t:g}{suffix}",
                )
        ax.set_xscale("log", base=2)
        ax.set_xticks(budgets, labels=[str(b) for b in budgets])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(dataset, fontsize=9)
        ax.set_xlabel("token budget", fontsize=8)
        ax.grid(True, alpha=0.3, linewidth=0.6)
    axes[0][0].set_ylabel("share of weight settings near the best", fontsize=8)
    axes[0][-1].legend(fontsize=6.5, frameon=False, loc="lower right")
    return _save(fig, path)
