"""Unit features for selection: relevance scores and similarity kernels.

Two kernels are derived from the L2-normalised feature rows X:

* the *coverage* similarity ``k(i, j) = max(0, <x_i, x_j>)`` (non-negative, for facility
  location, MMR redundancy and graphs), and
* the *Gram* kernel ``G = X X^T`` (positive semidefinite by construction, for log-det).

Up to ``DENSE_LIMIT`` units the Gram matrix is held densely (float32, at most 64 MiB). Past it,
budgetctx never builds an n x n matrix: coverage uses the ``top_k`` nearest neighbours of each
unit (a sparse, symmetric, still non-negative kernel, so facility location stays monotone
submodular), while MMR redundancy and log-det compute exact similarities from X on demand.
For TF-IDF the neighbours are proposed by the ``POSTINGS_LIMIT`` units where each term weighs
most, which keeps the build linear in the document; for dense embeddings the build is exact and
quadratic in the number of units (encoding them dominates up to about 10^5 units).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from budgetctx._errors import BudgetCtxWarning, InvalidParameterError
from budgetctx.representations._base import Encoded, Matrix
from budgetctx.representations._csr import CsrRows, is_sparse
from budgetctx.representations._salience import centroid_salience

if TYPE_CHECKING:
    from scipy import sparse

__all__ = [
    "DENSE_LIMIT",
    "DenseKernel",
    "Kernel",
    "SparseKernel",
    "UnitFeatures",
    "UnreadKernel",
    "build_features",
    "psd_project",
    "subset_features",
]

DENSE_LIMIT = 4096
#: Units per term kept in the inverted index that proposes nearest neighbours (see
#: :class:`SparseKernel`): it bounds the k-NN build to ``nnz(X) * POSTINGS_LIMIT`` work.
POSTINGS_LIMIT = 64
FloatArray = NDArray[np.float64]
AnyFloatArray = NDArray[np.floating[Any]]
IntArray = NDArray[np.int64]


def _sparse() -> ModuleType:
    # scipy.sparse takes a noticeable part of a second to import: only when a kernel needs it.
    from scipy import sparse

    return sparse  # type: ignore[no-any-return]  # scipy ships no type information


def _issparse(x: Any) -> bool:
    # A matrix cannot be a scipy.sparse one if scipy.sparse was never imported; a small
    # document's TF-IDF rows are a CsrRows (scipy's arrays and sums, without scipy).
    return is_sparse(x)


class Kernel:
    """Similarities between units. Subclasses: :class:`DenseKernel`, :class:`SparseKernel`."""

    n: int

    def column(self, j: int) -> FloatArray:
        """Exact non-negative similarity of every unit to unit ``j``."""
        raise NotImplementedError

    def coverage_column(self, j: int) -> tuple[IntArray | None, AnyFloatArray]:
        """``(rows, values)`` of the coverage kernel's column ``j``; rows None means all."""
        raise NotImplementedError

    def coverage_sums(self) -> FloatArray:
        """Column sums of the coverage kernel: the facility-location value of each singleton."""
        raise NotImplementedError

    def weighted_coverage_sums(self, weights: FloatArray) -> FloatArray:
        """``sum_i weights[i] * k(i, j)`` for every j: weighted singleton coverage."""
        raise NotImplementedError

    def gram(self, rows: Sequence[int] | IntArray, j: int) -> FloatArray:
        """PSD kernel entries ``G[rows, j]``."""
        raise NotImplementedError

    def gram_column(self, j: int) -> FloatArray:
        """The whole PSD kernel column ``G[:, j]``."""
        raise NotImplementedError

    def gram_diag(self) -> FloatArray:
        raise NotImplementedError

    def pairs_above(self, threshold: float) -> sparse.coo_matrix:
        """Coverage similarities ``>= threshold`` off the diagonal, as a sparse matrix."""
        raise NotImplementedError

    def adjacent(self) -> FloatArray:
        """``k(i, i + 1)`` for every pair of neighbouring units (coverage similarity)."""
        raise NotImplementedError


