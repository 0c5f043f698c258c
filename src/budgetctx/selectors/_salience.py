"""Which no-query salience a selector reads as relevance (issue 21, third pass).

``salience="centroid"`` (the default) reads the relevance the features carry: the cosine to
the document centroid without a query, with the dialogue filler rule
(:mod:`budgetctx.representations._salience`). ``salience="fused"`` reads
:func:`~budgetctx.representations._salience.fused_salience` instead: the rank mean of that
cosine and the unit's number of distinct content terms. With a query, relevance is the
query's and neither option changes it.
"""

from __future__ import annotations

import copy
import dataclasses

from budgetctx._core.validation import OneOf
from budgetctx.representations._salience import fused_salience
from budgetctx.selectors._base import SelectionProblem

__all__ = ["SALIENCE", "SALIENCE_OPTION", "with_salience"]

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
