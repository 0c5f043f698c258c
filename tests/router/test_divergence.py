"""The reference-free context divergence (issue 21)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx import prepare
from budgetctx.router import context_divergence

TEXT = (
    "Chest pain began on Monday. Troponin was negative twice. An ECG showed no ischemia. "
    "Aspirin was started. The patient was discharged home with cardiology follow-up."
)


def test_whole_document_has_zero_divergence_and_disjoint_context_is_larger() -> None:
    doc = prepare(TEXT)
    n = doc.n_units
    assert context_divergence(doc.features, range(n)) == 0.0
    one = context_divergence(doc.features, [0])
    most = context_divergence(doc.features, range(n - 1))
    assert 0 < most < one <= 1
    assert context_divergence(doc.features, []) == 1.0


@settings(max_examples=25, deadline=None)
@given(st.sets(st.integers(0, 4), min_size=1))
def test_divergence_is_in_unit_interval(kept: set[int]) -> None:
    doc = prepare(TEXT)
    d = context_divergence(doc.features, sorted(kept))
    assert 0.0 <= d <= 1.0 and np.isfinite(d)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sets(st.integers(0, 4)), min_size=1, max_size=4))
def test_divergences_of_several_contexts_are_each_contexts_divergence(
    contexts: list[set[int]],
) -> None:
    from budgetctx.router import context_divergences

    doc = prepare(TEXT)
    kept = [sorted(k) for k in contexts]
    assert context_divergences(doc.features, kept) == [
        context_divergence(doc.features, k) for k in kept
    ]


def test_presence_counts_each_distinct_term_of_a_unit_once() -> None:
    # issue 21, fourth pass: the document's distribution is the share of units each term is
    # in, whatever its TF-IDF weight; checked against the divergence written out by hand
    from scipy import sparse

    from budgetctx.representations import DenseKernel, UnitFeatures
    from budgetctx.router import context_divergences

    X = sparse.csr_matrix([[0.9, 0.1, 0.0], [0.0, 0.5, 0.5], [0.2, 0.0, 0.0]])
    f = UnitFeatures(np.ones(3), DenseKernel(np.eye(3)), "centroid", X=X)
    doc = np.array([2.0, 2.0, 1.0]) / 5
    ctx = np.array([1.0, 1.0, 0.0]) / 2
    m = (doc + ctx) / 2

    def kl(a: np.ndarray) -> float:
        nz = a > 0
        return float(np.sum(a[nz] * np.log2(a[nz] / m[nz])))

    presence = context_divergences(f, [[0]], terms="presence")[0]
    mass = context_divergences(f, [[0]], terms="mass")[0]
    assert presence == pytest.approx(0.5 * kl(doc) + 0.5 * kl(ctx))
    assert presence != pytest.approx(mass)


def test_unknown_term_weighting_is_refused_with_the_choices() -> None:
    from budgetctx._errors import InvalidParameterError
    from budgetctx.router import context_divergences

    doc = prepare(TEXT)
    with pytest.raises(InvalidParameterError, match="'presence'"):
        context_divergences(doc.features, [[0]], terms="bigram")
