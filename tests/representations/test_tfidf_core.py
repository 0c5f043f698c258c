"""Our TF-IDF equals scikit-learn's TfidfVectorizer for every option budgetctx uses.

scikit-learn stays the reference here (it is installed in the test environment); the library
itself no longer imports it, so that a cold ``budgetctx select`` does not pay for it.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as SKLEARN_STOP_WORDS
from sklearn.feature_extraction.text import TfidfVectorizer

from budgetctx import BudgetCtxWarning, build_context, get_unitizer
from budgetctx.representations import Encoded, TfidfRepresentation
from budgetctx.representations._tfidf import _TOKEN_PATTERN
from budgetctx.representations._tfidf_core import ENGLISH_STOP_WORDS, FittedTfidf, TfidfCounter

OPTIONS = [
    {"stop_words": stop, "sublinear_tf": sub, "ngram_range": ngrams}
    for stop, sub, ngrams in itertools.product(("english", None), (True, False), ((1, 1), (1, 2)))
]
QUERY = "chest pain troponin, and the patient's b.i.d. 120/80 x-ray?"


def _ids(options: dict[str, Any]) -> str:
    return "-".join(str(v) for v in options.values())


def _sklearn(options: dict[str, Any]) -> TfidfVectorizer:
    return TfidfVectorizer(token_pattern=_TOKEN_PATTERN, dtype=np.float64, **options)


def _units(text: str) -> list[str]:
    return [u.text for u in get_unitizer("sentence").unitize(text).units]


def _assert_same(ours: Any, theirs: Any) -> None:
    assert ours.shape == theirs.shape
    assert ours.dtype == theirs.dtype == np.float64
    np.testing.assert_allclose(ours.toarray(), theirs.toarray(), rtol=0, atol=1e-12)
    # Same row layout too, so sums over rows add in the same order downstream.
    theirs = theirs.tocsr()
    np.testing.assert_array_equal(ours.indptr, theirs.indptr)
    np.testing.assert_array_equal(ours.indices, theirs.indices)


def _check_document(units: Sequence[str], options: dict[str, Any]) -> None:
    """Per-document fit, with and without a query, against scikit-learn."""
    counter = TfidfCounter(token_pattern=_TOKEN_PATTERN, **options)
    vec = _sklearn(options)
    try:
        theirs = vec.fit_transform(units)
    except ValueError as error:
        with pytest.raises(ValueError, match="empty vocabulary") as ours_error:
            counter.fit_transform(units)
        assert str(ours_error.value) == str(error)
        return
    fitted, ours = counter.fit_transform(units)
    assert list(fitted.features) == vec.get_feature_names_out().tolist()
    np.testing.assert_array_equal(fitted.idf, vec.idf_)
    _assert_same(ours, theirs)
    _assert_same(fitted.transform([QUERY]), vec.transform([QUERY]))
    _assert_same(fitted.transform(units[::-1]), vec.transform(units[::-1]))


def _check_corpus(corpus: Sequence[str], units: Sequence[str], options: dict[str, Any]) -> None:
    """Corpus fit, then encoding another document's units and a query, through the wrapper."""
    rep = TfidfRepresentation(**options).fit(corpus)
    assert isinstance(rep.vectorizer_, FittedTfidf)
    vec = _sklearn(options).fit(corpus)
    assert list(rep.vectorizer_.features) == vec.get_feature_names_out().tolist()
    enc = rep.encode(units, query=QUERY)
    _assert_same(enc.X, vec.transform(units))
    _assert_same(enc.query, vec.transform([QUERY]))


def test_stop_words_are_scikit_learns() -> None:
    assert ENGLISH_STOP_WORDS == SKLEARN_STOP_WORDS
    assert isinstance(ENGLISH_STOP_WORDS, frozenset)


@pytest.mark.parametrize("options", OPTIONS, ids=_ids)
def test_sample_note_matches_sklearn(sample_note: str, options: dict[str, Any]) -> None:
    units = _units(sample_note)
    _check_document(units, options)
    _check_corpus([sample_note, "The patient denies chest pain."], units, options)


@pytest.mark.parametrize("options", OPTIONS, ids=_ids)
def test_mtsamples_notes_match_sklearn(mtsamples_notes: list[str], options: dict[str, Any]) -> None:
    notes = mtsamples_notes[::8]
    for note in notes:
        _check_document(_units(note), options)
    _check_corpus(notes[1:], _units(notes[0]), options)


@pytest.mark.parametrize("options", OPTIONS, ids=_ids)
def test_leval_documents_match_sklearn(
    leval_docs: dict[str, list[str]], options: dict[str, Any]
) -> None:
    docs = [texts[0] for texts in leval_docs.values() if texts]
    for doc in docs:
        _check_document(_units(doc), options)
    _check_corpus(docs[1:], _units(docs[0]), options)


_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("abc XYZ 0129 .,;:/-'_ \n\t é ß İ ﬁ Ω ٣ 中文 😀 b.i.d 4.1 x-ray")),
        st.characters(codec="utf-8"),
    ),
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(units=st.lists(_TEXT, min_size=1, max_size=6), options=st.sampled_from(OPTIONS))
def test_generated_text_matches_sklearn(units: list[str], options: dict[str, Any]) -> None:
    _check_document(units, options)


def test_an_unknown_query_is_an_all_zero_row() -> None:
    enc = TfidfRepresentation().encode(["chest pain", "pain resolved"], query="zebra")
    assert enc.query is not None
    assert enc.query.shape == (1, enc.X.shape[1])
    assert enc.query.nnz == 0


