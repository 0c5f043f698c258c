"""The n x n kernel is built only when a selector reads it, and the route statistics read
the same bits without it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from budgetctx import build_context, prepare
from budgetctx.data import sample_note
from budgetctx.representations import DenseKernel
from budgetctx.representations import _features as features_module
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


# hierarchical reads similarity for its redundancy term; with lambda_=1 it reads relevance only
@pytest.mark.parametrize("selector", ["lead", "shuffled", "sliding", "hierarchical:lambda_=1"])
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


def _rows_equal_g(X: sparse.csr_matrix, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(features_module, "ROWS_FROM_X", 1)
    kernel = DeferredDenseKernel(X)
    rows = [kernel.positive_row(j).copy() for j in range(X.shape[0])]
    at = kernel.positive_at(np.arange(X.shape[0]), 3)
    assert "G" not in kernel.__dict__  # computed from X
    full = DenseKernel(kernel.G).positive
    for j, row in enumerate(rows):
        assert row.tobytes() == full[j].tobytes(), j
    assert at.tobytes() == full[:, 3].tobytes()


def test_rows_from_x_are_the_kernels_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 27: MMR on a large document reads its rows from X instead of the n x n product
    rng = np.random.default_rng(1)
    for _ in range(10):
        X = sparse.random(40, 60, density=0.15, random_state=rng, format="csr")
        X.data = rng.standard_normal(X.nnz)
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            perm = rng.permutation(hi - lo) + lo
            X.indices[lo:hi], X.data[lo:hi] = X.indices[perm], X.data[perm]
        _rows_equal_g(X, monkeypatch)
    real = prepare(sample_note() * 3).features.kernel
    assert isinstance(real, DeferredDenseKernel)
    _rows_equal_g(real.X, monkeypatch)


def test_mmr_selects_the_same_from_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    text = sample_note() * 4
    before = [build_context(text, b, selector="mmr") for b in (64, 256, 1024)]
    monkeypatch.setattr(features_module, "ROWS_FROM_X", 1)
    doc = prepare(text)
    for b, ctx in zip((64, 256, 1024), before, strict=True):
        again = doc.select(b, selector="mmr")
        assert again.text == ctx.text
        assert [u.gain for u in again.units] == [u.gain for u in ctx.units]
    assert "G" not in doc.features.kernel.__dict__


def test_coverage_kernel_is_the_kernel_itself_when_nothing_is_negative() -> None:
    # TF-IDF rows are non-negative, so max(G, 0) would copy G unchanged (issue 27 follow-up)
    kernel = prepare(sample_note()).features.kernel
    assert isinstance(kernel, DeferredDenseKernel)
    assert kernel.positive is kernel.G
    rng = np.random.default_rng(2)
    signed = sparse.csr_matrix(rng.standard_normal((12, 6)))
    for k in (DeferredDenseKernel(signed), DenseKernel(np.asarray((signed @ signed.T).todense()))):
        assert k.positive is not k.G
        assert np.array_equal(k.positive, np.maximum(k.G, 0.0))
        assert not np.signbit(k.positive).any()
    # -0.0 is not left as it is either: max(-0.0, 0) is +0.0
    zero = DenseKernel(np.array([[1.0, -0.0], [-0.0, 1.0]]))
    assert zero.positive is not zero.G and not np.signbit(zero.positive).any()
