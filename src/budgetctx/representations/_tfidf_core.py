"""A small TF-IDF that reproduces scikit-learn's ``TfidfVectorizer`` for budgetctx's options.

scikit-learn's text module imports scipy.stats and pandas (about 2 s cold), which a one-shot
``budgetctx select`` pays for a few milliseconds of counting. This module needs numpy and
scipy.sparse only. It covers word analysis with a token pattern, lowercasing, no or English stop
words, word n-grams, sublinear TF, smooth IDF and L2 rows, and matches scikit-learn's matrices
entry for entry (same feature order, same row layout), which tests check against scikit-learn.

>>> fitted, X = TfidfCounter(token_pattern=r"(?u)\\b\\w\\w+\\b").fit_transform(["chest pain"])
>>> fitted.features, X.shape
(('chest', 'pain'), (1, 2))
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from budgetctx.representations._csr import SMALL_ROWS, CsrRows

__all__ = ["ENGLISH_STOP_WORDS", "FittedTfidf", "TfidfCounter"]

# scikit-learn's list (sklearn/feature_extraction/_stop_words.py, from the Glasgow Information
# Retrieval Group), copied as data so that stop-word removal does not import scikit-learn.
# scikit-learn is BSD-3-Clause licensed: Copyright (c) 2007-2024 The scikit-learn developers.
# A test asserts this set equals scikit-learn's.
_ENGLISH = """
    a about above across after afterwards again against all almost alone along already also
    although always am among amongst amoungst amount an and another any anyhow anyone anything
    anyway anywhere are around as at back be became because become becomes becoming been before
    beforehand behind being below beside besides between beyond bill both bottom but by call can
    cannot cant co con could couldnt cry de describe detail do done down due during each eg
    eight either eleven else elsewhere empty enough etc even ever every everyone everything
    everywhere except few fifteen fifty fill find fire first five for former formerly forty
    found four from front full further get give go had has hasnt have he hence her here
    hereafter hereby herein hereupon hers herself him himself his how however hundred i ie if in
    inc indeed interest into is it its itself keep last latter latterly least less ltd made many
    may me meanwhile might mill mine more moreover most mostly move much must my myself name
    namely neither never nevertheless next nine no nobody none noone nor not nothing now nowhere
    of off often on once one only onto or other others otherwise our ours ourselves out over own
    part per perhaps please put rather re same see seem seemed seeming seems serious several she
    should show side since sincere six sixty so some somehow someone something sometime
    sometimes somewhere still such system take ten than that the their them themselves then
    thence there thereafter thereby therefore therein thereupon these they thick thin third this
    those though three through throughout thru thus to together too top toward towards twelve
    twenty two un under until up upon us very via was we well were what whatever when whence
    whenever where whereafter whereas whereby wherein whereupon wherever whether which while
    whither who whoever whole whom whose why will with within without would yet you your yours
    yourself yourselves
"""
ENGLISH_STOP_WORDS: frozenset[str] = frozenset(_ENGLISH.split())

_EMPTY = "empty vocabulary; perhaps the documents only contain stop words"


# Patterns whose word-boundary anchors can never fail, and the same patterns without them (a
# quarter faster in findall). A match can only start at a word's first character (the previous
# one ended at a word's end, and a \w run always matches) and greedy \w+ always ends where the
# word does, so the anchors hold wherever the plain pattern matches: the same terms, in order.
# The quantifiers are possessive (Python 3.11+): the greedy pattern's first way through always
# matches (its tail after the star is empty, and the star may stop at any iteration), so giving
# nothing back finds the same match, and the engine keeps no backtracking state per word (a
# further 15-25 % of findall, the largest step of TF-IDF; issue 27, sixth pass). A test checks
# the pairs on random text.
_EQUIVALENT = {
    r"(?u)\b\w\w+\b": r"\w\w++",
    r"(?u)\b\w+(?:[./\-']\w+)*\b": r"\w++(?:[./\-']\w++)*+",
}


@functools.cache
def _ascii_findall(pattern: str) -> Callable[[str], list[str]]:
    """``pattern``'s findall restricted to ASCII classes, for ASCII text only (the pattern's
    own findall where it sets its own flags, e.g. ``(?u)``, which ASCII mode refuses)."""
    try:
        return re.compile(pattern, re.ASCII).findall
    except (re.error, ValueError):  # ValueError: "ASCII and UNICODE flags are incompatible"
        return re.compile(pattern).findall


def _analyzer(
    token_pattern: str, stop_words: frozenset[str] | None, ngram_range: tuple[int, int]
) -> Callable[[str], list[str]]:
    """The terms of one text, in the order scikit-learn's ``_word_ngrams`` yields them."""
    findall = re.compile(_EQUIVALENT.get(token_pattern, token_pattern)).findall
    min_n, max_n = ngram_range

    def analyze(text: str) -> list[str]:
        tokens: list[str] = findall(text.lower())
        if stop_words is not None:
            tokens = [w for w in tokens if w not in stop_words]
        if max_n == 1:
            return tokens
        # n-grams join the tokens left after stop-word removal, as scikit-learn does.
        terms = list(tokens) if min_n == 1 else []
        n_tokens = len(tokens)
        for n in range(max(min_n, 2), min(max_n + 1, n_tokens + 1)):
            terms.extend(" ".join(tokens[i : i + n]) for i in range(n_tokens - n + 1))
        return terms

    return analyze


