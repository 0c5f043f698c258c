"""Monotone submodular set functions with incremental marginal gains (paper 3.4, App. B).

Each objective keeps the state of a growing set S: ``gain(e)`` is ``F(S + e) - F(S)``,
``add(e)`` grows S, and ``evaluate(S)`` recomputes ``F`` from its definition. ``evaluate`` is
the slow, readable reference used by the naive greedy and by the tests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol

import numpy as np
from numpy.typing import NDArray

from budgetctx._core.validation import Constraint, InstanceOf, Interval, Predicate, validate
from budgetctx.representations import UnitFeatures

__all__ = ["FacilityLocation", "LogDet", "Objective", "RCDObjective", "Relevance"]

FloatArray = NDArray[np.float64]


def _is_vector(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "fiu"


_FEATURES = InstanceOf(
    UnitFeatures, "a UnitFeatures", fix="build one with representations.build_features(encoded)."
)
_SCALE = Interval(float, 0, None, fix="pass a finite scale >= 0 such as 1.")
_ETA = Interval(
    float,
    0,
    None,
    closed="neither",
    fix="use a finite eta > 0 such as 1; it scales the kernel inside log det(I + eta K).",
)
_WEIGHT = Interval(
    float,
    0,
    None,
    fix="use a finite weight >= 0; a negative weight breaks monotone submodularity.",
)


class Objective(Protocol):
    """``gain(e) = F(S + e) - F(S)``; ``add(e)`` grows S; ``evaluate(S)`` from scratch.

    Objectives may also offer ``initial_gains()``: every gain at S = {} as one array.
    """

    def gain(self, e: int) -> float: ...

    def add(self, e: int) -> None: ...

    def evaluate(self, S: Sequence[int]) -> float: ...


class Relevance:
    """``R(S) = scale * sum_{i in S} r_i`` (modular)."""

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "relevance": Predicate(
            _is_vector, "a 1-D numeric numpy array", fix="pass one relevance score per unit."
        ),
        "scale": _SCALE,
    }

    def __init__(self, relevance: FloatArray, *, scale: float = 1.0) -> None:
        ok = validate(
            type(self).__name__, self._constraints, {"relevance": relevance, "scale": scale}
        )
        self.r = relevance
        self.scale: float = ok["scale"]

    def gain(self, e: int) -> float:
        return float(self.scale * self.r[e])

    def initial_gains(self) -> FloatArray:
        """Gains of every unit with S empty, at once."""
        out: FloatArray = self.scale * self.r
        return out

    def add(self, e: int) -> None:
        pass

    def evaluate(self, S: Sequence[int]) -> float:
        return float(self.scale * sum(self.r[i] for i in S))


class FacilityLocation:
    """``C(S) = scale * sum_i w_i max_{j in S} k(i, j)`` with ``k >= 0`` (coverage).

    ``weights`` (``w_i >= 0``, default all 1) say how much covering unit i is worth, e.g. a
    lead prior; non-negative weights keep C monotone submodular.
    """

    _constraints: ClassVar[Mapping[str, Constraint]] = {"features": _FEATURES, "scale": _SCALE}

    def __init__(
        self, features: UnitFeatures, *, scale: float = 1.0, weights: FloatArray | None = None
    ) -> None:
        ok = validate(
            type(self).__name__, self._constraints, {"features": features, "scale": scale}
        )
        self.kernel = features.kernel
        self.scale: float = ok["scale"]
        self.w = None if weights is None else np.asarray(weights, dtype=np.float64)
        self.cur = np.zeros(features.n)
        self.cur_sum = 0.0
        # scratch for a dense column's max with cur: a gain is evaluated thousands of times
        # per selection on a long document, and allocating the n-vector each time cost ~2 us
        self._best = np.empty(features.n)
        # a small dense kernel's coverage rows in float64 (the same values): max with cur
        # then casts nothing (issue 27, sixth pass); None for other kernels
        widened = getattr(self.kernel, "positive_f64", None)
        self._rows64: FloatArray | None = widened() if widened is not None else None

    def initial_gains(self) -> FloatArray:
        sums = (
            self.kernel.coverage_sums()
            if self.w is None
            else self.kernel.weighted_coverage_sums(self.w)
        )
        out: FloatArray = self.scale * sums
        return out

    def gain(self, e: int) -> float:
        # sum max(k - cur, 0) == sum max(k, cur) - sum cur: one temporary instead of three
        w = self.w
        if self._rows64 is not None:
            # ndarray.dot, not @: the same BLAS ddot of two vectors (the same bits) without
            # matmul's generalized-ufunc dispatch, about 1 us of a 2-3 us gain
            best = np.maximum(self._rows64[e], self.cur, out=self._best)
            delta = float((best.sum() if w is None else best.dot(w)) - self.cur_sum)
            return self.scale * max(delta, 0.0)
        rows, vals = self.kernel.coverage_column(e)
        if rows is None:
            best = np.maximum(vals, self.cur, out=self._best)
            delta = float((best.sum() if w is None else best.dot(w)) - self.cur_sum)
        else:
            cur = self.cur[rows]
            best = np.maximum(vals, cur)
            delta = float(best.sum() - cur.sum() if w is None else (best - cur) @ w[rows])
        return self.scale * max(delta, 0.0)

    def add(self, e: int) -> None:
        if self._rows64 is not None:
            np.maximum(self.cur, self._rows64[e], out=self.cur)
            self.cur_sum = float(self.cur.sum() if self.w is None else self.cur.dot(self.w))
            return
        rows, vals = self.kernel.coverage_column(e)
        if rows is None:
            np.maximum(self.cur, vals, out=self.cur)
        else:
            self.cur[rows] = np.maximum(self.cur[rows], vals)
        self.cur_sum = float(self.cur.sum() if self.w is None else self.cur.dot(self.w))

    def evaluate(self, S: Sequence[int]) -> float:
        best = np.zeros(len(self.cur))
        for j in S:
            rows, vals = self.kernel.coverage_column(j)
            if rows is None:
                best = np.maximum(best, vals)
            else:
                best[rows] = np.maximum(best[rows], vals)
        return float(self.scale * (best.sum() if self.w is None else best @ self.w))


_BLOCK = 32


class LogDet:
    """``D(S) = scale * log det(I + eta * G_S)`` for a PSD kernel G (diversity).

    Gains use an incremental Cholesky factor L of ``M_S = I + eta * G_S``: for a candidate e,
    ``gain = log(M_ee - |v|^2)`` with ``v = L^{-1} M_Se``. Each candidate keeps its own v and
    extends it only by the rows added since it was last evaluated (one small triangular
    solve), which is what makes lazy greedy cheap. The Gram column of every selected unit is
    fetched once, so evaluations never touch the feature matrix. The Schur complement is at
    least 1 (the identity), so gains are >= 0 and the factor is always well conditioned.
    """

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "features": _FEATURES,
        "eta": _ETA,
        "scale": _SCALE,
    }

    def __init__(self, features: UnitFeatures, *, eta: float = 1.0, scale: float = 1.0) -> None:
        ok = validate(
            type(self).__name__,
            self._constraints,
            {"features": features, "eta": eta, "scale": scale},
        )
        self.kernel = features.kernel
        self.eta: float = ok["eta"]
        self.scale: float = ok["scale"]
        self.diag = 1.0 + eta * self.kernel.gram_diag()
        self.S: list[int] = []
        self.L = np.zeros((8, 8))
        # Row t of the stacked blocks is eta * G[S[t], :], the scaled Gram column of the t-th
        # selected unit: one n-vector per selected unit, never an n x n matrix. Blocks of
        # _BLOCK rows grow without copying what is already stored.
        self.blocks: list[NDArray[np.float32]] = []
        self._cache: dict[int, FloatArray] = {}

    def _v(self, e: int) -> FloatArray:
        m = len(self.S)
        v = self._cache.get(e)
        done = 0 if v is None else v.shape[0]
        if v is not None and done == m:
            return v
        new = np.empty(m)
        if v is not None:
            new[:done] = v
        L = self.L
        rhs = self._fresh(done, m, e) - L[done:m, :done] @ new[:done]
        if m - done > 32:
            from scipy.linalg import solve_triangular  # ~0.5 s to import: only when used

            new[done:] = solve_triangular(L[done:m, done:m], rhs, lower=True, check_finite=False)
        elif m > done:
            # Small systems (the usual case): BLAS directly, as scipy's solve_triangular
            # wrapper costs ~30 us a call, 10x the solve. Past ~32 rows its blocked LAPACK
            # solve wins, since dtrsv first copies the slice to Fortran order.
            from scipy.linalg.blas import dtrsv

            new[done:] = dtrsv(L[done:m, done:m], rhs, lower=1)
        self._cache[e] = new
        return new

    def _fresh(self, lo: int, hi: int, e: int) -> FloatArray:
        """``eta * G[S[lo:hi], e]`` from the stored blocks."""
        parts = []
        while lo < hi:
            b, off = divmod(lo, _BLOCK)
            take = min(hi - lo, _BLOCK - off)
            parts.append(self.blocks[b][off : off + take, e])
            lo += take
        return np.concatenate(parts).astype(np.float64) if parts else np.empty(0)

    def _schur(self, e: int) -> float:
        v = self._v(e)
        return max(float(self.diag[e] - v @ v), 1.0)

    def gain(self, e: int) -> float:
        return self.scale * math.log(self._schur(e))

    def initial_gains(self) -> FloatArray:
        out: FloatArray = self.scale * np.log(np.maximum(self.diag, 1.0))
        return out

    def add(self, e: int) -> None:
        m = len(self.S)
        v = self._v(e)
        if m + 1 > self.L.shape[0]:
            cap = 2 * self.L.shape[0]
            grown = np.zeros((cap, cap))
            grown[:m, :m] = self.L[:m, :m]
            self.L = grown
        self.L[m, :m] = v
        self.L[m, m] = math.sqrt(self._schur(e))
        b, off = divmod(m, _BLOCK)
        if b == len(self.blocks):
            self.blocks.append(np.empty((_BLOCK, self.diag.shape[0]), dtype=np.float32))
        self.blocks[b][off] = self.eta * self.kernel.gram_column(e)
        self.S.append(e)
        self._cache.pop(e, None)

    def evaluate(self, S: Sequence[int]) -> float:
        if not S:
            return 0.0
        idx = list(S)
        G = np.stack([self.kernel.gram(idx, j) for j in idx], axis=1)
        _, logdet = np.linalg.slogdet(np.eye(len(idx)) + self.eta * G)
        return float(self.scale * logdet)


class RCDObjective:
    """``F(S) = alpha R(S) + beta C(S) + gamma D(S)`` (paper 3.4).

    Each term is scaled so that its best singleton gain is 1, which makes the weights
    comparable shares whatever the document length (the paper's C grows with n while R and D
    do not). Positive rescaling keeps F monotone submodular.

    ``weights`` (``w_i >= 0``, e.g. a lead prior) multiply each unit's relevance and its
    worth as a coverage target; ``coverage_weights``, when given, replace them in the coverage
    term only (a query-weighted coverage, issue 22). Both keep F monotone submodular.
    """

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "features": _FEATURES,
        "alpha": _WEIGHT,
        "beta": _WEIGHT,
        "gamma": _WEIGHT,
        "eta": _ETA,
    }

    def __init__(
        self,
        features: UnitFeatures,
        *,
        alpha: float,
        beta: float,
        gamma: float,
        eta: float = 1.0,
        weights: FloatArray | None = None,
        coverage_weights: FloatArray | None = None,
    ) -> None:
        validate(
            type(self).__name__,
            self._constraints,
            {"features": features, "alpha": alpha, "beta": beta, "gamma": gamma, "eta": eta},
        )
        cw = weights if coverage_weights is None else coverage_weights
        r = features.relevance if weights is None else features.relevance * weights
        self.n = features.n
        kernel = features.kernel
        rmax = float(r.max()) if r.size else 0.0
        cmax = 0.0
        if r.size and beta > 0:
            sums = kernel.coverage_sums() if cw is None else kernel.weighted_coverage_sums(cw)
            cmax = float(sums.max())
        self.terms: list[tuple[float, Relevance | FacilityLocation | LogDet]] = []
        if alpha > 0 and rmax > 0:
            self.terms.append((alpha, Relevance(r, scale=1.0 / rmax)))
        if beta > 0 and cmax > 0:
            cov = FacilityLocation(features, scale=1.0 / cmax, weights=cw)
            self.terms.append((beta, cov))
        if gamma > 0:
            dmax = float(np.log1p(eta * features.kernel.gram_diag()).max()) if r.size else 0.0
            if dmax > 0:
                self.terms.append((gamma, LogDet(features, eta=eta, scale=1.0 / dmax)))

    def gain(self, e: int) -> float:
        total = 0.0
        for w, t in self.terms:
            total += w * t.gain(e)
        return total

    def initial_gains(self) -> FloatArray:
        out = np.zeros(self.n)
        for w, t in self.terms:
            out += w * t.initial_gains()
        return out

    def add(self, e: int) -> None:
        for _, t in self.terms:
            t.add(e)

    def evaluate(self, S: Sequence[int]) -> float:
        return sum(w * t.evaluate(S) for w, t in self.terms)
