"""The paper's four views of RCD's weight sensitivity, computed from a sensitivity run's rows.

A :class:`Landscape` is one dataset at one budget: every example's score at every grid
point of the weight simplex (examples that lack a point are left out, so that every point
averages the same examples). From it come the views of the paper's appendix:

- the landscape itself (ternary heat maps, :mod:`budgetctx.eval.report._sensitivity_plots`);
- the mean score against the distance from the best weights, with a fitted slope;
- the share of grid points within a tolerance of the best mean (the "robustness proxy");
- the best weights with bootstrap intervals.

**Distance on the simplex.** A weight vector ``(alpha, beta, gamma)`` is a distribution of the
objective's mass over its three terms (relevance, coverage, diversity). The paper calls the
distance between two of them a Wasserstein distance without naming the ground metric. The
terms have no order and no geometry (coverage is not "between" relevance and diversity), so
the default ground metric here is the uniform one, ``d(i, j) = 1`` for ``i != j``. Under it
the 1-Wasserstein distance is exactly the total-variation distance,
``W1(u, v) = (|u1 - v1| + |u2 - v2| + |u3 - v3|) / 2``: the share of the weight that must move
to another term; it runs from 0 to 1, and grid neighbours are one ``step`` apart.
``ground="line"`` instead places R, C, D at 0, 1, 2 on a line and uses
:func:`scipy.stats.wasserstein_distance` (what a 1-D call over the term indices computes):
moving mass from relevance to diversity then costs twice as much as to coverage.

>>> wasserstein((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)), wasserstein(
...     (1.0, 0.0, 0.0), (0.0, 0.0, 1.0), ground="line")
(1.0, 2.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from budgetctx._errors import InvalidParameterError
from budgetctx.eval._store import SweepRow

__all__ = [
    "MIN_CUT",
    "TOLERANCES",
    "BestWeights",
    "Ground",
    "Landscape",
    "best_weights",
    "distance_slope",
    "landscapes",
    "lattice_neighbours",
    "wasserstein",
    "within_tolerance",
]

Weights = tuple[float, float, float]
Ground = Literal["uniform", "line"]
#: The paper's tolerances for the within-tolerance share (absolute ROUGE-1).
TOLERANCES = (0.005, 0.01, 0.02)
#: The fewest examples a budget must cut for the "cut only" view: fewer is noise.
MIN_CUT = 5
# Means are of scores rounded to 6 places: two settings this close are tied.
_TIE = 1e-9


def _simplex_point(w: Sequence[float], name: str) -> NDArray[np.float64]:
    x = np.asarray(w, dtype=np.float64)
    if x.shape != (3,) or not np.all(np.isfinite(x)) or np.any(x < 0):
        raise InvalidParameterError(
            f"The {name!r} weights must be three finite numbers >= 0. Got {list(w)!r:.80} "
            "instead; pass (alpha, beta, gamma).",
            parameter=name,
            value=repr(w)[:80],
        )
    total = float(x.sum())
    if abs(total - 1.0) > 1e-6:
        raise InvalidParameterError(
            f"The {name!r} weights must sum to 1 (a point of the simplex). Got a sum of "
            f"{total:g} instead; divide them by their sum.",
            parameter=name,
            value=repr(w)[:80],
        )
    return x


def wasserstein(u: Sequence[float], v: Sequence[float], *, ground: Ground = "uniform") -> float:
    """The 1-Wasserstein distance between two weight vectors (see the module docstring).

    >>> wasserstein((0.5, 0.3, 0.2), (0.2, 0.3, 0.5))
    0.3
    >>> round(wasserstein((0.5, 0.3, 0.2), (0.2, 0.3, 0.5), ground="line"), 6)
    0.6
    """
    a, b = _simplex_point(u, "u"), _simplex_point(v, "v")
    if ground == "uniform":
        return round(float(np.abs(a - b).sum()) / 2.0, 12)
    if ground == "line":
        from scipy.stats import wasserstein_distance

        pos = np.arange(3, dtype=np.float64)
        return float(wasserstein_distance(pos, pos, u_weights=a, v_weights=b))
    raise InvalidParameterError(
        f"The 'ground' parameter must be 'uniform' or 'line'. Got {ground!r} instead; "
        "'uniform' treats the three terms as unordered.",
        parameter="ground",
        value=ground,
    )


def within_tolerance(means: Sequence[float] | NDArray[np.float64], tolerance: float) -> float:
    """The share of settings whose mean is at most ``tolerance`` below the best one.

    >>> within_tolerance([0.30, 0.295, 0.28, 0.31], 0.01)
    0.5
    """
    m = np.asarray(means, dtype=np.float64)
    if m.size == 0:
        return math.nan
    if not (isinstance(tolerance, int | float) and tolerance >= 0):
        raise InvalidParameterError(
            f"The 'tolerance' parameter must be a number >= 0. Got {tolerance!r} instead; "
            "e.g. 0.01 (one ROUGE point).",
            parameter="tolerance",
            value=tolerance,
        )
    return float(np.mean(m >= m.max() - tolerance - _TIE))


def distance_slope(
    distances: Sequence[float] | NDArray[np.float64],
    means: Sequence[float] | NDArray[np.float64],
) -> float:
    """Least-squares slope of ``means`` on ``distances`` (score per unit of distance); nan
    when the distances do not vary.

    >>> distance_slope([0.0, 0.1, 0.2], [0.30, 0.29, 0.28])
    -0.1
    """
    d = np.asarray(distances, dtype=np.float64)
    m = np.asarray(means, dtype=np.float64)
    if d.size < 2 or float(np.ptp(d)) == 0.0:
        return math.nan
    slope = np.polyfit(d, m, 1)[0]
    return round(float(slope), 12)


def lattice_neighbours(points: Sequence[Weights], step: float) -> list[tuple[int, int]]:
    """Index pairs of grid points one ``step`` apart (move ``step`` of weight between two
    terms): the edges of the simplex lattice.

    >>> lattice_neighbours([(1.0, 0.0, 0.0), (0.5, 0.5, 0.0), (0.0, 1.0, 0.0)], 0.5)
    [(0, 1), (1, 2)]
    """
    out = []
    for i in range(len(points)):
        for j in range(i + 1, len(points)):
            if abs(wasserstein(points[i], points[j]) - step) < 1e-6:
                out.append((i, j))
    return out


@dataclass(frozen=True, eq=False)
class Landscape:
    """One dataset at one budget: ``scores[e, p]`` is example ``e`` at grid point ``p``.

    ``cut[e]`` is True when the example's document is longer than the budget (otherwise every
    setting sends the whole document and scores the same). ``default`` and
    ``default_scores`` are the bundled weights and their per-example scores, when run.
    """

    dataset: str
    budget: int
    metric: str
    points: tuple[Weights, ...]
    example_ids: tuple[str, ...]
    scores: NDArray[np.float64]
    cut: NDArray[np.bool_]
    default: Weights | None = None
    default_scores: NDArray[np.float64] | None = None
    #: grid points that had rows but not for every example (left out of ``points``)
    incomplete: int = 0
    #: examples dropped because they lack some grid point at this budget
    dropped_examples: int = 0
    _means: NDArray[np.float64] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_means", self.scores.mean(axis=0))

    @property
    def n(self) -> int:
        return len(self.example_ids)

    @property
    def n_cut(self) -> int:
        return int(self.cut.sum())

    @property
    def means(self) -> NDArray[np.float64]:
        return self._means

    @property
    def best_index(self) -> int:
        """The best grid point; ties go to the first in grid order."""
        m = self.means
        return int(np.flatnonzero(m >= m.max() - _TIE)[0])

    @property
    def best(self) -> Weights:
        return self.points[self.best_index]

    @property
    def default_mean(self) -> float | None:
        return None if self.default_scores is None else float(self.default_scores.mean())

    def distances(self, *, ground: Ground = "uniform") -> NDArray[np.float64]:
        """Each grid point's distance from the best one."""
        best = self.best
        return np.array([wasserstein(p, best, ground=ground) for p in self.points])

    def within_tolerance(self, tolerance: float) -> float:
        return within_tolerance(self.means, tolerance)

    def slope(self, *, ground: Ground = "uniform") -> float:
        return distance_slope(self.distances(ground=ground), self.means)

    def spearman(self, *, ground: Ground = "uniform") -> float:
        """Rank correlation of distance and mean (-1: the farther, the worse, always)."""
        from scipy.stats import spearmanr

        d = self.distances(ground=ground)
        if float(np.ptp(d)) == 0.0 or float(np.ptp(self.means)) == 0.0:
            return math.nan
        return float(spearmanr(d, self.means).statistic)

    def neighbour_jumps(self, step: float) -> NDArray[np.float64]:
        """``|mean(p) - mean(q)|`` over lattice neighbours ``p, q`` (roughness)."""
        pairs = lattice_neighbours(self.points, step)
        m = self.means
        return np.array([abs(m[i] - m[j]) for i, j in pairs], dtype=np.float64)

    @property
    def flat(self) -> bool:
        """Every grid point scores the same (typically: every document fits the budget)."""
        return bool(np.ptp(self.means) == 0)

    def only_cut(self, *, min_examples: int = 1) -> Landscape | None:
        """The same landscape over the examples the budget cuts (None if fewer than
        ``min_examples``)."""
        if self.n_cut < max(1, min_examples):
            return None
        keep = self.cut
        return Landscape(
            self.dataset,
            self.budget,
            self.metric,
            self.points,
            tuple(e for e, k in zip(self.example_ids, keep, strict=True) if k),
            self.scores[keep],
            self.cut[keep],
            self.default,
            None if self.default_scores is None else self.default_scores[keep],
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "budget": self.budget,
            "metric": self.metric,
            "n": self.n,
            "n_cut": self.n_cut,
            "points": [list(p) for p in self.points],
            "means": [float(v) for v in self.means],
            "best": list(self.best),
            "default": list(self.default) if self.default is not None else None,
            "default_mean": self.default_mean,
        }