def _counts(
    analyze: Callable[[str], list[str]], texts: Sequence[str], vocabulary: Mapping[str, int]
) -> tuple[list[int], list[float], list[int]]:
    """Per-row term counts against a fixed vocabulary, columns ascending within each row."""
    indices: list[int] = []
    values: list[float] = []
    indptr = [0]
    for text in texts:
        counter: dict[int, int] = {}
        for term in analyze(text):
            j = vocabulary.get(term)
            if j is not None:
                counter[j] = counter.get(j, 0) + 1
        for j in sorted(counter):
            indices.append(j)
            values.append(counter[j])
        indptr.append(len(indices))
    return indices, values, indptr


def _row_sums_in_order(values: Any, ptr: Any, lengths: Any) -> Any:
    """Each CSR row's sum, added left to right. The entries are laid out as a (longest row x
    rows) matrix padded with zeros, and numpy reduces a matrix over its first axis one row of
    it at a time, so each column (a CSR row) is summed in order, the padding adding exact
    zeros at the end: bit for bit the Python loop, at numpy's speed."""
    n_rows = len(lengths)
    if n_rows == 0 or len(values) == 0:
        return np.zeros(n_rows, dtype=np.float64)
    row_of = np.repeat(np.arange(n_rows), lengths)
    position = np.arange(len(values)) - np.repeat(np.asarray(ptr[:-1], dtype=np.int64), lengths)
    table = np.zeros((int(lengths.max()), n_rows), dtype=np.float64)
    table[position, row_of] = values
    return table.sum(axis=0)


def _weigh(
    indices: Any,
    values: Any,
    indptr: Any,
    n_features: int,
    idf: Any,
    *,
    sublinear_tf: bool,
    small: bool = False,
) -> Any:
    """TF-IDF with L2 rows from raw counts, with scikit-learn's operations in its order; with
    ``small``, up to :data:`~budgetctx.representations._csr.SMALL_ROWS` rows come as a
    :class:`~budgetctx.representations._csr.CsrRows` (the same arrays, without scipy)."""
    data = np.asarray(values, dtype=np.float64)
    idx = np.asarray(indices, dtype=np.int32)
    ptr = np.asarray(indptr, dtype=np.int32)
    if sublinear_tf:
        np.log(data, out=data)
        data += 1.0
    data *= idf[idx]
    # Row norms summed left to right, as scikit-learn's inplace_csr_row_normalize_l2 does;
    # np.add.reduceat would sum pairwise and differ in the last bit.
    lengths = np.diff(ptr)
    norms = _row_sums_in_order(data * data, ptr, lengths)
    np.sqrt(norms, out=norms)
    norms[norms == 0.0] = 1.0
    data /= np.repeat(norms, lengths)
    if small and len(lengths) <= SMALL_ROWS:
        return CsrRows(data, idx, ptr, (len(lengths), n_features))
    from scipy import sparse

    return sparse.csr_matrix((data, idx, ptr), shape=(len(lengths), n_features))