class UnreadKernel(Kernel):
    """The kernel of units that were never encoded (issue 27: lead and shuffled read no
    similarity). It holds no similarity: each of :class:`Kernel`'s methods raises
    ``NotImplementedError``, so a selector that reads one fails loudly instead of reading
    made-up values."""

    def __init__(self, n: int) -> None:
        self.n = n


#: Rows per block of :meth:`DenseKernel.weighted_coverage_sums`.
_ROWS = 64

#: Below this many units a dense kernel keeps a float64 copy of its coverage kernel for the
#: greedy's gains (8 MB at most); at this size and above a deferred kernel hands out rows
#: from X instead (:data:`ROWS_FROM_X`), and a copy would double a large kernel's memory.
F64_UNITS = 1024


class DenseKernel(Kernel):
    """A dense symmetric PSD kernel ``G``; coverage uses ``max(G, 0)``.

    Columns are read as rows (G is symmetric), which are contiguous in memory.
    """

    def __init__(self, G: NDArray[np.floating]) -> None:
        self.G = np.ascontiguousarray(G, dtype=np.float32)
        if self.G.shape[0] != self.G.shape[1]:
            raise InvalidParameterError(
                f"A kernel must be square, got shape {self.G.shape}; pass an n x n matrix.",
                parameter="kernel",
                value=self.G.shape,
            )
        self.n = self.G.shape[0]
        self._cov_sums: FloatArray | None = None
        self._weighted: tuple[bytes, FloatArray] | None = None
        self._pos: NDArray[np.float32] | None = None
        self._pos64: FloatArray | None = None

    @property
    def positive(self) -> NDArray[np.float32]:
        """``max(G, 0)``, computed once: the coverage kernel."""
        if self._pos is None:
            # max(G, 0) is G itself, bit for bit, when no entry has its sign bit set (TF-IDF
            # rows are non-negative, and so is their product): no second n x n matrix (60 MB
            # and ~15 ms at 4k units, paid on a document's first facility/RCD/auto selection)
            self._pos = self.G if self._nonnegative() else np.maximum(self.G, 0.0)
        return self._pos

    def _nonnegative(self) -> bool:
        """Whether no entry of ``G`` is negative or -0.0 (``max(G, 0)`` would change it)."""
        return not bool(np.signbit(self.G).any())

    def positive_f64(self) -> FloatArray | None:
        """:attr:`positive` widened to float64 (the same values: every float32 is a float64),
        computed once, for a kernel of fewer than :data:`F64_UNITS` units; else None.

        A facility-location gain takes the max of a coverage row with its float64 state and
        sums it: from a float32 row numpy first casts it, which cost about as much as the max
        itself at a few hundred units (issue 27, sixth pass).
        """
        if self.n >= F64_UNITS:
            return None
        if self._pos64 is None:
            self._pos64 = self.positive.astype(np.float64)
        return self._pos64

    def __getstate__(self) -> dict[str, Any]:
        # The float64 copy is rebuilt on first use: a pickled prepared document (batch, Ray)
        # stays the size it was.
        state = dict(self.__dict__)
        state["_pos64"] = None
        return state

    def column(self, j: int) -> FloatArray:
        out: FloatArray = self.positive[j].astype(np.float64)
        return out

    def positive_row(self, j: int) -> NDArray[np.float32]:
        """Row ``j`` of :attr:`positive` (a view: read it, do not write it)."""
        row: NDArray[np.float32] = self.positive[j]
        return row

    def positive_at(self, rows: IntArray, j: int) -> NDArray[np.float32]:
        """``positive[rows, j]``."""
        out: NDArray[np.float32] = self.positive[rows, j]
        return out

    def adjacent(self) -> FloatArray:
        idx = np.arange(max(self.n - 1, 0))
        out: FloatArray = self.positive[idx, idx + 1].astype(np.float64)
        return out

    def coverage_column(self, j: int) -> tuple[IntArray | None, AnyFloatArray]:
        # a float32 view, no copy: callers only read it
        return None, self.positive[j]

    def coverage_sums(self) -> FloatArray:
        if self._cov_sums is None:
            sums: FloatArray = self.positive.sum(axis=0, dtype=np.float64)
            self._cov_sums = sums
        return self._cov_sums

    def weighted_coverage_sums(self, weights: FloatArray) -> FloatArray:
        # The coverage kernel is symmetric, so column sums are row products. Blocks of rows
        # keep float64 accuracy (as coverage_sums has) without a float64 copy of the matrix.
        # It reads the whole n x n matrix, and RCD asks twice per selection (its coverage
        # scale, then the coverage term), a sweep once per budget: the last weights' answer
        # is kept, as coverage_sums keeps its own.
        w = np.asarray(weights, dtype=np.float64)
        key = w.tobytes()
        if self._weighted is not None and self._weighted[0] == key:
            return self._weighted[1]
        out: FloatArray = np.empty(self.n)
        # 64 rows a block: the float64 copy (~2 MB at 4k units) stays in cache, where 512 rows
        # (15 MB) did not; about half the time at 64k tokens. Each row's product is the same
        # BLAS dot whatever the block (a block is a multiple of 4 rows, BLAS's row group).
        for b in range(0, self.n, _ROWS):
            out[b : b + _ROWS] = self.positive[b : b + _ROWS].astype(np.float64) @ w
        out.flags.writeable = False
        self._weighted = (key, out)
        return out

    def gram(self, rows: Sequence[int] | IntArray, j: int) -> FloatArray:
        out: FloatArray = self.G[j, np.asarray(rows, dtype=np.int64)].astype(np.float64)
        return out

    def gram_column(self, j: int) -> FloatArray:
        out: FloatArray = self.G[j].astype(np.float64)
        return out

    def gram_diag(self) -> FloatArray:
        return np.diag(self.G).astype(np.float64)

    def pairs_above(self, threshold: float) -> sparse.coo_matrix:
        mask = threshold <= self.G
        np.fill_diagonal(mask, False)
        r, c = np.nonzero(mask)
        return _sparse().coo_matrix(
            (self.G[r, c].astype(np.float64), (r, c)), shape=(self.n, self.n)
        )


