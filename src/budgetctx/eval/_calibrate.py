"""Calibrating routers on sweep rows (validation split) and evaluating them (test split)."""

from __future__ import annotations

import datetime as _dt
import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from budgetctx._core.results import DocumentStats
from budgetctx._errors import InvalidParameterError
from budgetctx._version import __version__
from budgetctx.router import BudgetRouter, FeatureRouter, Router, TreeModel

if TYPE_CHECKING:
    from budgetctx.eval._store import SweepRow

__all__ = [
    "PAPER_SELECTORS",
    "Instance",
    "RouteEvalRow",
    "calibrate_budget_router",
    "calibrate_feature_router",
    "evaluate_router",
    "instances",
]

PAPER_SELECTORS = ("lead", "mmr", "rcd")


@dataclass(frozen=True)
class Instance:
    """One (example, budget): router features and each candidate's score."""

    dataset: str
    example_id: str
    budget: int
    stats: DocumentStats
    scores: dict[str, float]
    oracle: float | None = None


def instances(
    rows: Iterable[SweepRow],
    *,
    metric: str = "rouge1",
    candidates: Sequence[str] = PAPER_SELECTORS,
    unitizer: str = "sentence",
    split: str | None = None,
) -> list[Instance]:
    """Group sweep rows into instances that every candidate selector has a row for."""
    grouped: dict[tuple[str, str, int], dict[str, Any]] = defaultdict(dict)
    stats: dict[tuple[str, str, int], Mapping[str, Any]] = {}
    oracle: dict[tuple[str, str, int], float] = {}
    for r in rows:
        if r.unitizer != unitizer or (split is not None and r.split != split):
            continue
        key = (r.dataset, r.example_id, r.budget)
        if r.selector == "oracle":
            oracle[key] = float(r.metrics[metric])
        elif r.selector in candidates:
            grouped[key][r.selector] = float(r.metrics[metric])
            stats[key] = r.stats
    out = []
    for key in sorted(grouped):
        scores = grouped[key]
        if len(scores) < len(candidates):
            continue
        s = stats[key]
        out.append(
            Instance(
                key[0],
                key[1],
                key[2],
                DocumentStats(
                    float(s["phi"]), float(s["rho"]), int(s["length"]), float(s["budget_ratio"])
                ),
                {c: scores[c] for c in candidates},
                oracle.get(key),
            )
        )
    return out


def _provenance(
    insts: Sequence[Instance], metric: str, split: str, extra: Mapping[str, Any]
) -> dict[str, Any]:
    return {
        "data": sorted({i.dataset for i in insts}),
        "split": split,
        "metric": metric,
        "instances": len(insts),
        "examples": len({(i.dataset, i.example_id) for i in insts}),
        "budgets": sorted({i.budget for i in insts}),
        "date": _dt.date.today().isoformat(),
        "budgetctx": __version__,
        **dict(extra),
    }


def calibrate_budget_router(
    insts: Sequence[Instance],
    *,
    assign: Literal["free", "paper"] = "free",
    metric: str = "rouge1",
    split: str = "validation",
    tokenizer: str = "o200k_base",
    provenance: Mapping[str, Any] | None = None,
) -> BudgetRouter:
    """Thresholds (and, with ``assign="free"``, the selector of each regime) that maximise
    the mean score over all instances. ``assign="paper"`` keeps Lead/MMR/RCD in order."""
    if not insts:
        raise InvalidParameterError(
            f"No {split} rows to calibrate on: run the sweep with --split {split} (or both) "
            "and every candidate selector.",
            parameter="split",
            value=split,
        )
    candidates = list(insts[0].scores)
    budgets = sorted({i.budget for i in insts})
    # Sum and count of each candidate's score per budget.
    total = {b: dict.fromkeys(candidates, 0.0) for b in budgets}
    count = dict.fromkeys(budgets, 0)
    for inst in insts:
        count[inst.budget] += 1
        for c, v in inst.scores.items():
            total[inst.budget][c] += v
    k = len(budgets)
    best: tuple[float, int, int, int, tuple[str, str, str]] | None = None
    for i in range(k + 1):
        for j in range(i, k + 1):
            regimes = (budgets[:i], budgets[i:j], budgets[j:])
            chosen: list[str] = []
            value = 0.0
            for slot, regime in enumerate(regimes):
                if assign == "paper":
                    sel = PAPER_SELECTORS[slot]
                else:
                    sums = {c: sum(total[b][c] for b in regime) for c in candidates}
                    sel = (
                        max(candidates, key=lambda c: (sums[c], -candidates.index(c)))
                        if regime
                        else PAPER_SELECTORS[slot]
                    )
                chosen.append(sel)
                value += sum(total[b][sel] for b in regime)
            switches = sum(1 for a, b_ in itertools.pairwise(chosen) if a != b_)
            key = (value, -switches, -i, -j, tuple(chosen))
            if best is None or key[:4] > best[:4]:
                best = (value, -switches, -i, -j, (chosen[0], chosen[1], chosen[2]))
    assert best is not None
    _, _, neg_i, neg_j, selectors = best
    i, j = -neg_i, -neg_j
    b1: float = budgets[i - 1] if i > 0 else 0
    b2: float = math.inf if j == k else (budgets[j - 1] if j > 0 else 0)
    if i == k:
        b1 = b2 = math.inf
    n = sum(count.values())
    prov = _provenance(
        insts,
        metric,
        split,
        {
            "kind": "budget",
            "assign": assign,
            "calibration_mean": round(best[0] / n, 6),
            **dict(provenance or {}),
        },
    )
    return BudgetRouter(
        b1=b1, b2=max(b1, b2), selectors=selectors, tokenizer=tokenizer, provenance=prov
    )


