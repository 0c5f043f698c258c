"""A reference-free estimate of a context's quality, read at run time (beyond the paper).

Louis and Nenkova (2013) found that the Jensen-Shannon divergence between the word
distribution of a summary and that of its input ranks summarizers nearly as well as ROUGE
against references does. Here the distributions are the content-term mass of the units:
each unit spreads its number of distinct content terms over its terms in proportion to
their TF-IDF weights, so a long unit weighs more than "mm-hmm ." and a word that occurs on
every line weighs less than a rare one (both as in the unit features every selector reads).
With ``terms="presence"`` each unit counts each of its distinct content terms once, so the
document's distribution is the share of units each term occurs in (issue 21, fourth pass:
the better chooser among ``least_divergence``'s candidates on validation, see
docs/results.md). Nothing here sees a reference: it compares the context with its own
document.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from budgetctx._errors import InvalidParameterError
from budgetctx.representations import UnitFeatures
from budgetctx.representations._csr import is_sparse

__all__ = ["TERM_WEIGHTS", "context_divergence", "context_divergences", "term_mass"]

#: How a unit spreads over its terms: ``"mass"`` (its number of distinct content terms, in
#: proportion to their TF-IDF weights) or ``"presence"`` (1 for each distinct content term).
TERM_WEIGHTS = ("mass", "presence")


def _issparse(x: Any) -> bool:
    # scipy.sparse's matrices, or a small document's CsrRows (the same CSR arrays)
    return is_sparse(x)


def term_mass(X: Any) -> Any:
    """Rows of ``X`` rescaled so that each sums to its number of non-zero terms (sparse
    non-negative rows, e.g. TF-IDF); a row of zeros stays zero.

    >>> from scipy import sparse
    >>> term_mass(sparse.csr_matrix([[3.0, 1.0], [0.0, 2.0]])).toarray().tolist()
    [[1.5, 0.5], [0.0, 1.0]]
    """
    X = X.tocsr()
    _, mass = _term_mass_data(X)
    from scipy import sparse

    return sparse.csr_matrix((mass, X.indices.copy(), X.indptr.copy()), shape=X.shape)


def _term_mass_data(X: Any) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """For a CSR matrix: each stored entry's row, and its value in :func:`term_mass`'s rows
    (computed on the CSR arrays: scipy's row sums and products cost more than the arithmetic
    where a run-time choice needs it per call)."""
    n = X.shape[0]
    nnz = np.diff(X.indptr)
    data = np.asarray(X.data, dtype=np.float64)
    row = np.repeat(np.arange(n), nnz)
    sums = np.bincount(row, weights=data, minlength=n)
    scale = np.divide(nnz, sums, out=np.zeros(n), where=sums > 0)
    return row, data * scale[row]


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


def context_divergence(
    features: UnitFeatures, kept: Sequence[int], *, terms: str = "mass"
) -> float:
    """JS divergence between the content-term mass of the ``kept`` units and of all units:
    0 when the context says what the document says in the same proportions, 1 when they
    share no term. ``terms`` is one of :data:`TERM_WEIGHTS`. Dense (embedding) features give
    ``1 - cos`` of the mean vectors instead.

    >>> from scipy import sparse
    >>> from budgetctx.representations import DenseKernel, UnitFeatures
    >>> X = sparse.csr_matrix([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    >>> f = UnitFeatures(np.ones(3), DenseKernel(np.eye(3)), "centroid", X=X)
    >>> context_divergence(f, [0, 1]) < context_divergence(f, [0])
    True
    """
    return context_divergences(features, [kept], terms=terms)[0]


def context_divergences(
    features: UnitFeatures, contexts: Sequence[Sequence[int]], *, terms: str = "mass"
) -> list[float]:
    """:func:`context_divergence` of each of several contexts of one document, the
    document's distribution computed once (what a run-time choice among candidates needs).

    >>> from scipy import sparse
    >>> from budgetctx.representations import DenseKernel, UnitFeatures
    >>> X = sparse.csr_matrix([[1.0, 0.0], [0.0, 1.0]])
    >>> f = UnitFeatures(np.ones(2), DenseKernel(np.eye(2)), "centroid", X=X)
    >>> context_divergences(f, [[0, 1], []])
    [0.0, 1.0]
    """
    if terms not in TERM_WEIGHTS:
        raise InvalidParameterError(
            f"terms must be one of {', '.join(map(repr, TERM_WEIGHTS))}, got {terms!r}; "
            "use 'presence' (what least_divergence reads) or 'mass'.",
            parameter="terms",
            value=terms,
        )
    X = features.X
    out: list[float] = []
    if X is None:
        return [1.0] * len(contexts)
    if not _issparse(X):
        A = np.asarray(X, dtype=np.float64)
        b = A.mean(axis=0)
        for kept in contexts:
            idx = np.asarray(sorted(set(kept)), dtype=np.int64)
            if idx.size == 0:
                out.append(1.0)
                continue
            a = A[idx].mean(axis=0)
            denom = float(np.linalg.norm(a) * np.linalg.norm(b))
            out.append(1.0 - float(a @ b) / denom if denom > 0 else 1.0)
        return out
    # on the CSR arrays themselves: scipy's indexing and sums cost more than the arithmetic
    # here, and a run-time choice computes this per candidate
    X = X.tocsr()
    n, width = X.shape
    if terms == "mass":
        row, mass = _term_mass_data(X)
    else:
        row = np.repeat(np.arange(n), np.diff(X.indptr))
        mass = (np.asarray(X.data) != 0).astype(np.float64)
    doc: NDArray[np.float64] = np.bincount(X.indices, weights=mass, minlength=width).astype(
        np.float64
    )
    for kept in contexts:
        chosen = np.zeros(n, dtype=bool)
        chosen[np.asarray(list(kept), dtype=np.int64)] = True
        if not chosen.any():
            out.append(1.0)
            continue
        take = chosen[row]
        ctx: NDArray[np.float64] = np.bincount(
            X.indices[take], weights=mass[take], minlength=width
        ).astype(np.float64)
        out.append(_js(doc, ctx))
    return out
