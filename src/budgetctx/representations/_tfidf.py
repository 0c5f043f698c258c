"""TF-IDF unit features (the default representation)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from budgetctx._core.component import Component
from budgetctx._core.validation import (
    Boolean,
    Constraint,
    NoneOr,
    OneOf,
    Predicate,
)
from budgetctx.representations._base import Encoded
from budgetctx.representations._csr import CsrRows
from budgetctx.representations._tfidf_core import FittedTfidf, TfidfCounter

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import TfidfVectorizer

__all__ = ["TfidfRepresentation"]


def _warn_static_missing() -> None:
    import warnings

    from budgetctx._errors import BudgetCtxWarning

    warnings.warn(
        "The bundled static embeddings cannot be read, so the query is matched by its words "
        "only. Reinstall budgetctx, or pass representation options semantic=False to silence "
        "this.",
        BudgetCtxWarning,
        stacklevel=4,
    )


def _is_tfidf_vectorizer(value: Any) -> bool:
    if isinstance(value, FittedTfidf):
        return True
    # Imported here, not at module level: scikit-learn takes seconds to import, and only a
    # caller who passes a fitted scikit-learn vectorizer needs the check.
    from sklearn.feature_extraction.text import TfidfVectorizer

    return isinstance(value, TfidfVectorizer)


# Keeps clinical tokens whole: "b.i.d", "4.1", "120/80", "x-ray", "IL-6".
_TOKEN_PATTERN = r"(?u)\b\w+(?:[./\-']\w+)*\b"


def _is_ngram_range(value: Any) -> bool:
    if not isinstance(value, tuple | list) or len(value) != 2:
        return False
    lo, hi = value
    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi))
    return ints and 1 <= lo <= hi


@dataclass
class TfidfRepresentation(Component, name="tfidf"):
    """Sublinear TF-IDF with English stop words removed, L2-normalised rows.

    By default IDF is fitted on the document's own units. Call :meth:`fit` with a corpus (for
    example, the training notes of a dataset) to fix the vocabulary and IDF instead. The
    matrices equal scikit-learn's ``TfidfVectorizer`` with the same options, computed without
    importing it; a fitted ``TfidfVectorizer`` passed as ``vectorizer_`` is used as is.

    >>> enc = TfidfRepresentation().encode(["chest pain", "pain resolved"], query="pain")
    >>> enc.X.shape
    (2, 3)
    """

    stop_words: str | None = "english"
    sublinear_tf: bool = True
    ngram_range: tuple[int, int] = (1, 1)
    #: add relevance to the query by meaning (bundled static embeddings, numpy only; see
    #: :mod:`budgetctx.representations._static`); False is the lexical cosine alone
    semantic: bool = True
    vectorizer_: FittedTfidf | TfidfVectorizer | None = field(
        default=None, repr=False, compare=False
    )

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        # scikit-learn knows one built-in list; any other string fails inside encode, where
        # the all-stop-words fallback would hide it.
        "stop_words": NoneOr(
            OneOf(("english",)), fix="pass 'english', or None to keep every word."
        ),
        "sublinear_tf": Boolean(fix="True uses 1 + log(tf), as the paper does."),
        "ngram_range": Predicate(
            _is_ngram_range,
            "a pair of ints (low, high) with 1 <= low <= high",
            fix="pass (1, 1) for single words or (1, 2) to add word pairs.",
            convert=tuple,
        ),
        "semantic": Boolean(fix="False matches the query by its words only."),
        "vectorizer_": NoneOr(
            Predicate(_is_tfidf_vectorizer, "a fitted TF-IDF (FittedTfidf or TfidfVectorizer)"),
            fix="leave it None and call fit(corpus) to fix the vocabulary.",
        ),
    }

    def params(self) -> dict[str, Any]:
        return {
            "stop_words": self.stop_words,
            "sublinear_tf": self.sublinear_tf,
            "ngram_range": list(self.ngram_range),
            "fitted_on_corpus": self.vectorizer_ is not None,
            "semantic": self.semantic,
        }

    def _counter(self) -> TfidfCounter:
        return TfidfCounter(
            token_pattern=_TOKEN_PATTERN,
            stop_words=self.stop_words,
            sublinear_tf=self.sublinear_tf,
            ngram_range=self.ngram_range,
        )

    def fit(self, corpus: Sequence[str]) -> TfidfRepresentation:
        """Fit vocabulary and IDF on ``corpus``; later documents reuse them."""
        self.vectorizer_ = self._counter().fit(list(corpus))
        return self

    def encode(self, texts: Sequence[str], *, query: str | None = None) -> Encoded:
        n = len(texts)
        # Without a query, a small document's rows are a CsrRows: the same CSR arrays and
        # the same sums without importing scipy.sparse (issue 27: most of a cold select's
        # imports); a query's cosines and the rare cases below use scipy's matrices.
        small = query is None
        if n == 0:
            from scipy import sparse

            return Encoded(sparse.csr_matrix((0, 0)), None)
        fitted: FittedTfidf | TfidfVectorizer
        try:
            if isinstance(self.vectorizer_, FittedTfidf):
                fitted = self.vectorizer_
                X = fitted.transform(list(texts), small=small)
            elif self.vectorizer_ is not None:
                fitted = self.vectorizer_
                X = fitted.transform(list(texts))
            else:
                fitted, X = self._counter().fit_transform(list(texts), small=small)
        except ValueError:
            from scipy import sparse

            # Only stop words / no word characters: every unit is equally (un)informative.
            ones = sparse.csr_matrix(np.ones((n, 1)))
            q = sparse.csr_matrix(np.zeros((1, 1))) if query is not None else None
            return Encoded(ones, q)
        q_vec = fitted.transform([query]) if query is not None else None
        if not isinstance(X, CsrRows):
            from scipy import sparse

            if type(X) is not sparse.csr_matrix:  # ours is one already: no second check
                X = sparse.csr_matrix(X)
        return Encoded(X, q_vec, self._semantic(texts, query))

    def _semantic(self, texts: Sequence[str], query: str | None) -> Any:
        if query is None or not self.semantic:
            return None
        from budgetctx.representations._static import semantic_relevance, static_available

        if not static_available():
            # the bundled file is missing or altered: lexical relevance, as before, with a
            # warning that says how to restore it
            _warn_static_missing()
            return None
        return semantic_relevance(list(texts), query)
