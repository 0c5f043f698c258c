"""A small document's TF-IDF rows in numpy arrays, so that a cold ``budgetctx select`` does not
import scipy.sparse (issue 27).

``import scipy.sparse`` was the largest single step of a cold select (0.1-0.2 s): scipy's
array-API layer clones numpy's namespace, which imports ``numpy.testing``, ``numpy.f2py`` and
``numpy.ma``, for a matrix of a few hundred rows. :class:`CsrRows` holds the same three CSR
arrays as scipy's ``csr_matrix`` and computes the few products a selection reads of a small
document with the sums that scipy's compiled loops add, term by term in the same order, so
every value is the same bits (tests compare them with scipy's):

* ``X @ v`` for a dense vector (``csr_matvec``: each row's stored terms in order, from 0.0);
* ``X @ X.T`` as a dense array (``csr_matmat``: entry ``(i, j)`` adds ``X[i, k] * X[j, k]``
  over row i's stored terms in order, from 0.0);
* ``X.mean(axis=0)`` (scipy scales the data by ``1 / n`` and sums the columns over the rows
  in order, from 0.0);
* ``X[rows]`` for an array of row numbers (the rows' entries copied in order).

Any other method (``multiply``, ``sum``, slices, ...) is scipy's own, on a ``csr_matrix``
made from the same arrays on first need (:meth:`CsrRows.to_scipy`): the same result, and scipy
is imported then. Arithmetic operators other than ``@`` are not defined (a ``TypeError``, not
a wrong value): call :meth:`CsrRows.to_scipy` first. The rows stay in the order the TF-IDF
wrote them (not sorted by column), as scipy's would, since that order is the summation order.

>>> import numpy as np
>>> X = CsrRows(np.array([0.6, 0.8, 1.0]), np.array([0, 1, 1]), np.array([0, 2, 3]), (2, 2))
>>> (X @ X.T).tolist()
[[1.0, 0.8], [0.8, 1.0]]
>>> X.mean(axis=0).tolist()
[[0.3, 0.9]]
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["SMALL_ROWS", "CsrRows", "is_sparse"]

#: Up to this many rows the TF-IDF of a document without a query is a :class:`CsrRows`; past
#: it, scipy's import is a small part of the work, and scipy's compiled product is faster than
#: this module's (a warm MMR build, CPU, CsrRows / scipy: 0.93-0.98 from 76 to 188 units,
#: 1.02 at 267; 2k tokens is about 80-100 units).
SMALL_ROWS = 256
# Products (i, j, k) summed per block of rows of X @ X.T: 16 bytes each, about 16 MB.
_BLOCK = 1 << 20


def is_sparse(x: Any) -> bool:
    """Whether ``x`` is a CSR-like sparse matrix: a :class:`CsrRows`, or one of scipy.sparse's
    (only if scipy.sparse was imported: no matrix can be one otherwise)."""
    if isinstance(x, CsrRows):
        return True
    mod = sys.modules.get("scipy.sparse")
    return mod is not None and bool(mod.issparse(x))


class CsrRows:
    """A row-major sparse float64 matrix: scipy's ``csr_matrix`` arrays, without scipy."""

    format = "csr"
    ndim = 2

    def __init__(self, data: Any, indices: Any, indptr: Any, shape: tuple[int, int]) -> None:
        self.data: NDArray[np.float64] = np.asarray(data, dtype=np.float64)
        self.indices: NDArray[np.int32] = np.asarray(indices, dtype=np.int32)
        self.indptr: NDArray[np.int32] = np.asarray(indptr, dtype=np.int32)
        self.shape = (int(shape[0]), int(shape[1]))
        self._scipy: Any = None

    def __repr__(self) -> str:
        return f"<CsrRows {self.shape[0]}x{self.shape[1]}, {self.nnz} stored values>"

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1]) if len(self.indptr) else 0

    @property
    def dtype(self) -> np.dtype[np.float64]:
        return self.data.dtype

    def tocsr(self) -> CsrRows:
        return self

    def to_scipy(self) -> Any:
        """The same matrix as scipy's ``csr_matrix`` (imports scipy.sparse; made once)."""
        if self._scipy is None:
            from scipy import sparse

            self._scipy = sparse.csr_matrix(
                (self.data, self.indices, self.indptr), shape=self.shape
            )
        return self._scipy

    def __getattr__(self, name: str) -> Any:
        # Any other method is scipy's own. Private and special names are not forwarded:
        # copy and pickle look them up on an instance that has no arrays yet.
        if name.startswith("_"):
            raise AttributeError(name)
        return _forward(getattr(self.to_scipy(), name))

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_scipy": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    @property
    def T(self) -> _Transposed:  # noqa: N802 - scipy's name
        return _Transposed(self)

    def _lengths(self) -> NDArray[np.int64]:
        return np.diff(self.indptr).astype(np.int64)

    def _rows(self) -> NDArray[np.int64]:
        """Each stored value's row."""
        return np.repeat(np.arange(self.shape[0], dtype=np.int64), self._lengths())

    def toarray(self) -> NDArray[np.float64]:
        out = np.zeros(self.shape, dtype=np.float64)
        out[self._rows(), self.indices] = self.data
        return out

    def __getitem__(self, key: Any) -> Any:
        rows = np.asarray(key) if isinstance(key, (list, np.ndarray)) else None
        if rows is None or rows.ndim != 1 or not np.issubdtype(rows.dtype, np.integer):
            return self.to_scipy()[key]
        n = self.shape[0]
        if rows.size and (rows.min() < -n or rows.max() >= n):
            raise IndexError(f"row index out of range for {n} rows")
        rows = np.where(rows < 0, rows + n, rows).astype(np.int64)
        starts = self.indptr[rows].astype(np.int64)
        sizes = self.indptr[rows + 1].astype(np.int64) - starts
        ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(sizes, out=ptr[1:])
        at = np.repeat(starts - ptr[:-1], sizes) + np.arange(int(ptr[-1]), dtype=np.int64)
        return CsrRows(self.data[at], self.indices[at], ptr, (len(rows), self.shape[1]))

    def mean(self, axis: int | None = None) -> Any:
        if axis not in (0, -2):
            return self.to_scipy().mean(axis=axis)
        # scipy: (X * (1 / n)).sum(axis=0), the sum being ones(1, n) @ X, i.e. each column
        # adds its rows' scaled values in row order from 0.0 (np.bincount adds in order)
        scaled = self.data * (1.0 / self.shape[0])
        sums = np.bincount(self.indices, weights=scaled, minlength=self.shape[1])
        return sums.reshape(1, -1)

    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, _Transposed) and other.X is self:
            return self._gram()
        if isinstance(other, np.ndarray) and other.ndim == 1 and other.shape[0] == self.shape[1]:
            return self._dot(other.astype(np.float64, copy=False))
        if isinstance(other, (CsrRows, _Transposed)):
            other = other.to_scipy()
        return self.to_scipy() @ other

    def _dot(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """``X @ v`` as ``csr_matvec`` sums it: each row's products in stored order, from 0.0."""
        lengths = self._lengths()
        n = self.shape[0]
        if n == 0 or self.nnz == 0:
            return np.zeros(n, dtype=np.float64)
        products = self.data * v[self.indices]
        # a (longest row x rows) table padded with zeros, reduced over its first axis one
        # row at a time: each column (a CSR row) summed in order, the padding adding zeros
        position = np.arange(self.nnz) - np.repeat(self.indptr[:-1].astype(np.int64), lengths)
        # (at least two columns: numpy would sum a single one pairwise, not in order)
        table = np.zeros((int(lengths.max()), max(n, 2)), dtype=np.float64)
        table[position, self._rows()] = products
        out: NDArray[np.float64] = table.sum(axis=0)[:n]
        out += 0.0  # a sum from 0.0, as scipy's: -0.0 becomes 0.0
        return out

    def _gram(self) -> NDArray[np.float64]:
        """``X @ X.T`` as a dense array, summed as ``csr_matmat`` sums it."""
        n, width = self.shape
        out = np.zeros(n * n, dtype=np.float64)
        if self.nnz == 0:
            return out.reshape(n, n)
        cols = self.indices.astype(np.int64)
        # X.T as CSR: each term's rows (the order within a term does not change any sum)
        by_term = np.argsort(cols, kind="stable")
        post_rows = self._rows()[by_term]
        post_vals = self.data[by_term]
        post_ptr = np.zeros(width + 1, dtype=np.int64)
        np.cumsum(np.bincount(cols, minlength=width), out=post_ptr[1:])
        sizes = post_ptr[cols + 1] - post_ptr[cols]  # per stored value: its term's rows
        # products before each row (a row's products stay in one block of about _BLOCK)
        before = np.concatenate(([0], np.cumsum(sizes)))[self.indptr.astype(np.int64)]
        rows = self._rows()
        start_row = 0
        while start_row < n:
            stop_row = int(np.searchsorted(before, before[start_row] + _BLOCK, side="right")) - 1
            stop_row = min(max(stop_row, start_row + 1), n)
            lo, hi = int(self.indptr[start_row]), int(self.indptr[stop_row])
            if hi > lo:
                s = sizes[lo:hi]
                first = post_ptr[cols[lo:hi]]
                total = int(s.sum())
                offsets = np.zeros(len(s), dtype=np.int64)
                np.cumsum(s[:-1], out=offsets[1:])
                at = np.repeat(first - offsets, s) + np.arange(total, dtype=np.int64)
                # each stored value X[i, k] times each X[j, k], in row i's stored order:
                # np.bincount adds its weights one after another, as csr_matmat's loop does
                weights = np.repeat(self.data[lo:hi], s) * post_vals[at]
                where = np.repeat(rows[lo:hi], s) * n + post_rows[at]
                out += np.bincount(where, weights=weights, minlength=n * n)
            start_row = stop_row
        return out.reshape(n, n)


class _Transposed:
    """``X.T`` of a :class:`CsrRows`: the right operand of ``X @ X.T``; else scipy's."""

    def __init__(self, X: CsrRows) -> None:
        self.X = X
        self.shape = (X.shape[1], X.shape[0])

    def to_scipy(self) -> Any:
        return self.X.to_scipy().T

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return _forward(getattr(self.to_scipy(), name))


def _plain(x: Any) -> Any:
    return x.to_scipy() if isinstance(x, (CsrRows, _Transposed)) else x


def _forward(found: Any) -> Any:
    """scipy's attribute; a method is called with any CsrRows argument made scipy's too."""
    if not callable(found):
        return found

    def call(*args: Any, **kwargs: Any) -> Any:
        return found(*map(_plain, args), **{k: _plain(v) for k, v in kwargs.items()})

    return call