def landscapes(
    rows: Iterable[SweepRow],
    *,
    grid: Sequence[str],
    default: str | None = None,
    metric: str = "rouge1",
) -> list[Landscape]:
    """One :class:`Landscape` per (dataset, budget) from a sensitivity run's rows.

    ``grid`` lists the row labels of the grid points (in grid order), ``default`` the label
    of the bundled weights. Rows of other labels are ignored. Every point of a landscape
    averages the same examples: those that have a score at every grid point present.
    """
    from budgetctx.eval._sensitivity import label_weights

    order = {label: i for i, label in enumerate(grid)}
    table: dict[tuple[str, int], dict[str, dict[str, float]]] = {}
    doc_tokens: dict[tuple[str, str], int] = {}
    for r in rows:
        if (r.selector not in order and r.selector != default) or metric not in r.metrics:
            continue
        table.setdefault((r.dataset, r.budget), {}).setdefault(r.example_id, {})[r.selector] = (
            float(r.metrics[metric])
        )
        doc_tokens[(r.dataset, r.example_id)] = int(r.document_tokens)
    out = []
    for (dataset, budget), by_example in sorted(table.items()):
        present = sorted(
            {lab for s in by_example.values() for lab in s if lab in order},
            key=order.__getitem__,
        )
        # Rows are written one example at a time, so an example has every point or none;
        # only a grid extended later (a finer step) leaves examples without some points.
        # Every point must average the same examples: keep those that have them all, or,
        # if none does, the points that every example has.
        examples = sorted(e for e, s in by_example.items() if all(lab in s for lab in present))
        labels = present
        if not examples:
            labels = [lab for lab in present if all(lab in s for s in by_example.values())]
            examples = sorted(by_example)
        if not labels or not examples:
            continue
        scores = np.array([[by_example[e][lab] for lab in labels] for e in examples])
        cut = np.array([doc_tokens[(dataset, e)] > budget for e in examples], dtype=bool)
        points = []
        for lab in labels:
            parsed = label_weights(lab)
            assert parsed is not None  # grid labels are weight labels by construction
            points.append(parsed[0])
        d_weights: Weights | None = None
        d_scores: NDArray[np.float64] | None = None
        if default is not None:
            parsed = label_weights(default)
            d_weights = parsed[0] if parsed is not None else None
            if all(default in by_example[e] for e in examples):
                d_scores = np.array([by_example[e][default] for e in examples])
        out.append(
            Landscape(
                dataset,
                budget,
                metric,
                tuple(points),
                tuple(examples),
                scores,
                cut,
                d_weights,
                d_scores,
                incomplete=len(present) - len(labels),
                dropped_examples=len(by_example) - len(examples),
            )
        )
    return out


