"""The n x n kernel is built only when a selector reads it, and the route statistics read
the same bits without it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from budgetctx import build_context, prepare
from budgetctx.data import sample_note
from budgetctx.representations import DenseKernel
from budgetctx.representations._features import DeferredDenseKernel, SparseKernel


@pytest.mark.parametrize("unitizer", ["sentence", "window"])
def test_adjacent_equals_the_kernels_bits(unitizer: str) -> None:
    kernel = prepare(sample_note(), unitizer=unitizer).features.kernel
    assert isinstance(kernel, DeferredDenseKernel)
    early = kernel.adjacent()
    assert "G" not in kernel.__dict__  # read from X
    assert np.array_equal(early, DenseKernel(kernel.G).adjacent())
    assert np.array_equal(early, kernel.adjacent())


def test_random_rows_in_any_column_order() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        X = sparse.random(30, 50, density=0.2, random_state=rng, format="csr")
        X.data = rng.standard_normal(X.nnz)
        # shuffle the stored order inside rows: the product sums in that order
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            perm = rng.permutation(hi - lo) + lo
            X.indices[lo:hi], X.data[lo:hi] = X.indices[perm], X.data[perm]
        kernel = DeferredDenseKernel(X)
        early = kernel.adjacent()
        assert np.array_equal(early, DenseKernel(kernel.G).adjacent())


@pytest.mark.parametrize("selector", ["lead", "shuffled", "sliding", "hierarchical"])
def test_selectors_that_read_no_similarity_build_no_kernel(
    selector: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(self: object) -> None:
        raise AssertionError(f"{selector} built the n x n kernel")

    monkeypatch.setattr(DeferredDenseKernel, "G", property(fail))
    monkeypatch.setattr(SparseKernel, "S", property(fail))
    ctx = build_context(sample_note(), 200, selector=selector)
    assert 0 < ctx.tokens_used <= 200
    sparse_ctx = build_context(sample_note(), 200, selector=selector, dense_limit=8)
    assert sparse_ctx.text == ctx.text


@pytest.mark.parametrize("seed", range(3))
def test_a_subset_of_a_deferred_kernel_has_the_same_bits(seed: int) -> None:
    from budgetctx.representations import subset_features

    features = prepare(sample_note()).features
    rows = np.sort(
        np.random.default_rng(seed).choice(features.n, size=features.n // 2, replace=False)
    )
    sub = subset_features(features, rows)
    assert isinstance(sub.kernel, DeferredDenseKernel)
    assert np.array_equal(sub.kernel.G, features.kernel.G[np.ix_(rows, rows)])
    assert np.array_equal(sub.kernel.adjacent(), DenseKernel(sub.kernel.G).adjacent())
