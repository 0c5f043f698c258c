"""The reference-free context divergence (issue 21)."""

from __future__ import annotations

import numpy as np
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
