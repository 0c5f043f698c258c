"""Small hand-built selection problems."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from budgetctx.representations import DenseKernel, UnitFeatures
from budgetctx.selectors import SelectionProblem


def make_problem(
    relevance: Sequence[float],
    costs: Sequence[int],
    capacity: int,
    *,
    kernel: Sequence[Sequence[float]] | np.ndarray | None = None,
    segments: Sequence[Sequence[int]] | None = None,
) -> SelectionProblem:
    """``costs`` are per segment; without ``segments`` every unit is one segment."""
    r = np.asarray(relevance, dtype=np.float64)
    n = r.shape[0]
    K = np.eye(n) if kernel is None else np.asarray(kernel, dtype=np.float64)
    features = UnitFeatures(relevance=r, kernel=DenseKernel(K), relevance_source="given")
    unit_segments = tuple(tuple(s) for s in segments) if segments else tuple((i,) for i in range(n))
    return SelectionProblem(
        unit_segments=unit_segments,
        segment_costs=np.asarray(costs, dtype=np.int64),
        features=features,
        capacity=capacity,
        overlapping=segments is not None,
    )


def random_problem(
    rng: np.random.Generator, n: int, *, windows: bool = False, dim: int = 6
) -> SelectionProblem:
    """Random non-negative features (so the Gram kernel is PSD and non-negative)."""
    X = rng.random((n, dim)) ** 3
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    r = np.clip(X @ X.mean(axis=0), 0, None)
    if windows:
        n_seg = n + 2
        segments = [(i, i + 1, i + 2) for i in range(n)]
        costs = rng.integers(1, 12, size=n_seg)
    else:
        segments = None
        costs = rng.integers(1, 30, size=n)
    capacity = int(rng.integers(5, max(6, int(costs.sum() // 2))))
    return make_problem(r, costs.tolist(), capacity, kernel=X @ X.T, segments=segments)
