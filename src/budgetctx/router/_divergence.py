"""A reference-free estimate of a context's quality, read at run time (beyond the paper).

Louis and Nenkova (2013) found that the Jensen-Shannon divergence between the word
distribution of a summary and that of its input ranks summarizers nearly as well as ROUGE
against references does. Here the distributions are the content-term mass of the units:
each unit spreads its number of distinct content terms over its terms in proportion to
their TF-IDF weights, so a long unit weighs more than "mm-hmm ." and a word that occurs on
every line weighs less than a rare one (both as in the unit features every selector reads).
Nothing here sees a reference: it compares the context with its own document.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from budgetctx.representations import UnitFeatures

__all__ = ["context_divergence", "term_mass"]


def _issparse(x: Any) -> bool:
    mod = sys.modules.get("scipy.sparse")
    return mod is not None and bool(mod.issparse(x))


def term_mass(X: Any) -> Any:
    """Rows of ``X`` rescaled so that each sums to its number of non-zero terms (sparse
    non-negative rows, e.g. TF-IDF); a row of zeros stays zero.

    >>> from scipy import sparse
    >>> term_mass(sparse.csr_matrix([[3.0, 1.0], [0.0, 2.0]])).toarray().tolist()
    [[1.5, 0.5], [0.0, 1.0]]
    """
    X = X.tocsr()
    sums = np.asarray(X.sum(axis=1)).ravel()
    nnz = np.diff(X.indptr).astype(np.float64)
    scale = np.divide(nnz, sums, out=np.zeros_like(sums), where=sums > 0)
    from scipy import sparse

    return sparse.diags(scale) @ X


def _js(p: NDArray[np.float64], q: NDArray[np.float64]) -> float:
    """Jensen-Shannon divergence (bits, in [0, 1]) of two non-negative vectors, normalised."""
    ps, qs = float(p.sum()), float(q.sum())
    if ps <= 0 or qs <= 0:
        return 1.0
    p, q = p / ps, q / qs
    m = 0.5 * (p + q)

    def kl(a: NDArray[np.float64]) -> float:
        nz = a > 0
        return float(np.sum(a[nz] * np.log2(a[nz] / m[nz])))

    return min(1.0, max(0.0, 0.5 * kl(p) + 0.5 * kl(q)))


def context_divergence(features: UnitFeatures, kept: Sequence[int]) -> float:
    """JS divergence between the content-term mass of the ``kept`` units and of all units:
    0 when the context says what the document says in the same proportions, 1 when they
    share no term. Dense (embedding) features give ``1 - cos`` of the mean vectors instead.

    >>> from scipy import sparse
    >>> from budgetctx.representations import DenseKernel, UnitFeatures
    >>> X = sparse.csr_matrix([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    >>> f = UnitFeatures(np.ones(3), DenseKernel(np.eye(3)), "centroid", X=X)
    >>> context_divergence(f, [0, 1]) < context_divergence(f, [0])
    True
    """
    X = features.X
    idx = np.asarray(sorted(set(kept)), dtype=np.int64)
    if X is None or idx.size == 0:
        return 1.0
    if not _issparse(X):
        A = np.asarray(X, dtype=np.float64)
        a, b = A[idx].mean(axis=0), A.mean(axis=0)
        denom = float(np.linalg.norm(a) * np.linalg.norm(b))
        return 1.0 - float(a @ b) / denom if denom > 0 else 1.0
    M = term_mass(X)
    doc = np.asarray(M.sum(axis=0)).ravel()
    ctx = np.asarray(M[idx].sum(axis=0)).ravel()
    return _js(doc, ctx)