def test_only_stop_words_fall_back_to_equal_rows() -> None:
    enc = TfidfRepresentation().encode(["the and of", "it is"], query="the")
    assert enc.X.toarray().tolist() == [[1.0], [1.0]]
    assert enc.query is not None
    assert enc.query.toarray().tolist() == [[0.0]]


def test_a_fitted_sklearn_vectorizer_still_works(sample_note: str) -> None:
    units = _units(sample_note)
    vec = _sklearn({"stop_words": "english", "sublinear_tf": True}).fit([sample_note])
    enc = TfidfRepresentation(vectorizer_=vec).encode(units, query=QUERY)
    _assert_same(enc.X, vec.transform(units))
    assert enc.query is not None
    _assert_same(enc.query, vec.transform([QUERY]))


class _SklearnTfidf(TfidfRepresentation):
    """The encoding budgetctx used before: scikit-learn fitted on each document."""

    def encode(self, texts: Sequence[str], *, query: str | None = None) -> Encoded:
        from scipy import sparse

        opts = {"stop_words": self.stop_words, "sublinear_tf": self.sublinear_tf}
        vec = _sklearn({**opts, "ngram_range": self.ngram_range})
        try:
            X = vec.fit_transform(list(texts))
        except ValueError:
            ones = sparse.csr_matrix(np.ones((len(texts), 1)))
            q = sparse.csr_matrix(np.zeros((1, 1))) if query is not None else None
            return Encoded(ones, q)
        q_vec = vec.transform([query]) if query is not None else None
        return Encoded(sparse.csr_matrix(X), q_vec)


def _same_context(text: str, budget: int, selector: str, query: str | None) -> None:
    with warnings.catch_warnings():
        # A query foreign to a document falls back to the centroid, and says so: both ways.
        warnings.simplefilter("ignore", BudgetCtxWarning)
        ours = build_context(
            text,
            budget,
            selector=selector,
            query=query,
            representation=TfidfRepresentation(semantic=False),  # the lexical cosine alone
        )
        theirs = build_context(
            text, budget, selector=selector, query=query, representation=_SklearnTfidf()
        )
    assert ours.text == theirs.text
    assert [u.id for u in ours.units] == [u.id for u in theirs.units]


@pytest.mark.parametrize("selector", ["mmr", "rcd", "facility"])
@pytest.mark.parametrize("query", [None, "chest pain"])
def test_contexts_unchanged_on_the_sample_note(
    sample_note: str, selector: str, query: str | None
) -> None:
    for budget in (64, 256):
        _same_context(sample_note, budget, selector, query)


@pytest.mark.slow
@pytest.mark.parametrize("selector", ["mmr", "rcd", "facility"])
def test_contexts_unchanged_on_shared_documents(
    mtsamples_notes: list[str], leval_docs: dict[str, list[str]], selector: str
) -> None:
    docs = mtsamples_notes[::10] + [texts[0] for texts in leval_docs.values() if texts][:3]
    for doc in docs:
        for query in (None, "chest pain"):
            _same_context(doc, 200, selector, query)


def test_select_does_not_import_sklearn(tmp_path: Any, sample_note: str) -> None:
    note = tmp_path / "note.txt"
    note.write_text(sample_note, encoding="utf-8")
    code = (
        "import json, sys\n"
        "from budgetctx.cli import main\n"
        f"sys.argv = ['budgetctx', 'select', {str(note)!r}, '--budget', '128']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('sklearn', 'pandas'))\n"
        "print(json.dumps(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, check=True
    ).stdout
    assert json.loads(out.strip().splitlines()[-1]) == []


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.characters(max_codepoint=127), max_size=60))
def test_ascii_patterns_find_the_same_terms_in_ascii_text(text: str) -> None:
    """The ASCII-only compile used for ASCII units finds what the Unicode pattern finds (and a
    pattern that sets its own (?u) flag keeps its own compile)."""
    import re

    from budgetctx.representations._tfidf_core import _EQUIVALENT, _ascii_findall

    for pattern in (*_EQUIVALENT.values(), *_EQUIVALENT):
        assert _ascii_findall(pattern)(text) == re.findall(pattern, text)


# Word characters of several scripts, the pattern's joiners and separators, and marks/digits:
# where anchored, greedy and possessive forms could disagree if any of them could.
_TERM_TEXT = st.text(
    alphabet=st.sampled_from(
        [*"ab_Z09./-' \n\t,;:!?()\"", "é", "ß", "Σ", "ж", "٣", "中", "\u0301", "\u2019", "\u00a0"]
    ),
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(text=_TERM_TEXT)
def test_unanchored_possessive_patterns_find_the_same_terms(text: str) -> None:
    """Each token pattern's stand-in (no word-boundary anchors, possessive quantifiers) finds
    exactly the terms the scikit-learn pattern finds, in order, in any text; and so does its
    ASCII compile in ASCII text."""
    import re

    from budgetctx.representations._tfidf_core import _EQUIVALENT, _ascii_findall

    for anchored, plain in _EQUIVALENT.items():
        assert re.findall(plain, text) == re.findall(anchored, text)
        lowered = text.lower()
        assert re.findall(plain, lowered) == re.findall(anchored, lowered)
        if text.isascii():
            assert _ascii_findall(plain)(text) == re.findall(anchored, text)