@dataclass(frozen=True)
class BestWeights:
    """The best grid point of a landscape and how sure we are of it.

    ``alpha``/``beta``/``gamma`` intervals are percentiles of the best point over bootstrap
    resamples of the examples (the argmax re-chosen in each); ``stability`` is the share of
    resamples that choose the same point. ``mean``/``low``/``high`` is the best point's mean
    and its interval; ``gain`` the paired interval of best minus default.
    """

    dataset: str
    budget: int
    n: int
    n_cut: int
    best: Weights
    mean: float
    low: float
    high: float
    alpha_ci: tuple[float, float]
    beta_ci: tuple[float, float]
    gamma_ci: tuple[float, float]
    stability: float
    default: Weights | None
    default_mean: float | None
    default_low: float | None
    default_high: float | None
    gain: tuple[float, float, float] | None
    #: every grid point scored the same: there is no best point
    flat: bool = False

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def best_weights(
    land: Landscape, *, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0
) -> BestWeights:
    """The best grid point of ``land`` with bootstrap intervals over examples.

    >>> import numpy as np
    >>> land = Landscape("d", 256, "rouge1", ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)), ("a", "b"),
    ...                  np.array([[0.3, 0.2], [0.5, 0.2]]), np.array([True, True]))
    >>> b = best_weights(land)
    >>> b.best, round(b.mean, 2), b.stability
    ((1.0, 0.0, 0.0), 0.4, 1.0)
    """
    from budgetctx.eval.metrics import bootstrap_ci, paired_bootstrap

    rng = np.random.default_rng(seed)
    n = land.n
    idx = rng.integers(0, n, size=(n_resamples, n))
    # (resamples x points) means, then each resample's best point, ties to the first
    means = land.scores[idx].mean(axis=1)
    winners = np.argmax(means >= means.max(axis=1, keepdims=True) - _TIE, axis=1)
    chosen = np.array([land.points[i] for i in winners])
    q = (1 - confidence) / 2 * 100, (1 + confidence) / 2 * 100

    def span(col: int) -> tuple[float, float]:
        # lower/higher: the bounds are weights that some resample chose, not interpolations
        lo = np.percentile(chosen[:, col], q[0], method="lower")
        hi = np.percentile(chosen[:, col], q[1], method="higher")
        return round(float(lo), 6), round(float(hi), 6)

    b = land.best_index
    ci = bootstrap_ci(land.scores[:, b], n_resamples=n_resamples, confidence=confidence, seed=seed)
    d_mean = d_low = d_high = None
    gain = None
    if land.default_scores is not None:
        dci = bootstrap_ci(
            land.default_scores, n_resamples=n_resamples, confidence=confidence, seed=seed
        )
        d_mean, d_low, d_high = float(dci.estimate), float(dci.low), float(dci.high)
        pb = paired_bootstrap(
            land.scores[:, b],
            land.default_scores,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        )
        gain = (float(pb.difference.estimate), float(pb.difference.low), float(pb.difference.high))
    return BestWeights(
        dataset=land.dataset,
        budget=land.budget,
        n=n,
        n_cut=land.n_cut,
        best=land.best,
        mean=float(ci.estimate),
        low=float(ci.low),
        high=float(ci.high),
        alpha_ci=span(0),
        beta_ci=span(1),
        gamma_ci=span(2),
        stability=float(np.mean(winners == b)),
        default=land.default,
        default_mean=d_mean,
        default_low=d_low,
        default_high=d_high,
        gain=gain,
        flat=land.flat,
    )


