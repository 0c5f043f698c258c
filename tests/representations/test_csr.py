"""CsrRows (issue 27): a small document's TF-IDF rows without scipy.sparse, with the products
a selection reads summed as scipy sums them, so that every value is the same bits."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from budgetctx.data import sample_note
from budgetctx.representations import TfidfRepresentation, _csr
from budgetctx.representations._base import Encoded
from budgetctx.representations._csr import SMALL_ROWS, CsrRows, is_sparse
from budgetctx.representations._features import build_features, subset_features
from budgetctx.representations._salience import centroid_salience, fused_salience
from budgetctx.router._divergence import context_divergences
from budgetctx.unitizers import get_unitizer


@st.composite
def csr_rows(draw: st.DrawFn) -> tuple[CsrRows, sparse.csr_matrix]:
    """A non-negative CSR matrix whose rows are not sorted by column (as the TF-IDF writes
    them), with empty rows, single rows and values of every scale."""
    n = draw(st.integers(1, 24))
    width = draw(st.integers(1, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    indices: list[int] = []
    data: list[float] = []
    indptr = [0]
    for _ in range(n):
        k = int(rng.integers(0, min(width, 20) + 1))
        indices += [int(c) for c in rng.permutation(width)[:k]]
        data += list(rng.random(k) ** rng.integers(1, 6))
        indptr.append(len(indices))
    args = (np.array(data), np.array(indices, np.int32), np.array(indptr, np.int32))
    return CsrRows(*args, (n, width)), sparse.csr_matrix(args, shape=(n, width))


def _bits(a: object) -> bytes:
    return np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes()


@settings(max_examples=150, deadline=None)
@given(csr_rows(), st.data())
def test_products_are_scipys_bit_for_bit(
    pair: tuple[CsrRows, sparse.csr_matrix], data: st.DataObject
) -> None:
    ours, theirs = pair
    n, width = ours.shape
    v = np.random.default_rng(n * 1000 + width).random(width)
    assert _bits(ours @ ours.T) == _bits((theirs @ theirs.T).toarray())
    assert _bits(ours @ v) == _bits(theirs @ v)
    assert _bits(ours.mean(axis=0)) == _bits(theirs.mean(axis=0))
    assert _bits(ours.toarray()) == _bits(theirs.toarray())
    rows = np.array(data.draw(st.lists(st.integers(-n, n - 1), max_size=2 * n)), dtype=np.int64)
    mine, scipys = ours[rows], theirs[rows]
    assert isinstance(mine, CsrRows)
    assert (mine.indptr.tolist(), mine.indices.tolist()) == (
        scipys.indptr.tolist(),
        scipys.indices.tolist(),
    )
    assert _bits(mine.data) == _bits(scipys.data)
    assert _bits(mine @ mine.T) == _bits((scipys @ scipys.T).toarray())
    assert _bits(mine @ v) == _bits(scipys @ v)


def test_the_product_in_blocks_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    theirs = sparse.random(60, 40, density=0.3, format="csr", random_state=3)
    ours = CsrRows(theirs.data, theirs.indices, theirs.indptr, theirs.shape)
    whole = ours @ ours.T
    monkeypatch.setattr(_csr, "_BLOCK", 7)  # smaller than a row's products: one row a block
    assert _bits(ours @ ours.T) == _bits(whole) == _bits((theirs @ theirs.T).toarray())


def test_anything_else_is_scipys_own() -> None:
    theirs = sparse.random(8, 5, density=0.5, format="csr", random_state=1)
    ours = CsrRows(theirs.data, theirs.indices, theirs.indptr, theirs.shape)
    assert is_sparse(ours) and is_sparse(theirs) and not is_sparse(np.eye(2))
    assert _bits(ours.multiply(ours).sum(axis=1)) == _bits(theirs.multiply(theirs).sum(axis=1))
    assert _bits(ours[2:5].toarray()) == _bits(theirs[2:5].toarray())
    assert _bits(ours.mean()) == _bits(theirs.mean())
    assert (ours.T.tocsr() != theirs.T.tocsr()).nnz == 0
    assert _bits((ours @ theirs.T).toarray()) == _bits((theirs @ theirs.T).toarray())
    for clone in (copy.deepcopy(ours), pickle.loads(pickle.dumps(ours))):
        assert isinstance(clone, CsrRows) and _bits(clone @ clone.T) == _bits(ours @ ours.T)
    with pytest.raises(AttributeError):
        ours._no_such_thing  # noqa: B018 - private names are not forwarded to scipy


def _units(text: str) -> list[str]:
    return [u.text for u in get_unitizer("sentence").unitize(text).units]


def test_a_small_document_without_a_query_gets_csr_rows() -> None:
    units = _units(sample_note())
    assert len(units) <= SMALL_ROWS
    rep = TfidfRepresentation()
    assert isinstance(rep.encode(units).X, CsrRows)
    assert sparse.issparse(rep.encode(units, query="chest pain").X)
    many = [f"line {i} of a long flowsheet" for i in range(SMALL_ROWS + 1)]
    assert sparse.issparse(rep.encode(many).X)
    fitted = TfidfRepresentation().fit(units)
    assert isinstance(fitted.encode(units).X, CsrRows)


def test_features_from_csr_rows_are_the_same_bits() -> None:
    """Relevance, kernel, adjacent similarities, a subset, fused salience and the router's
    divergence read from CsrRows equal what scipy's matrix of the same rows gives."""
    X = TfidfRepresentation().encode(_units(sample_note())).X
    assert isinstance(X, CsrRows)
    S = X.to_scipy()
    ours, theirs = build_features(Encoded(X, None)), build_features(Encoded(S, None))
    assert _bits(ours.relevance) == _bits(theirs.relevance)
    assert _bits(ours.kernel.adjacent()) == _bits(theirs.kernel.adjacent())
    assert ours.kernel.G.tobytes() == theirs.kernel.G.tobytes()
    rows = [5, 0, 9, 3]
    a, b = subset_features(ours, rows), subset_features(theirs, rows)
    assert isinstance(a.X, CsrRows) and a.kernel.G.tobytes() == b.kernel.G.tobytes()
    filler = np.zeros(X.shape[0], dtype=bool)
    filler[::3] = True
    assert _bits(centroid_salience(X, filler=filler)) == _bits(centroid_salience(S, filler=filler))
    assert _bits(fused_salience(ours.relevance, X)) == _bits(fused_salience(ours.relevance, S))
    kept = [[0, 2, 5], [1], []]
    for terms in ("mass", "presence"):
        assert context_divergences(ours, kept, terms=terms) == context_divergences(
            theirs, kept, terms=terms
        )
    # past the dense limit the neighbour graph is scipy's, built from the same rows
    sparse_kernel = build_features(Encoded(X, None), dense_limit=8).kernel
    assert sparse.issparse(sparse_kernel.X)


def test_prepare_of_a_small_note_imports_no_scipy() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from budgetctx.build import build_context\n"
        "from budgetctx.data import sample_note\n"
        "build_context(sample_note(), 256, selector='mmr')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip().splitlines()[-1] == "[]"