class DeferredDenseKernel(DenseKernel):
    """A :class:`DenseKernel` of ``X X^T`` that builds ``G`` on first use, so that a selector
    which reads no similarity (lead, shuffled, sliding) never pays for the n x n product.

    Route statistics read only the similarity of each unit to the next: for TF-IDF rows it is
    computed from ``X`` directly, summed in the order the sparse product sums it and rounded
    to float32 as ``G`` is, so the values are the same bits as ``G``'s (a test checks).
    """

    def __init__(self, X: Matrix) -> None:
        self.X = X
        self.n = X.shape[0]
        self._cov_sums = None
        self._weighted = None
        self._pos = None
        self._pos64 = None
        self._rows: dict[int, NDArray[np.float32]] = {}

    def positive_row(self, j: int) -> NDArray[np.float32]:
        # A selector that reads a few rows (MMR: one per unit it takes) of a large kernel gets
        # them from X, bit for bit the rows of G (see _product_row), without the n x n product.
        if "G" in self.__dict__ or self.n < ROWS_FROM_X or not _issparse(self.X):
            return super().positive_row(j)
        row = self._rows.get(j)
        if row is None:
            row = np.maximum(_product_row(self.X, self._xt, j).astype(np.float32), 0.0)
            self._rows[j] = row
        return row

    def positive_at(self, rows: IntArray, j: int) -> NDArray[np.float32]:
        if "G" in self.__dict__ or self.n < ROWS_FROM_X or not _issparse(self.X):
            return super().positive_at(rows, j)
        return np.array([self.positive_row(int(r))[j] for r in rows], dtype=np.float32)

    def _nonnegative(self) -> bool:
        # a sparse product of rows without a negative (or -0.0) value has none either: its
        # entries are sums of products of non-negative values, and the zeros it fills are +0.0
        if _issparse(self.X):
            return not bool(np.signbit(self.X.data).any())
        return super()._nonnegative()

    @cached_property
    def _xt(self) -> Any:
        """``X.T`` as CSR: what scipy converts it to for ``X @ X.T``."""
        return self.X.T.tocsr()

    @cached_property
    def G(self) -> NDArray[np.float32]:  # type: ignore[override]  # noqa: N802 - the matrix's name
        G = self.X @ self.X.T
        G = G.toarray() if _issparse(G) else np.asarray(G)
        return np.ascontiguousarray(G, dtype=np.float32)

    def adjacent(self) -> FloatArray:
        if "G" not in self.__dict__ and _issparse(self.X):
            sums = _adjacent_dots(self.X)
            if sums is not None:
                out: FloatArray = np.maximum(sums.astype(np.float32), 0.0).astype(np.float64)
                return out
        if "G" in self.__dict__ and self._pos is None:
            # no max(G, 0) copy of the whole matrix for n - 1 values
            idx = np.arange(max(self.n - 1, 0))
            near: FloatArray = np.maximum(self.G[idx, idx + 1], 0.0).astype(np.float64)
            return near
        return super().adjacent()


