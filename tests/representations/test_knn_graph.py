"""The k-nearest-neighbour coverage graph used past DENSE_LIMIT units (issue 10, F2): exact
where no term is common, linear work where every unit shares terms, and always a symmetric
non-negative kernel carrying exact similarities (so facility location stays monotone
submodular)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from budgetctx.representations import SparseKernel, TfidfRepresentation, _features
from budgetctx.representations._csr import CsrRows


def _flowsheet(n: int) -> sparse.csr_matrix:
    """TF-IDF rows of vitals lines: a few terms shared by every line (the quadratic case)."""
    rng = np.random.default_rng(0)
    lines = [
        f"HR {rng.integers(50, 120)} BP {rng.integers(90, 160)}/{rng.integers(50, 95)} "
        f"SpO2 {rng.integers(88, 100)} T {rng.uniform(36, 39):.1f} note{rng.integers(0, n // 4)}"
        for _ in range(n)
    ]
    X = TfidfRepresentation().encode(lines).X
    if isinstance(X, CsrRows):  # a small document's rows (issue 27): scipy's arrays
        X = X.to_scipy()
    assert sparse.issparse(X)
    return sparse.csr_matrix(X)


def _exact_top(X: sparse.csr_matrix, k: int) -> np.ndarray:
    G = (X @ X.T).toarray()
    return G, np.argsort(-G, axis=1, kind="stable")[:, : k + 1]


def _check_kernel(S: sparse.csr_matrix, G: np.ndarray) -> None:
    assert (S.data > 0).all()
    assert abs(S - S.T).max() < 1e-12  # symmetric
    r, c = S.nonzero()
    assert np.allclose(np.asarray(S[r, c]).ravel(), G[r, c])  # exact similarities


def test_exact_top_k_when_no_term_is_common() -> None:
    X = _flowsheet(300)
    k = 5
    G, nearest = _exact_top(X, k)
    S = _features._top_k_graph(X, k, 64, postings=10_000)
    _check_kernel(S, G)
    for i in range(X.shape[0]):
        kept = set(S[i].indices.tolist())
        # ties at the k-th similarity may pick another unit of the same similarity
        kth = np.sort(G[i])[::-1][k]
        assert all(j in kept or G[i, j] <= kth + 1e-12 for j in nearest[i])


def test_pruned_postings_keep_a_valid_kernel_and_most_neighbours() -> None:
    X = _flowsheet(600)
    k = 8
    G, nearest = _exact_top(X, k)
    S = _features._top_k_graph(X, k, 64, postings=16)
    _check_kernel(S, G)
    assert (S.diagonal() > 0).all()  # every unit covers itself
    found = np.mean([len(set(S[i].indices) & set(nearest[i])) / (k + 1) for i in range(600)])
    assert found > 0.5, found


def test_sparse_kernel_with_pruned_postings_is_usable() -> None:
    X = _flowsheet(200)
    sk = SparseKernel(X, top_k=4, postings=8)
    rows, vals = sk.coverage_column(3)
    assert rows is not None and (vals > 0).all()
    assert sk.coverage_sums().shape == (200,)


def test_work_is_linear_in_the_number_of_units(monkeypatch: pytest.MonkeyPatch) -> None:
    """Count the product entries ranked: a full X @ X.T would grow with n^2."""
    counted = [0]
    real = _features._row_top

    def counting(indptr, indices, data, m):  # type: ignore[no-untyped-def]
        counted[0] += len(data)
        return real(indptr, indices, data, m)

    monkeypatch.setattr(_features, "_row_top", counting)

    def entries(n: int) -> int:
        counted[0] = 0
        _features._top_k_graph(_flowsheet(n), 8, 64, postings=32)
        return counted[0]

    small, large = entries(500), entries(2000)
    assert large < 6 * small, (small, large)
    full = (_flowsheet(2000) @ _flowsheet(2000).T).nnz
    assert large < full / 4, (large, full)
