"""Facility location and RCD use the query when one is given (issue 22): coverage is weighted
by relevance to it (``selectors._query``), so the unit the question asks about is covered."""

from __future__ import annotations

import numpy as np
import pytest

from budgetctx import prepare
from budgetctx.representations import DenseKernel, UnitFeatures
from budgetctx.selectors import SelectionProblem
from budgetctx.selectors._query import query_coverage_weights

FILLER = [
    "The committee discussed the timeline for the new software release.",
    "Rainfall in the northern district was below average for the season.",
    "Engineers tested the prototype engine at high altitude.",
    "Students were asked to submit their essays before Friday.",
    "The contract allows either party to terminate with thirty days notice.",
]
NEEDLE = "The patient's cousin Eleanor keeps 14 parrots named after planets."


@pytest.mark.parametrize("selector", ["facility", "rcd"])
def test_the_unit_the_query_asks_about_is_covered(selector: str) -> None:
    # the needle sits in the middle of units that cover each other better than it
    text = " ".join([*FILLER * 3, NEEDLE, *FILLER * 3])
    with_query = prepare(text, query="How many parrots does Eleanor keep?", profile=None)
    without = prepare(text, profile=None)
    budget = 40
    assert NEEDLE in with_query.select(budget, selector=selector).text
    assert NEEDLE not in without.select(budget, selector=selector).text


def test_weights_follow_relevance_only_for_a_query() -> None:
    kernel = DenseKernel(np.eye(3))
    units, tokens = ((0,), (1,), (2,)), np.ones(3, dtype=np.int64)
    query = SelectionProblem(
        units, tokens, UnitFeatures(np.array([0.0, 1.0, 4.0]), kernel, "query"), 2
    )
    centroid = SelectionProblem(
        units, tokens, UnitFeatures(np.array([0.0, 1.0, 4.0]), kernel, "centroid"), 2
    )
    prior = np.array([1.0, 0.5, 0.5])
    assert query_coverage_weights(query, prior).tolist() == [0.0, 0.125, 0.5]
    assert query_coverage_weights(centroid, prior) is prior  # no query: unchanged