#: Units from which a deferred kernel hands out rows computed from X (a few dozen, for MMR)
#: rather than building the whole n x n product on the first row asked for.
ROWS_FROM_X = 1024


def _product_row(X: Any, XT: Any, j: int) -> FloatArray:
    """Row ``j`` of ``X @ X.T`` in float64, summed as scipy's ``csr_matmat`` sums it: each
    output column adds ``X[j, k] * XT[k, col]`` over row j's stored terms in order, from 0.0
    (``np.bincount`` adds its weights one after another, in order). A test checks the bits."""
    start, stop = int(X.indptr[j]), int(X.indptr[j + 1])
    cols = np.asarray(X.indices[start:stop], dtype=np.int64)
    vals = np.asarray(X.data[start:stop], dtype=np.float64)
    lo = np.asarray(XT.indptr, dtype=np.int64)[cols]
    sizes = np.asarray(XT.indptr, dtype=np.int64)[cols + 1] - lo
    if sizes.sum() == 0:
        return np.zeros(X.shape[0])
    # positions of the XT rows of cols, one after another
    at = np.repeat(lo - np.concatenate(([0], np.cumsum(sizes)[:-1])), sizes) + np.arange(
        sizes.sum()
    )
    weights = np.repeat(vals, sizes) * np.asarray(XT.data, dtype=np.float64)[at]
    out = np.bincount(
        np.asarray(XT.indices, dtype=np.int64)[at], weights=weights, minlength=X.shape[0]
    )
    return np.asarray(out, dtype=np.float64)