def mean_by_distance(
    land: Landscape, *, ground: Ground = "uniform"
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Distinct distances from the best point and the mean score of the points at each.

    >>> import numpy as np
    >>> land = Landscape("d", 1, "rouge1", ((1.0, 0.0, 0.0), (0.5, 0.5, 0.0), (0.0, 1.0, 0.0)),
    ...                  ("a",), np.array([[0.3, 0.2, 0.1]]), np.array([True]))
    >>> [list(map(float, a)) for a in mean_by_distance(land)]
    [[0.0, 0.5, 1.0], [0.3, 0.2, 0.1]]
    """
    d = np.round(land.distances(ground=ground), 9)
    levels = np.unique(d)
    return levels, np.array([land.means[d == x].mean() for x in levels])


def summary_values(
    land: Landscape, *, step: float | None, tolerances: Sequence[float] = TOLERANCES
) -> Mapping[str, float]:
    """The numbers behind the paper's three claims for one landscape."""
    jumps = land.neighbour_jumps(step) if step is not None else np.zeros(0)
    m = land.means
    out: dict[str, float] = {
        "best": float(m.max()),
        "worst": float(m.min()),
        "range": float(m.max() - m.min()),
        "max_jump": float(jumps.max()) if jumps.size else math.nan,
        "mean_jump": float(jumps.mean()) if jumps.size else math.nan,
        "slope": land.slope(),
        "slope_line": land.slope(ground="line"),
        "spearman": land.spearman(),
    }
    for t in tolerances:
        out[f"within_{t:g}"] = land.within_tolerance(t)
    return out


def _span(lo: float, hi: float) -> str:
    return f"{lo:g}" if lo == hi else f"[{lo:g}, {hi:g}]"


def best_weights_table(best: Sequence[BestWeights], *, metric: str, confidence: float) -> Any:
    """The best weights per dataset x budget with bootstrap intervals, as a report Table."""
    from budgetctx.eval.report._style import metric_name
    from budgetctx.eval.report._tables import Table

    rows: list[tuple[Any, ...]] = []
    intervals: dict[tuple[int, int], tuple[float, float]] = {}
    for r, b in enumerate(best):
        a, be, g = b.best
        gain = b.gain
        rows.append(
            (
                b.dataset,
                b.budget,
                f"{b.n} ({b.n_cut})",
                "flat (all equal)" if b.flat else f"({a:g}, {be:g}, {g:g})",
                b.mean,
                b.default_mean,
                gain[0] if gain is not None else None,
                *(
                    ("–", "–", "–", "–")
                    if b.flat
                    else (
                        _span(*b.alpha_ci),
                        _span(*b.beta_ci),
                        _span(*b.gamma_ci),
                        f"{b.stability:.0%}",
                    )
                ),
            )
        )
        intervals[(r, 4)] = (b.low, b.high)
        if b.default_low is not None and b.default_high is not None:
            intervals[(r, 5)] = (b.default_low, b.default_high)
        if gain is not None:
            intervals[(r, 6)] = (gain[1], gain[2])
    name = metric_name(metric)
    return Table(
        f"Best RCD weights per dataset and budget (mean {name})",
        (
            "dataset",
            "budget",
            "n (cut)",
            "best (α, β, γ)",
            f"best {name}",
            f"default {name}",
            "best − default",
            "α range",
            "β range",
            "γ range",
            "same best",
        ),
        tuple(rows),
        intervals=intervals,
        interval="range",
        group_columns=1,
        caption=(
            f"Intervals: {confidence:.0%} percentile bootstrap over examples. The α/β/γ ranges "
            "are the percentiles of the best grid point re-chosen in each resample; 'same "
            "best' is the share of resamples that choose the printed point. 'best − default' "
            "is paired, and optimistic: the best point is chosen on the same examples. "
            "n (cut): examples, and how many of them are longer than the budget; 'flat': "
            "every setting scored the same (the budget cuts no document, or cuts them all "
            "alike)."
        ),
    )


def summary_table(
    lands: Sequence[Landscape],
    *,
    step: float | None,
    tolerances: Sequence[float] = TOLERANCES,
    cut_only: Mapping[tuple[str, int], Landscape] | None = None,
) -> Any:
    """The numbers behind the paper's three claims, per dataset x budget, as a Table."""
    from budgetctx.eval.report._tables import Table

    rows = []
    for land in lands:
        v = summary_values(land, step=step, tolerances=tolerances)
        sub = (cut_only or {}).get((land.dataset, land.budget))
        sub_v = summary_values(sub, step=step, tolerances=tolerances) if sub is not None else {}
        rows.append(
            (
                land.dataset,
                land.budget,
                land.n,
                land.n_cut,
                v["best"],
                v["range"],
                v["max_jump"],
                v["mean_jump"],
                v["slope"],
                v["spearman"],
                *(v[f"within_{t:g}"] for t in tolerances),
                *(sub_v.get(f"within_{t:g}") for t in tolerances),
            )
        )
    return Table(
        "The paper's three claims, measured",
        (
            "dataset",
            "budget",
            "n",
            "cut",
            "best",
            "range",
            "max neighbour jump",
            "mean neighbour jump",
            "slope vs W1",
            "Spearman",
            *(f"within {t:g}" for t in tolerances),
            *(f"within {t:g} (cut only)" for t in tolerances),
        ),
        tuple(rows),
        group_columns=1,
        caption=(
            "range: best minus worst grid mean; neighbour jump: |difference| of the means of "
            "two grid points one step apart (smoothness); slope: least-squares slope of the "
            "grid means on the W1 distance (uniform ground metric) from the best point, "
            "Spearman: their rank correlation (loss with distance); within t: share of grid "
            "points at most t below the best mean, over all examples and over the examples "
            f"the budget cuts, when it cuts at least {MIN_CUT} (near-optimal set against "
            "budget)."
        ),
    )
