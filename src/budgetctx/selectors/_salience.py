"""Which no-query salience a selector reads as relevance (issue 21, third pass).

``salience="centroid"`` (MMR's default) reads the relevance the features carry: the cosine
to the document centroid without a query, with the dialogue filler rule
(:mod:`budgetctx.representations._salience`). ``salience="fused"`` (RCD's and facility's
default) reads :func:`~budgetctx.representations._salience.fused_salience` instead: the rank
mean of that cosine and the unit's number of distinct content terms. With a query,
relevance is the query's and neither option changes it.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
from numpy.typing import NDArray

from budgetctx._core.validation import OneOf
from budgetctx.representations._salience import fused_salience
from budgetctx.selectors._base import SelectionProblem

__all__ = ["SALIENCE", "SALIENCE_OPTION", "salience_weights", "with_salience"]

SALIENCE = ("centroid", "fused")

SALIENCE_OPTION = OneOf(
    SALIENCE,
    fix="'centroid' reads the centroid cosine, 'fused' its rank mean with content-term count.",
)


def with_salience(problem: SelectionProblem, salience: str) -> SelectionProblem:
    """``problem`` with its no-query relevance replaced as ``salience`` says (the same
    problem when there is a query, nothing to change, no term matrix, or it is fused already).

    >>> from scipy import sparse
    >>> import numpy as np
    >>> from budgetctx.representations import DenseKernel, UnitFeatures
    >>> X = sparse.csr_matrix([[1.0, 0.0, 0.0], [0.6, 0.6, 0.5]])
    >>> f = UnitFeatures(np.array([0.9, 0.6]), DenseKernel(np.eye(2)), "centroid", X=X)
    >>> p = SelectionProblem(((0,), (1,)), np.array([3, 9]), f, capacity=9)
    >>> with_salience(p, "fused").relevance.tolist()
    [0.45, 0.45]
    """
    features = problem.features
    if (
        salience == "centroid"
        or features.X is None
        or not features.relevance_source.startswith("centroid")
        or problem.n == 0
    ):
        return problem
    relevance = fused_salience(features.relevance, features.X)
    # "fused" as the source, so that a problem already read this way is not fused again
    fused = dataclasses.replace(features, relevance=relevance, relevance_source="fused")
    # a shallow copy keeps the unit costs the problem computed once (replace() would
    # recompute them for every candidate of least_divergence)
    out = copy.copy(problem)
    object.__setattr__(out, "features", fused)
    return out


def salience_weights(
    problem: SelectionProblem, weights: NDArray[np.float64] | None
) -> NDArray[np.float64] | None:
    """``weights`` times each unit's no-query relevance over the largest (the released
    facility's relevance-weighted coverage); ``weights`` unchanged with a query (whose own
    weighting :func:`~budgetctx.selectors._query.query_coverage_weights` applies), with
    relevance given by the caller, or when no unit is salient.

    >>> from budgetctx.representations import DenseKernel, UnitFeatures
    >>> f = UnitFeatures(np.array([0.5, 0.25]), DenseKernel(np.eye(2)), "centroid")
    >>> p = SelectionProblem(((0,), (1,)), np.array([3, 9]), f, capacity=9)
    >>> salience_weights(p, None).tolist()
    [1.0, 0.5]
    """
    features = problem.features
    source = features.relevance_source
    if not (source.startswith("centroid") or source == "fused") or problem.n == 0:
        return weights
    r = np.clip(np.asarray(features.relevance, dtype=np.float64), 0.0, None)
    top = float(r.max())
    if top <= 0:
        return weights
    out: NDArray[np.float64] = r / top if weights is None else weights * (r / top)
    return out