def _adjacent_dots(X: sparse.csr_matrix) -> FloatArray | None:
    """``<x_i, x_i+1>`` for every i, each summed over row i's stored terms in order from 0.0,
    which is how scipy's sparse product (``csr_matmat``) accumulates ``(X @ X.T)[i, i + 1]``.
    None when a row repeats a column (the product would add the duplicates)."""
    n, n_cols = X.shape
    if n < 2:
        return np.zeros(0)
    indptr = np.asarray(X.indptr, dtype=np.int64)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    keys = rows * n_cols + np.asarray(X.indices, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    if len(ordered) and np.any(np.diff(ordered) == 0):
        return None
    out = np.zeros(n - 1)
    if not len(ordered):
        return out
    want = keys + n_cols  # the same term in the next row
    at = np.minimum(np.searchsorted(ordered, want), len(ordered) - 1)
    hit = (ordered[at] == want) & (rows < n - 1)
    r = rows[hit]
    prod = X.data[hit] * X.data[order[at[hit]]]
    # the k-th shared term of each row is added in step k, in the row's stored order
    step = np.arange(len(r)) - np.searchsorted(r, r, side="left")
    by_step = np.argsort(step, kind="stable")
    cuts = np.searchsorted(step[by_step], np.arange(int(step.max(initial=0)) + 2))
    for k in range(len(cuts) - 1):
        sel = by_step[cuts[k] : cuts[k + 1]]
        out[r[sel]] += prod[sel]
    return out


class SparseKernel(Kernel):
    """Exact similarities from X on demand; a top-k neighbour graph for coverage."""

    def __init__(
        self, X: Matrix, *, top_k: int = 32, block: int = 256, postings: int = POSTINGS_LIMIT
    ) -> None:
        self.X = X
        self.n = X.shape[0]
        self.top_k = top_k
        self._block = block
        self._postings_limit = postings

    # Built on first use: a selector that reads no similarity (lead, sliding) never pays for
    # the neighbour graph, and route statistics need only adjacent rows of X.
    @cached_property
    def S(self) -> sparse.csc_matrix:  # noqa: N802 - the matrix's name
        return _top_k_graph(self.X, self.top_k, self._block, postings=self._postings_limit).tocsc()

    @cached_property
    def _postings(self) -> sparse.csr_matrix | None:
        return self.X.T.tocsr() if _issparse(self.X) else None

    @cached_property
    def _cov_sums(self) -> FloatArray:
        return np.asarray(self.S.sum(axis=0), dtype=np.float64).ravel()

    def _dot(self, rows: IntArray | slice, j: int) -> FloatArray:
        if self._postings is not None:
            # G[:, j] = sum over the terms t of unit j of x_jt * X[:, t]: only the units
            # sharing a term with j are touched.
            X = self.X
            lo, hi = X.indptr[j], X.indptr[j + 1]
            full = np.asarray(self._postings[X.indices[lo:hi]].T @ X.data[lo:hi]).ravel()
            return full if isinstance(rows, slice) else full[rows]
        Xd = np.asarray(self.X)
        return np.asarray(Xd[rows] @ Xd[j], dtype=np.float64).ravel()

    def column(self, j: int) -> FloatArray:
        return np.maximum(self._dot(slice(None), j), 0.0)

    def adjacent(self) -> FloatArray:
        X = self.X
        if self.n < 2:
            return np.zeros(0)
        prod = X[:-1].multiply(X[1:]) if _issparse(X) else np.asarray(X[:-1]) * X[1:]
        return np.maximum(np.asarray(prod.sum(axis=1), dtype=np.float64).ravel(), 0.0)

    def coverage_column(self, j: int) -> tuple[IntArray | None, AnyFloatArray]:
        start, end = self.S.indptr[j], self.S.indptr[j + 1]
        return self.S.indices[start:end].astype(np.int64), self.S.data[start:end]

    def coverage_sums(self) -> FloatArray:
        return self._cov_sums

    def weighted_coverage_sums(self, weights: FloatArray) -> FloatArray:
        out: FloatArray = np.asarray(self.S.T @ np.asarray(weights, dtype=np.float64)).ravel()
        return out

    def gram(self, rows: Sequence[int] | IntArray, j: int) -> FloatArray:
        return self._dot(np.asarray(rows, dtype=np.int64), j)

    def gram_column(self, j: int) -> FloatArray:
        return self._dot(slice(None), j)

    def gram_diag(self) -> FloatArray:
        X = self.X
        sq = X.multiply(X).sum(axis=1) if _issparse(X) else np.einsum("ij,ij->i", X, X)
        return np.asarray(sq, dtype=np.float64).ravel()

    def pairs_above(self, threshold: float) -> sparse.coo_matrix:
        S = self.S.tocoo()
        keep = (S.data >= threshold) & (S.row != S.col)
        return _sparse().coo_matrix((S.data[keep], (S.row[keep], S.col[keep])), shape=S.shape)


def _top_k_graph(
    X: Matrix, k: int, block: int, *, postings: int = POSTINGS_LIMIT
) -> sparse.csr_matrix:
    """Symmetric non-negative k-nearest-neighbour similarity graph (self-loops kept).

    Sparse X (TF-IDF): candidates come from an inverted index that keeps, for each term, only
    the ``postings`` units where the term weighs most; each unit's candidates are ranked by the
    similarity through those postings and the best ``2 * k`` are scored exactly. A term in more
    than ``postings`` units no longer links every pair of them (which made the build quadratic:
    every row of ``X @ X.T`` was nearly full), so the work is at most ``nnz(X) * postings``
    multiply-adds plus ``n * 2k`` exact dot products: linear in the document. A neighbour found
    this way always carries its exact similarity; one reached only through common terms may be
    missed. When no term is in more than ``postings`` units the graph is the exact top-k one.

    Dense X (embeddings): the exact top-k, ``block`` rows at a time: memory ``block * n``
    floats, time ``n^2 * d`` (quadratic: encoding the units costs more up to ~10^5 units).
    """
    n = X.shape[0]
    if _issparse(X):
        return _sparse_top_k(_sparse().csr_matrix(X, dtype=np.float64), k, postings)
    k = min(k + 1, n)  # +1: a unit is its own nearest neighbour
    rows, cols, vals = [], [], []
    Xd = np.asarray(X)
    for b in range(0, n, block):
        D = (Xd[b : b + block] @ Xd.T).astype(np.float32, copy=False)
        np.maximum(D, 0.0, out=D)
        idx = np.argpartition(-D, kth=k - 1, axis=1)[:, :k]
        v = np.take_along_axis(D, idx, axis=1)
        keep = v > 0
        r = np.repeat(np.arange(b, b + D.shape[0]), k).reshape(D.shape[0], k)
        rows.append(r[keep])
        cols.append(idx[keep])
        vals.append(v[keep])
    S = _sparse().csr_matrix(
        (np.concatenate(vals).astype(np.float64), (np.concatenate(rows), np.concatenate(cols))),
        shape=(n, n),
    )
    return S.maximum(S.T).tocsr()


# Entries of X @ X.T computed per block of rows (about 100 MB of int32 + float64 triples).
_BLOCK_ENTRIES = 4_000_000


def _row_top(
    indptr: IntArray, indices: IntArray, data: AnyFloatArray, m: int
) -> tuple[IntArray, IntArray, AnyFloatArray]:
    """``(row, col, value)`` of the ``m`` largest entries of every row of a CSR matrix, at
    once for all rows (one sort; a Python loop over rows cost more than the product)."""
    counts = np.diff(indptr)
    row = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    if len(data) == 0:
        return row, indices.astype(np.int64), data
    if counts.max() <= m:
        return row, indices.astype(np.int64), data
    # One float key, row then value descending: several times faster than np.lexsort.
    lo, hi = float(data.min()), float(data.max())
    scaled = (data - lo) / (hi - lo) if hi > lo else np.zeros(len(data))
    order = np.argsort(2.0 * row - scaled)
    rank = np.arange(len(order), dtype=np.int64) - indptr[row[order]]
    sel = np.sort(order[rank < m])
    return row[sel], indices[sel].astype(np.int64), data[sel]


def _prune_postings(XT: sparse.csr_matrix, limit: int) -> sparse.csr_matrix:
    """``XT`` (terms x units) with each term row cut to its ``limit`` largest weights."""
    if XT.nnz == 0 or np.diff(XT.indptr).max() <= limit:
        return XT
    r, c, v = _row_top(XT.indptr.astype(np.int64), XT.indices, XT.data, limit)
    return _sparse().csr_matrix((v, (r, c)), shape=XT.shape)


def _sparse_top_k(X: sparse.csr_matrix, k: int, postings: int) -> sparse.csr_matrix:
    n = X.shape[0]
    XT = _prune_postings(X.T.tocsr(), postings)
    df = np.diff(XT.indptr)
    # Entries a row adds to the product (sum of its terms' postings) and to the exact scoring
    # (2k candidates times its terms): blocks are cut so that these stay bounded.
    work = np.concatenate(([0], np.cumsum(df[X.indices] + 2 * k)))[X.indptr]
    rows, cols, vals = [], [], []
    b = 0
    while b < n:
        e = int(np.searchsorted(work, work[b] + _BLOCK_ENTRIES, side="right")) - 1
        e = min(max(e, b + 1), n)
        P = (X[b:e] @ XT).tocsr()
        r, c, _ = _row_top(P.indptr.astype(np.int64), P.indices, P.data, 2 * k)
        r += b
        if len(r):
            # exact cosine of each candidate pair (the product above may have missed terms)
            exact = np.asarray(X[r].multiply(X[c]).sum(axis=1), dtype=np.float64).ravel()
            keep = (exact > 0) & (r != c)
            r, c, exact = r[keep], c[keep], exact[keep]
            indptr = np.searchsorted(r, np.arange(b, e + 1)).astype(np.int64)
            tr, tc, tv = _row_top(indptr, c, exact, k)
            rows.append(tr + b)
            cols.append(tc)
            vals.append(tv)
        b = e
    # a unit is its own nearest neighbour: its squared norm (0 for a unit without terms)
    diag = np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    nz = np.flatnonzero(diag > 0)
    rows.append(nz)
    cols.append(nz)
    vals.append(diag[nz])
    S = _sparse().csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )
    return S.maximum(S.T).tocsr()