def _fit_tree(
    insts: Sequence[Instance],
    *,
    max_depth: int,
    min_samples_leaf: int | None,
    min_gain: float,
    assign: Literal["free", "paper"],
    metric: str,
    split: str,
    tokenizer: str,
    provenance: Mapping[str, Any] | None,
) -> FeatureRouter:
    from sklearn.tree import DecisionTreeRegressor

    fallback = calibrate_budget_router(
        insts,
        assign=assign,
        metric=metric,
        split=split,
        tokenizer=tokenizer,
        provenance=provenance,
    )
    candidates = list(insts[0].scores)
    X = np.array([i.stats.vector(i.budget) for i in insts])
    Y = np.array([[i.scores[c] for c in candidates] for i in insts])
    leaf = min_samples_leaf or max(20, len(insts) // 40)
    model = DecisionTreeRegressor(max_depth=max_depth, min_samples_leaf=leaf, random_state=0)
    model.fit(X, Y)
    return FeatureRouter(
        tree=TreeModel.from_sklearn(model),
        selectors=tuple(candidates),
        fallback=fallback,
        min_gain=min_gain,
        tokenizer=tokenizer,
    )


def _mean_score(router: Router, insts: Sequence[Instance]) -> float:
    return float(np.mean([i.scores[router.route(i.stats, i.budget).selector] for i in insts]))


def _cv_choice(
    insts: Sequence[Instance], grid: Sequence[tuple[int, float]], folds: int, **fit: Any
) -> tuple[tuple[int, float], dict[str, float]]:
    """Grouped k-fold over examples inside the calibration rows, then the one-standard-error
    rule: the simplest grid entry (grid order) whose held-out scores are within one paired
    standard error of the best entry's. Small score differences between routers are mostly
    noise, and the simplest entry is the budget router itself (``min_gain`` >= 1: the tree
    never overrides it)."""
    keys = sorted({(i.dataset, i.example_id) for i in insts})
    fold_of = {k: n % folds for n, k in enumerate(keys)}
    held: list[NDArray[np.float64]] = []
    for depth, gain in grid:
        scores = np.full(len(insts), np.nan)
        for f in range(folds):
            train = [i for i in insts if fold_of[(i.dataset, i.example_id)] != f]
            test_idx = [n for n, i in enumerate(insts) if fold_of[(i.dataset, i.example_id)] == f]
            if not train or not test_idx:
                continue
            router = _fit_tree(train, max_depth=depth, min_gain=gain, **fit)
            for n in test_idx:
                inst = insts[n]
                scores[n] = inst.scores[router.route(inst.stats, inst.budget).selector]
        held.append(scores)
    means = [float(np.nanmean(h)) for h in held]
    best = int(np.argmax(means))
    chosen = best
    for g in range(len(grid)):
        diff = held[best] - held[g]
        diff = diff[~np.isnan(diff)]
        se = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
        if float(diff.mean()) <= se:
            chosen = g
            break
    report = {f"depth={d},min_gain={m}": round(v, 6) for (d, m), v in zip(grid, means, strict=True)}
    return grid[chosen], report


#: From simplest to most complex; min_gain 1.0 means the tree never overrides the fallback.
DEFAULT_GRID = ((1, 1.0), (1, 0.01), (2, 0.01), (2, 0.005), (3, 0.005), (2, 0.0), (3, 0.0))


def calibrate_feature_router(
    insts: Sequence[Instance],
    *,
    max_depth: int | None = None,
    min_samples_leaf: int | None = None,
    min_gain: float | None = None,
    grid: Sequence[tuple[int, float]] = DEFAULT_GRID,
    folds: int = 5,
    assign: Literal["free", "paper"] = "free",
    metric: str = "rouge1",
    split: str = "validation",
    tokenizer: str = "o200k_base",
    provenance: Mapping[str, Any] | None = None,
) -> FeatureRouter:
    """A regression tree from router features to every candidate's score (one multi-output
    tree: each leaf holds the candidates' mean scores), with a calibrated budget router as
    the fallback when no candidate is predicted ``min_gain`` above it.

    Unless both are given, ``max_depth`` and ``min_gain`` are chosen by grouped k-fold
    cross-validation over examples *inside* the calibration rows (never test rows) with the
    one-standard-error rule, so that the tree only overrides the budget router where the
    evidence for it beats the noise.
    """
    fit: dict[str, Any] = {
        "min_samples_leaf": min_samples_leaf,
        "assign": assign,
        "metric": metric,
        "split": split,
        "tokenizer": tokenizer,
        "provenance": provenance,
    }
    cv_scores: dict[str, float] = {}
    if max_depth is None or min_gain is None:
        options = [
            (d, g)
            for d, g in grid
            if (max_depth is None or d == max_depth) and (min_gain is None or g == min_gain)
        ]
        (max_depth, min_gain), cv_scores = _cv_choice(insts, options or grid, folds, **fit)
    router = _fit_tree(insts, max_depth=max_depth, min_gain=min_gain, **fit)
    prov = _provenance(
        insts,
        metric,
        split,
        {
            "kind": "feature",
            "max_depth": max_depth,
            "min_samples_leaf": min_samples_leaf or max(20, len(insts) // 40),
            "min_gain": min_gain,
            "cv_folds": folds if cv_scores else None,
            "cv_scores": cv_scores,
            "calibration_mean": round(_mean_score(router, insts), 6),
            "fallback_calibration_mean": router.fallback.provenance["calibration_mean"],
            **dict(provenance or {}),
        },
    )
    return FeatureRouter(
        tree=router.tree,
        selectors=router.selectors,
        fallback=router.fallback,
        min_gain=min_gain,
        tokenizer=tokenizer,
        provenance=prov,
    )


@dataclass(frozen=True)
class RouteEvalRow:
    """Held-out scores at one (dataset, budget): the routers, each fixed selector, and the
    bounds (per-budget: best/worst fixed selector; per-instance: best/worst per example)."""

    dataset: str
    budget: int
    n: int
    routers: dict[str, float]
    fixed: dict[str, float]
    per_budget_upper: float
    per_budget_lower: float
    per_instance_upper: float
    per_instance_lower: float
    oracle: float | None
    chosen: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def evaluate_router(insts: Sequence[Instance], routers: Mapping[str, Router]) -> list[RouteEvalRow]:
    """Score routers on (held-out) instances, per dataset and budget."""
    groups: dict[tuple[str, int], list[Instance]] = defaultdict(list)
    for inst in insts:
        groups[(inst.dataset, inst.budget)].append(inst)
    out = []
    for (dataset, budget), group in sorted(groups.items()):
        candidates = list(group[0].scores)
        fixed = {c: float(np.mean([i.scores[c] for i in group])) for c in candidates}
        routed: dict[str, float] = {}
        chosen: dict[str, dict[str, int]] = {}
        for name, router in routers.items():
            picks = [router.route(i.stats, budget).selector for i in group]
            missing = sorted(set(picks) - set(candidates))
            if missing:
                raise InvalidParameterError(
                    f"Router {name!r} chose {missing}, which the sweep did not run; include "
                    "them in --selectors.",
                    parameter="router",
                    value=missing,
                )
            routed[name] = float(np.mean([i.scores[p] for i, p in zip(group, picks, strict=True)]))
            chosen[name] = {c: picks.count(c) for c in sorted(set(picks))}
        oracles = [i.oracle for i in group if i.oracle is not None]
        out.append(
            RouteEvalRow(
                dataset=dataset,
                budget=budget,
                n=len(group),
                routers=routed,
                fixed=fixed,
                per_budget_upper=max(fixed.values()),
                per_budget_lower=min(fixed.values()),
                per_instance_upper=float(np.mean([max(i.scores.values()) for i in group])),
                per_instance_lower=float(np.mean([min(i.scores.values()) for i in group])),
                oracle=float(np.mean(oracles)) if len(oracles) == len(group) else None,
                chosen=chosen,
            )
        )
    return out
