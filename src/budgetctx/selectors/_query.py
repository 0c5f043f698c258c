"""Query-weighted coverage for facility location and RCD (issue 22).

With a query, covering a unit is worth its relevance to the query: the coverage weight of
unit ``i`` becomes ``w_i * r_i / max_j r_j`` (``w_i`` the lead prior and fragment rule of
:mod:`budgetctx.selectors._priors`). Facility location then covers what the query asks about
instead of the whole document, and RCD's coverage term does the same (its relevance term
already reads the query). Weights stay ``>= 0``, so both objectives stay monotone
submodular. Without a query (relevance to the centroid) nothing changes.

>>> import numpy as np
>>> from budgetctx.representations import UnitFeatures, DenseKernel
>>> from budgetctx.selectors import SelectionProblem
>>> f = UnitFeatures(np.array([0.0, 0.5, 1.0]), DenseKernel(np.eye(3)), "query")
>>> p = SelectionProblem(((0,), (1,), (2,)), np.ones(3, dtype=np.int64), f, 2)
>>> query_coverage_weights(p, None).tolist()
[0.0, 0.5, 1.0]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from budgetctx.selectors._base import SelectionProblem

__all__ = ["query_coverage_weights"]

FloatArray = NDArray[np.float64]


def query_coverage_weights(
    problem: SelectionProblem, weights: FloatArray | None
) -> FloatArray | None:
    """``weights`` times each unit's normalised query relevance; ``weights`` unchanged when
    the relevance is not to a query, or no unit is relevant."""
    features = problem.features
    if features.relevance_source != "query" or problem.n == 0:
        return weights
    r = np.clip(np.asarray(features.relevance, dtype=np.float64), 0.0, None)
    top = float(r.max())
    if top <= 0:
        return weights
    out: FloatArray = r / top if weights is None else weights * (r / top)
    if not np.any(out > 0):
        return weights
    return out