def psd_project(K: NDArray[np.floating], *, jitter: float = 1e-8) -> FloatArray:
    """Nearest PSD matrix by symmetrisation and eigenvalue clipping (paper, Appendix C).

    >>> psd_project(np.array([[1.0, 2.0], [2.0, 1.0]])).round(3).tolist()
    [[1.5, 1.5], [1.5, 1.5]]
    """
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise InvalidParameterError(
            f"A kernel must be a square matrix, got shape {K.shape}; pass an n x n array.",
            parameter="kernel",
            value=K.shape,
        )
    S = 0.5 * (K + K.T)
    w, V = np.linalg.eigh(S)
    w = np.clip(w, 0.0, None)
    out: FloatArray = (V * w) @ V.T
    out[np.diag_indices_from(out)] += jitter
    return out


@dataclass(frozen=True)
class UnitFeatures:
    """What selectors see about the units: relevance ``r_i >= 0`` and similarities."""

    relevance: FloatArray
    kernel: Kernel
    #: "query", "centroid", or "centroid (query matched no unit)".
    relevance_source: str
    X: Matrix | None = None

    @property
    def n(self) -> int:
        return int(self.relevance.shape[0])

    @classmethod
    def from_kernel(
        cls, kernel: NDArray[np.floating], relevance: Sequence[float] | FloatArray
    ) -> UnitFeatures:
        """Features from a user-supplied similarity matrix, projected to PSD (Appendix C)."""
        r = np.clip(np.asarray(relevance, dtype=np.float64), 0.0, None)
        K = psd_project(kernel)
        if K.shape[0] != r.shape[0]:
            raise InvalidParameterError(
                f"kernel is {K.shape[0]}x{K.shape[0]} but relevance has {r.shape[0]} entries; "
                "give one relevance score per kernel row.",
                parameter="relevance",
                value=r.shape[0],
            )
        return cls(relevance=r, kernel=DenseKernel(K), relevance_source="given")


