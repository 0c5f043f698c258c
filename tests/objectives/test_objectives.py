"""Incremental gains equal differences of the from-scratch definitions; submodularity."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from budgetctx import InvalidParameterError
from budgetctx.objectives import FacilityLocation, LogDet, RCDObjective, Relevance
from budgetctx.representations import DenseKernel, SparseKernel, UnitFeatures, psd_project


def _features(seed: int, n: int = 10, d: int = 5) -> UnitFeatures:
    rng = np.random.default_rng(seed)
    X = rng.random((n, d)) ** 2
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return UnitFeatures(
        relevance=rng.random(n), kernel=DenseKernel(X @ X.T), relevance_source="given", X=X
    )


def _objectives(f: UnitFeatures) -> list[FacilityLocation | LogDet | RCDObjective | Relevance]:
    # a lead prior with one zero weight (a fragment), as the selectors build it
    w = np.exp(-0.3 * np.arange(f.n))
    w[1] = 0.0
    return [
        Relevance(f.relevance),
        FacilityLocation(f),
        LogDet(f, eta=1.5),
        RCDObjective(f, alpha=0.5, beta=0.3, gamma=0.2),
        FacilityLocation(f, weights=w),
        RCDObjective(f, alpha=0.5, beta=0.3, gamma=0.2, weights=w),
    ]


@pytest.mark.parametrize("seed", range(5))
def test_incremental_gain_equals_definition(seed: int) -> None:
    f = _features(seed)
    rng = np.random.default_rng(seed)
    for obj in _objectives(f):
        S: list[int] = []
        # Evaluate some gains early so that cached Cholesky rows go stale, then grow S.
        for e in rng.permutation(f.n)[:3]:
            obj.gain(int(e))
        for e in rng.permutation(f.n)[:6]:
            e = int(e)
            expected = obj.evaluate([*S, e]) - obj.evaluate(S)
            assert obj.gain(e) == pytest.approx(expected, rel=1e-6, abs=1e-9)
            obj.add(e)
            S.append(e)


@pytest.mark.parametrize("seed", range(5))
def test_monotone_submodular(seed: int) -> None:
    f = _features(seed, n=9)
    rng = np.random.default_rng(100 + seed)
    for obj in _objectives(f)[1:]:
        for _ in range(20):
            perm = [int(i) for i in rng.permutation(f.n)]
            b_size = int(rng.integers(1, 7))
            B = perm[:b_size]
            A = B[: int(rng.integers(0, b_size + 1))]
            e = perm[b_size]
            gain_a = obj.evaluate([*A, e]) - obj.evaluate(A)
            gain_b = obj.evaluate([*B, e]) - obj.evaluate(B)
            assert gain_b >= -1e-9  # monotone
            assert gain_a >= gain_b - 1e-9  # diminishing returns


def test_hand_computed_logdet() -> None:
    K = np.array([[1.0, 0.5], [0.5, 1.0]])
    f = UnitFeatures(relevance=np.ones(2), kernel=DenseKernel(K), relevance_source="given")
    obj = LogDet(f, eta=1.0)
    assert obj.gain(0) == pytest.approx(np.log(2.0))
    obj.add(0)
    # det([[2, .5], [.5, 2]]) = 3.75 -> gain log(3.75) - log(2)
    assert obj.gain(1) == pytest.approx(np.log(3.75) - np.log(2.0))


def test_rcd_terms_are_scaled_to_unit_best_singleton() -> None:
    f = _features(3)
    rcd = RCDObjective(f, alpha=1.0, beta=1.0, gamma=1.0)
    best = max(rcd.gain(e) for e in range(f.n))
    assert best <= 3.0 + 1e-9
    for _, term in rcd.terms:
        assert max(term.evaluate([e]) for e in range(f.n)) == pytest.approx(1.0)


def test_initial_gains_match_gain() -> None:
    f = _features(4)
    for obj in _objectives(f):
        init = obj.initial_gains()
        assert init == pytest.approx([obj.gain(e) for e in range(f.n)])


@pytest.mark.parametrize("weight", ["alpha", "beta", "gamma"])
@pytest.mark.parametrize("bad", [-0.1, float("inf"), float("nan"), "1", None, True])
def test_bad_weights_rejected(weight: str, bad: object) -> None:
    weights: dict[str, object] = {"alpha": 1.0, "beta": 1.0, "gamma": 1.0, weight: bad}
    with pytest.raises(InvalidParameterError, match=weight) as info:
        RCDObjective(_features(0), **weights)  # type: ignore[arg-type]
    assert info.value.parameter == weight


@pytest.mark.parametrize(
    ("make", "parameter"),
    [
        (lambda f: LogDet(f, eta=0.0), "eta"),
        (lambda f: LogDet(f, eta=float("inf")), "eta"),
        (lambda f: LogDet(f, scale=-1.0), "scale"),
        (lambda f: RCDObjective(f, alpha=1, beta=0, gamma=1, eta="1"), "eta"),
        (lambda f: FacilityLocation(f, scale=float("nan")), "scale"),
        (lambda f: FacilityLocation(f.kernel), "features"),
        (lambda f: Relevance(list(f.relevance)), "relevance"),
        (lambda f: Relevance(f.relevance, scale="2"), "scale"),
    ],
)
def test_bad_options_rejected_at_construction(make: Any, parameter: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        make(_features(0))
    assert info.value.parameter == parameter
    assert f"{parameter!r} parameter of" in str(info.value)


def test_sparse_kernel_agrees_with_dense() -> None:
    from scipy import sparse

    rng = np.random.default_rng(0)
    dense = (rng.random((40, 30)) > 0.8) * rng.random((40, 30))
    dense[:, 0] += 0.01  # no empty rows
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    X = sparse.csr_matrix(dense)
    G = dense @ dense.T
    sk = SparseKernel(X, top_k=5)
    dk = DenseKernel(G)
    for j in (0, 7, 39):
        assert sk.column(j) == pytest.approx(dk.column(j), abs=1e-6)
        assert sk.gram_column(j) == pytest.approx(G[:, j], abs=1e-6)
        rows, vals = sk.coverage_column(j)
        assert rows is not None
        # every kept neighbour carries its exact similarity, and the 5 nearest are kept
        assert vals == pytest.approx(G[rows, j], abs=1e-6)
        nearest = set(np.argsort(-G[:, j])[:6].tolist())
        assert nearest <= set(rows.tolist()) | {j}
    assert sk.gram_diag() == pytest.approx(np.ones(40))


def test_weighted_coverage_hand_computed() -> None:
    K = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 1.0]])
    f = UnitFeatures(relevance=np.ones(3), kernel=DenseKernel(K), relevance_source="given")
    w = np.array([1.0, 0.5, 0.0])
    obj = FacilityLocation(f, weights=w)
    # unit 1 covers 0 by 0.5 (weight 1), itself by 1 (weight 0.5), unit 2 counts for nothing
    assert obj.initial_gains() == pytest.approx([1.25, 1.0, 0.1])
    obj.add(1)
    assert obj.gain(0) == pytest.approx(0.5)
    assert obj.evaluate([0, 1]) == pytest.approx(1.5)


def test_weighted_coverage_sums_sparse_agrees_with_its_columns() -> None:
    from scipy import sparse

    rng = np.random.default_rng(1)
    dense = (rng.random((30, 20)) > 0.7) * rng.random((30, 20))
    dense[:, 0] += 0.01
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    for kernel in (SparseKernel(sparse.csr_matrix(dense), top_k=4), DenseKernel(dense @ dense.T)):
        w = rng.random(30)
        expected = []
        for j in range(30):
            rows, vals = kernel.coverage_column(j)
            expected.append(float(w @ vals) if rows is None else float(w[rows] @ vals))
        assert kernel.weighted_coverage_sums(w) == pytest.approx(expected, rel=1e-6)
        assert kernel.weighted_coverage_sums(np.ones(30)) == pytest.approx(kernel.coverage_sums())


def test_psd_projection() -> None:
    K = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.5], [0.1, 0.5, 1.0]])
    P = psd_project(K)
    assert np.allclose(P, P.T)
    assert np.linalg.eigvalsh(P).min() > -1e-9
    psd = np.array([[2.0, 1.0], [1.0, 2.0]])
    assert psd_project(psd) == pytest.approx(psd, abs=1e-7)
    with pytest.raises(InvalidParameterError, match="square"):
        psd_project(np.ones((2, 3)))


def test_features_from_user_kernel() -> None:
    f = UnitFeatures.from_kernel([[1.0, 1.2], [1.2, 1.0]], [0.5, -0.2])
    assert f.relevance.tolist() == [0.5, 0.0]
    assert np.linalg.eigvalsh(f.kernel.G.astype(float)).min() > -1e-6


def test_weighted_coverage_sums_blocks_give_the_bits_of_larger_blocks() -> None:
    # The dense kernel multiplies 64 rows at a time (issue 27 follow-up; 512 before). Each
    # output is one row's dot with the weights, so the block size must not change a bit of
    # it: a change would move RCD's coverage scale and facility's first gains.
    rng = np.random.default_rng(3)
    for n in (5, 64, 203, 517):
        X = rng.random((n, 40)) * (rng.random((n, 40)) > 0.6)
        X[:, 0] += 0.01
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        kernel = DenseKernel(X @ X.T)
        w = rng.random(n)
        pos = kernel.positive
        big = np.concatenate([pos[b : b + 512].astype(np.float64) @ w for b in range(0, n, 512)])
        assert np.array_equal(kernel.weighted_coverage_sums(w), big)
        assert kernel.weighted_coverage_sums(w) == pytest.approx(pos.astype(np.float64) @ w)


@pytest.mark.parametrize("n", [1, 7, 64, 300])
@pytest.mark.parametrize("weighted", [False, True])
def test_float64_coverage_rows_give_the_float32_rows_bits(n: int, weighted: bool) -> None:
    """A small dense kernel's float64 coverage rows (issue 27, sixth pass) give every gain and
    state of facility location bit for bit what the float32 rows give, along a greedy run."""
    rng = np.random.default_rng(n)
    X = rng.random((n, 6)).astype(np.float32) * (rng.random((n, 6)) < 0.5)
    features = UnitFeatures(np.ones(n), DenseKernel(X @ X.T), "centroid")
    w = rng.random(n) if weighted else None
    fast = FacilityLocation(features, scale=0.7, weights=w)
    slow = FacilityLocation(features, scale=0.7, weights=w)
    assert fast._rows64 is not None
    slow._rows64 = None  # the float32 path, as before
    left = list(range(n))
    while left:
        gains = [fast.gain(e) for e in left]
        assert gains == [slow.gain(e) for e in left]
        e = left.pop(int(np.argmax(gains)))
        fast.add(e)
        slow.add(e)
        assert fast.cur.tobytes() == slow.cur.tobytes() and fast.cur_sum == slow.cur_sum


def test_large_dense_kernels_keep_no_float64_copy() -> None:
    from budgetctx.representations._features import F64_UNITS

    small = DenseKernel(np.eye(3))
    widened = small.positive_f64()
    assert widened is not None and widened.dtype == np.float64
    assert small.positive_f64() is widened  # computed once
    assert DenseKernel(np.zeros((F64_UNITS, F64_UNITS), dtype=np.float32)).positive_f64() is None


def test_vector_dot_is_matmuls_bits() -> None:
    """Facility location's gains use ``a.dot(w)`` where they used ``a @ w``: numpy computes
    both with the same BLAS dot of two float64 vectors, so not a bit moves."""
    rng = np.random.default_rng(7)
    for n in (0, 1, 3, 76, 513, 4095):
        for scale in (1e-8, 1.0, 1e8):
            a, w = rng.random(n) * scale, rng.random(n)
            assert float(a.dot(w)) == float(a @ w)


def test_a_pickled_kernel_leaves_its_float64_copy_behind() -> None:
    import pickle

    kernel = DenseKernel(np.eye(4) * 0.5)
    widened = kernel.positive_f64()
    assert widened is not None
    clone = pickle.loads(pickle.dumps(kernel))
    assert clone._pos64 is None and kernel._pos64 is widened
    again = clone.positive_f64()
    assert again is not None and again.tobytes() == widened.tobytes()