@dataclass(frozen=True)
class TfidfCounter:
    """Options of a TF-IDF model; :meth:`fit` or :meth:`fit_transform` learns one.

    ``stop_words`` is None or ``"english"`` (:data:`ENGLISH_STOP_WORDS`). IDF is smoothed,
    ``ln((1 + n) / (1 + df)) + 1``, and rows are L2-normalised, as scikit-learn's defaults.

    >>> TfidfCounter(stop_words=None).fit(["chest pain", "no pain"]).features
    ('chest', 'no', 'pain')
    """

    token_pattern: str = r"(?u)\b\w\w+\b"
    stop_words: str | None = "english"
    sublinear_tf: bool = False
    ngram_range: tuple[int, int] = (1, 1)

    def analyzer(self) -> Callable[[str], list[str]]:
        words = ENGLISH_STOP_WORDS if self.stop_words is not None else None
        return _analyzer(self.token_pattern, words, tuple(self.ngram_range))  # type: ignore[arg-type]

    def _count(self, texts: Sequence[str]) -> tuple[dict[str, int], Any, Any, Any]:
        """Terms numbered in order of first occurrence, and each text's counts of them as CSR
        arrays (columns ascending within a row)."""
        if self.ngram_range[1] > 1:
            return self._count_ngrams(texts)
        # Single words: analyse without stop words, then number the distinct terms and count
        # (row, term) pairs with numpy instead of a dict per text. Dropping stop words from
        # the distinct terms keeps the others' order of first occurrence, so the numbering
        # and the counts are those of the loop in _count_ngrams.
        pattern = _EQUIVALENT.get(self.token_pattern, self.token_pattern)
        findall = re.compile(pattern).findall
        # On ASCII text an ASCII-only pattern finds the same terms (\w, \d and \s of a str
        # pattern match no other ASCII characters), a quarter faster; map/chain/fromiter keep
        # the per-word steps in C (a Python loop per word cost more than the regex).
        ascii_findall = _ascii_findall(pattern)
        per_text = [ascii_findall(t) if t.isascii() else findall(t) for t in map(str.lower, texts)]
        flat = list(itertools.chain.from_iterable(per_text))
        stop = ENGLISH_STOP_WORDS if self.stop_words is not None else frozenset()
        distinct = (t for t in dict.fromkeys(flat) if t not in stop)
        first_seen = {t: j for j, t in enumerate(distinct)}
        n_rows = len(per_text)
        if not first_seen:
            return first_seen, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(1, np.int64)
        ids = np.fromiter(
            map(first_seen.get, flat, itertools.repeat(-1)), dtype=np.int64, count=len(flat)
        )
        lengths = np.fromiter(map(len, per_text), dtype=np.int64, count=n_rows)
        rows = np.repeat(np.arange(n_rows, dtype=np.int64), lengths)
        kept = ids >= 0
        size = len(first_seen)
        pairs, counts = np.unique(rows[kept] * size + ids[kept], return_counts=True)
        indptr = np.searchsorted(pairs, np.arange(n_rows + 1, dtype=np.int64) * size)
        return first_seen, pairs % size, counts, indptr

    def _count_ngrams(self, texts: Sequence[str]) -> tuple[dict[str, int], Any, Any, Any]:
        analyze = self.analyzer()
        first_seen: dict[str, int] = {}
        indices: list[int] = []
        values: list[int] = []
        indptr = [0]
        for text in texts:
            counter: dict[int, int] = {}
            for term in analyze(text):
                j = first_seen.setdefault(term, len(first_seen))
                counter[j] = counter.get(j, 0) + 1
            for j in sorted(counter):
                indices.append(j)
                values.append(counter[j])
            indptr.append(len(indices))
        return first_seen, indices, values, indptr

    def fit(self, texts: Sequence[str]) -> FittedTfidf:
        """Vocabulary and IDF of ``texts``; ValueError if no term survives (as scikit-learn)."""
        return self.fit_transform(texts)[0]

    def fit_transform(
        self, texts: Sequence[str], *, small: bool = False
    ) -> tuple[FittedTfidf, Any]:
        """The fitted model and the TF-IDF rows of ``texts`` (a CSR matrix; with ``small``, a
        :class:`~budgetctx.representations._csr.CsrRows` for a few rows)."""
        first_seen, indices, values, indptr = self._count(texts)
        if not first_seen:
            raise ValueError(_EMPTY)
        features = tuple(sorted(first_seen))
        # Columns renumbered in sorted-term order but each row kept in first-seen order, which
        # is the layout scikit-learn's _sort_features leaves (it matters for summation order).
        remap = np.empty(len(features), dtype=np.int64)
        remap[list(map(first_seen.__getitem__, features))] = np.arange(len(features))
        cols = remap[np.asarray(indices, dtype=np.int64)]
        df = np.bincount(cols, minlength=len(features)).astype(np.float64)
        df += 1.0
        idf = np.full_like(df, fill_value=len(indptr), dtype=np.float64)  # n + 1 documents
        idf /= df
        np.log(idf, out=idf)
        idf += 1.0
        fitted = FittedTfidf(counter=self, features=features, idf=idf)
        X = _weigh(
            cols, values, indptr, len(features), idf, sublinear_tf=self.sublinear_tf, small=small
        )
        return fitted, X


@dataclass(frozen=True)
class FittedTfidf:
    """A fitted vocabulary (``features``, sorted) and its IDF; :meth:`transform` encodes text.

    Terms outside the vocabulary are ignored; a text with none of its terms is an all-zero row.

    >>> fitted = TfidfCounter(stop_words=None).fit(["chest pain", "no pain"])
    >>> fitted.transform(["pain", "unknown"]).toarray().tolist()
    [[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    """

    counter: TfidfCounter
    features: tuple[str, ...]
    idf: Any = field(repr=False)
    vocabulary: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        features = self.features
        vocabulary = dict(zip(features, range(len(features)), strict=True))
        object.__setattr__(self, "vocabulary", vocabulary)

    def transform(self, texts: Sequence[str], *, small: bool = False) -> Any:
        """The TF-IDF rows of ``texts`` (a CSR matrix with one column per feature; with
        ``small``, a :class:`~budgetctx.representations._csr.CsrRows` for a few rows)."""
        indices, values, indptr = _counts(self.counter.analyzer(), texts, self.vocabulary)
        return _weigh(
            indices,
            values,
            indptr,
            len(self.features),
            self.idf,
            sublinear_tf=self.counter.sublinear_tf,
            small=small,
        )