def _row_dot(X: Matrix, v: Matrix) -> FloatArray:
    out = X @ (v.T if _issparse(v) else np.asarray(v).ravel())
    if _issparse(out):
        out = out.toarray()
    return np.asarray(out, dtype=np.float64).ravel()


def _with_semantic(r: FloatArray | None, semantic: Matrix, n: int) -> FloatArray | None:
    from budgetctx.representations._static import SEMANTIC_WEIGHT

    sem = np.clip(np.asarray(semantic, dtype=np.float64).ravel(), 0.0, None)
    if sem.shape != (n,) or not np.any(sem > 0):
        return r
    out: FloatArray = (np.zeros(n) if r is None else np.clip(r, 0.0, None)) + SEMANTIC_WEIGHT * sem
    return out


def build_features(
    encoded: Encoded,
    *,
    sections: Sequence[str | None] | None = None,
    section_weights: Mapping[str, float] | None = None,
    dense_limit: int = DENSE_LIMIT,
    top_k: int = 32,
    filler: NDArray[np.bool_] | None = None,
) -> UnitFeatures:
    """Relevance to the query (or, without one, to the document centroid) and kernels.

    ``filler`` marks units that get no salience without a query (see
    :func:`~budgetctx.representations._salience.centroid_salience`)."""
    X = encoded.X
    n = X.shape[0]
    source = "centroid"
    r: FloatArray | None = None
    if encoded.query is not None:
        q = encoded.query
        qnorm = float(np.sqrt(q.multiply(q).sum())) if _issparse(q) else float(np.linalg.norm(q))
        if qnorm > 0:
            r = _row_dot(X, q) / qnorm
            source = "query"
            if not np.any(r > 0):
                r = None
        if encoded.semantic is not None:
            # relevance by meaning (see representations._static) added to the lexical cosine
            r = _with_semantic(r, encoded.semantic, n)
            source = "query" if r is not None else source
        if r is None:
            source = "centroid (query matched no unit)"
            warnings.warn(
                "The query shares no terms with the document, so relevance falls back to the "
                "document centroid. Rephrase the query with the document's wording, or use "
                "representation='embeddings'.",
                BudgetCtxWarning,
                stacklevel=3,
            )
    if r is None:
        r = centroid_salience(X, filler=filler)
    r = np.clip(r, 0.0, None)
    if section_weights:
        weights = {k.strip().upper(): float(v) for k, v in section_weights.items()}
        bad = {k: v for k, v in weights.items() if v < 0}
        if bad:
            raise InvalidParameterError(
                f"section_weights must be >= 0, got {bad}; use 0 to ignore a section.",
                parameter="section_weights",
                value=bad,
            )
        labels = sections or [None] * n
        r = r * np.array([weights.get(s, 1.0) if s else 1.0 for s in labels])
    if n > dense_limit and isinstance(X, CsrRows):
        X = X.to_scipy()  # the neighbour graph is built with scipy's products
    kernel: Kernel = DeferredDenseKernel(X) if n <= dense_limit else SparseKernel(X, top_k=top_k)
    return UnitFeatures(relevance=r, kernel=kernel, relevance_source=source, X=X)


