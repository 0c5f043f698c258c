"""Seeded percentile-bootstrap confidence intervals, single-sample and paired."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from budgetctx._errors import InvalidParameterError

__all__ = ["ConfidenceInterval", "PairedBootstrap", "bootstrap_ci", "paired_bootstrap"]

Statistic = Callable[..., Any]

# Resampled index blocks are drawn in chunks of at most this many entries (memory bound).
_CHUNK = 4_000_000


@dataclass(frozen=True)
class ConfidenceInterval:
    """A point estimate with a percentile-bootstrap interval ``[low, high]``.

    ``n == 0`` (no data) gives ``nan`` everywhere.

    >>> ci = bootstrap_ci([0.2, 0.4, 0.6], n_resamples=200, seed=0)
    >>> round(ci.estimate, 2), ci.low <= ci.estimate <= ci.high
    (0.4, True)
    """

    estimate: float
    low: float
    high: float
    n: int
    confidence: float
    n_resamples: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PairedBootstrap:
    """Paired comparison of two systems scored on the same items.

    ``difference`` is the interval of ``statistic(a) - statistic(b)`` (resampling items, so the
    pairing is kept); ``fraction_a_better`` is the share of resamples in which ``a`` beats
    ``b`` (ties count as not better).

    >>> r = paired_bootstrap([0.5, 0.6, 0.7], [0.4, 0.5, 0.6], n_resamples=200)
    >>> round(r.difference.estimate, 2), r.fraction_a_better
    (0.1, 1.0)
    """

    estimate_a: float
    estimate_b: float
    difference: ConfidenceInterval
    fraction_a_better: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def bootstrap_ci(
    values: ArrayLike,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    statistic: Statistic = np.mean,
) -> ConfidenceInterval:
    """Percentile-bootstrap interval of ``statistic(values)``, deterministic for a ``seed``.

    ``statistic`` takes a 1-D array (``np.mean``, ``np.median``, ...); one that accepts
    ``axis=`` is applied to all resamples at once. Empty ``values`` give ``nan`` with ``n=0``.

    >>> bootstrap_ci([1.0, 1.0, 1.0]).to_dict()["high"]
    1.0
    """
    x = _as_1d(values, "values")
    _check_options(n_resamples, confidence, seed)
    if x.size == 0:
        return _empty_ci(confidence, n_resamples, seed)
    estimate = float(statistic(x))
    stats = _resample(x[None, :], n_resamples, seed, statistic)[0]
    low, high = _percentiles(stats, confidence)
    return ConfidenceInterval(estimate, low, high, int(x.size), confidence, n_resamples, seed)


def paired_bootstrap(
    a: ArrayLike,
    b: ArrayLike,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    statistic: Statistic = np.mean,
) -> PairedBootstrap:
    """Is system ``a`` better than ``b``? Both are scores on the same items, in the same order.

    Items are resampled with replacement (one index set for both systems); the result holds the
    interval of the difference ``statistic(a) - statistic(b)`` and the fraction of resamples
    where it is positive. Empty inputs give ``nan``.
    """
    xa, xb = _as_1d(a, "a"), _as_1d(b, "b")
    if xa.size != xb.size:
        raise InvalidParameterError(
            f"a and b must score the same items. Got {xa.size} and {xb.size} values instead. "
            "Pass aligned per-item scores of the two systems.",
            parameter="b",
            value=int(xb.size),
        )
    _check_options(n_resamples, confidence, seed)
    if xa.size == 0:
        empty = _empty_ci(confidence, n_resamples, seed)
        return PairedBootstrap(math.nan, math.nan, empty, math.nan)
    est_a, est_b = float(statistic(xa)), float(statistic(xb))
    stats = _resample(np.stack([xa, xb]), n_resamples, seed, statistic)
    diff = stats[0] - stats[1]
    low, high = _percentiles(diff, confidence)
    ci = ConfidenceInterval(est_a - est_b, low, high, int(xa.size), confidence, n_resamples, seed)
    return PairedBootstrap(est_a, est_b, ci, float(np.mean(diff > 0)))


def _resample(
    rows: NDArray[np.float64], n_resamples: int, seed: int, statistic: Statistic
) -> NDArray[np.float64]:
    """``statistic`` of ``n_resamples`` resamples of each row, using the same indices per row."""
    rng = np.random.default_rng(seed)
    n = rows.shape[1]
    out = np.empty((rows.shape[0], n_resamples))
    vectorised = _accepts_axis(statistic)
    step = max(1, _CHUNK // n)
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        idx = rng.integers(0, n, size=(stop - start, n))
        for k, row in enumerate(rows):
            sample = row[idx]
            if vectorised:
                out[k, start:stop] = statistic(sample, axis=1)
            else:
                out[k, start:stop] = [statistic(s) for s in sample]
    return out


def _accepts_axis(statistic: Statistic) -> bool:
    try:
        return "axis" in inspect.signature(statistic).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return False


def _percentiles(stats: NDArray[np.float64], confidence: float) -> tuple[float, float]:
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(stats, [alpha, 1.0 - alpha])
    return float(low), float(high)


def _empty_ci(confidence: float, n_resamples: int, seed: int) -> ConfidenceInterval:
    return ConfidenceInterval(math.nan, math.nan, math.nan, 0, confidence, n_resamples, seed)


def _as_1d(values: ArrayLike | Sequence[float], name: str) -> NDArray[np.float64]:
    try:
        x = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(
            f"{name} must be a sequence of numbers. Got {type(values).__name__} instead. "
            "Pass per-item scores as a list or 1-D array.",
            parameter=name,
            value=type(values).__name__,
        ) from exc
    if x.ndim != 1:
        raise InvalidParameterError(
            f"{name} must be 1-D. Got an array of shape {x.shape} instead. "
            "Pass one score per item.",
            parameter=name,
            value=x.shape,
        )
    if np.isnan(x).any():
        first = int(np.flatnonzero(np.isnan(x))[0])
        raise InvalidParameterError(
            f"{name} contains NaN (first at index {first}). "
            "Drop or impute missing scores before bootstrapping.",
            parameter=name,
            value=first,
        )
    return x


def _check_options(n_resamples: int, confidence: float, seed: int) -> None:
    if not isinstance(n_resamples, int) or isinstance(n_resamples, bool) or n_resamples < 1:
        raise InvalidParameterError(
            f"n_resamples must be an integer >= 1. Got {n_resamples!r} instead. "
            "Pass e.g. n_resamples=1000.",
            parameter="n_resamples",
            value=n_resamples,
        )
    if not (isinstance(confidence, int | float) and 0.0 < confidence < 1.0):
        raise InvalidParameterError(
            f"confidence must be a number in (0, 1). Got {confidence!r} instead. "
            "Pass e.g. confidence=0.95.",
            parameter="confidence",
            value=confidence,
        )
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise InvalidParameterError(
            f"seed must be an integer >= 0. Got {seed!r} instead. Pass e.g. seed=0.",
            parameter="seed",
            value=seed,
        )
