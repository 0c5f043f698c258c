"""Seeded bootstrap intervals, single and paired."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx import InvalidParameterError
from budgetctx.eval.metrics import ConfidenceInterval, bootstrap_ci, paired_bootstrap


def _scores(n: int = 80, seed: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.3, 0.1, size=n)


def test_deterministic_for_a_seed_and_contains_the_mean() -> None:
    x = _scores()
    a, b = bootstrap_ci(x, seed=7), bootstrap_ci(list(x), seed=7)
    assert a == b
    assert a.estimate == float(np.mean(x))
    assert a.low < a.estimate < a.high
    assert (a.n, a.confidence, a.n_resamples, a.seed) == (80, 0.95, 1000, 7)
    assert bootstrap_ci(x, seed=8) != a
    # roughly the normal-theory interval mean ± 1.96 s / sqrt(n)
    half = 1.96 * x.std(ddof=1) / math.sqrt(x.size)
    assert a.high - a.low == pytest.approx(2 * half, rel=0.2)
    json.dumps(a.to_dict())


def test_wider_confidence_gives_wider_interval() -> None:
    x = _scores()
    narrow, wide = bootstrap_ci(x, confidence=0.5), bootstrap_ci(x, confidence=0.99)
    assert wide.low < narrow.low < narrow.high < wide.high


def test_statistic_with_and_without_axis_agree() -> None:
    x = _scores(30)
    vectorised = bootstrap_ci(x, statistic=np.median, n_resamples=200)
    looped = bootstrap_ci(x, statistic=lambda v: float(np.median(v)), n_resamples=200)
    assert vectorised == looped
    assert vectorised.estimate == float(np.median(x))


def test_degenerate_inputs_have_defined_answers() -> None:
    empty = bootstrap_ci([])
    assert empty.n == 0 and math.isnan(empty.estimate) and math.isnan(empty.low)
    assert bootstrap_ci([0.4]) == ConfidenceInterval(0.4, 0.4, 0.4, 1, 0.95, 1000, 0)
    const = bootstrap_ci([0.2] * 10)
    assert const.low == const.high == pytest.approx(0.2)
    paired = paired_bootstrap([], [])
    assert paired.difference.n == 0 and math.isnan(paired.fraction_a_better)


def test_paired_bootstrap_sign() -> None:
    b = _scores(60)
    noise = np.random.default_rng(1).normal(0, 0.01, size=60)
    better = paired_bootstrap(b + 0.05 + noise, b, seed=0)
    assert better.difference.estimate == pytest.approx(0.05, abs=0.01)
    assert better.difference.low > 0
    assert better.fraction_a_better == 1.0
    assert better.estimate_a - better.estimate_b == pytest.approx(better.difference.estimate)
    worse = paired_bootstrap(b, b + 0.05 + noise, seed=0)
    assert worse.difference.high < 0 and worse.fraction_a_better == 0.0
    tie = paired_bootstrap(b, b)
    assert tie.difference.estimate == 0.0 and tie.fraction_a_better == 0.0  # ties: not better
    assert paired_bootstrap(b + noise, b, seed=4) == paired_bootstrap(b + noise, b, seed=4)
    json.dumps(better.to_dict())


def test_pairing_matters() -> None:
    # a = b + small constant with large between-item spread: paired CI is tight and positive
    b = np.linspace(0, 1, 40)
    r = paired_bootstrap(b + 0.01, b)
    assert r.difference.low == pytest.approx(0.01) and r.difference.high == pytest.approx(0.01)


def test_bad_input() -> None:
    with pytest.raises(InvalidParameterError, match="n_resamples"):
        bootstrap_ci([1.0], n_resamples=0)
    with pytest.raises(InvalidParameterError, match="confidence"):
        bootstrap_ci([1.0], confidence=95)
    with pytest.raises(InvalidParameterError, match="seed"):
        bootstrap_ci([1.0], seed=-1)
    with pytest.raises(InvalidParameterError, match="NaN"):
        bootstrap_ci([1.0, math.nan])
    with pytest.raises(InvalidParameterError, match="1-D"):
        bootstrap_ci([[1.0]])
    with pytest.raises(InvalidParameterError, match="numbers"):
        bootstrap_ci(["a"])
    with pytest.raises(InvalidParameterError, match="same items"):
        paired_bootstrap([1.0], [1.0, 2.0])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=40), st.integers(0, 2**32))
def test_interval_is_ordered_and_within_the_data(values: list[float], seed: int) -> None:
    ci = bootstrap_ci(values, n_resamples=100, seed=seed)
    assert min(values) - 1e-12 <= ci.low <= ci.high <= max(values) + 1e-12
    assert ci == bootstrap_ci(values, n_resamples=100, seed=seed)