def subset_features(features: UnitFeatures, idx: Sequence[int] | IntArray) -> UnitFeatures:
    """The features of the units ``idx`` only (relevance, similarities and ``X`` restricted),
    e.g. what is left to select once pinned units are kept.

    >>> f = UnitFeatures.from_kernel(np.eye(3), [0.1, 0.2, 0.3])
    >>> subset_features(f, [2, 0]).relevance.tolist()
    [0.3, 0.1]
    """
    rows = np.asarray(idx, dtype=np.int64)
    kernel: Kernel
    old = features.kernel
    X = features.X
    sub_x: Any = None  # X[rows], sliced once when the kernel reads the same matrix
    if isinstance(old, DeferredDenseKernel) and "G" not in old.__dict__ and _issparse(old.X):
        # still deferred: the subset's product sums each entry in the same order (row i's
        # stored terms), so its G is the same bits as the whole G restricted (a test checks)
        sub_x = old.X[rows]
        kernel = DeferredDenseKernel(sub_x)
    elif isinstance(old, DenseKernel):
        kernel = DenseKernel(old.G[np.ix_(rows, rows)])
    elif isinstance(old, SparseKernel):
        sub_x = old.X[rows]
        kernel = SparseKernel(sub_x, top_k=old.top_k)
    elif isinstance(old, UnreadKernel):
        kernel = UnreadKernel(len(rows))
    else:
        raise InvalidParameterError(
            f"Cannot restrict a {type(old).__name__} to a subset of units; pinning needs a "
            "DenseKernel or a SparseKernel. Drop the pins, or use a built-in representation.",
            parameter="pin",
            value=type(old).__name__,
        )
    if X is not None:
        X = sub_x if sub_x is not None and X is getattr(old, "X", None) else X[rows]
    return UnitFeatures(
        relevance=features.relevance[rows],
        kernel=kernel,
        relevance_source=features.relevance_source,
        X=X,
    )
