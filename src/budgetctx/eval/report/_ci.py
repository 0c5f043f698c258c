"""The one place the report asks for a confidence interval, so that the bootstrap is shared
with the rest of the harness (``budgetctx.eval.metrics.bootstrap_ci``)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["interval"]


def interval(
    values: Sequence[float], *, confidence: float, seed: int, n_resamples: int = 1000
) -> tuple[float, float, float]:
    """``(mean, low, high)`` of ``values``: a bootstrap interval over examples.

    >>> interval([0.5, 0.5, 0.5], confidence=0.95, seed=0)
    (0.5, 0.5, 0.5)
    """
    # Imported at call time: the report package stays importable for formatting stored
    # cells, whatever the metrics package comes to load (BERTScore, ROUGE backends).
    from budgetctx.eval.metrics import bootstrap_ci

    ci = bootstrap_ci(list(values), n_resamples=n_resamples, confidence=confidence, seed=seed)
    return float(ci.estimate), float(ci.low), float(ci.high)
