"""Salience without a query: similarity to the centroid that filler cannot fool (issue 21).

With no query, a unit's relevance is its cosine to the centroid of all units. In a prose
document the centroid is the document's topic and this works (it holds on L-Eval reports and
Cochrane abstracts, and every variant tried there lost: see docs/results.md). In a dialogue it
fails: the words on nearly every line ("yeah", "okay", the speakers' names, transcription
markup) dominate the centroid, so "[patient] mm-hmm ." and "Barry Hughes: Thank you." become
the most relevant units of a visit or a meeting.

So, in a document recognised as a dialogue (:func:`budgetctx.unitizers.dialogue_turns`), a
*filler* unit gets salience 0 and takes no part in the centroid, which is then the centroid
of what was said. Prose is left exactly as it was. What counts as filler depends on how the
dialogue was made (:class:`~budgetctx.unitizers._turns.TurnStatistics`):

- transcribed speech (a meeting, a visit: many back-channel turns or written-down "um"s):
  a unit with fewer than :data:`FILLER_WORDS` spoken words (tags and bracketed markup
  removed: back-channels, assents, false starts). The threshold was chosen on the validation
  splits of L-Eval meeting_summ and tv_show_summ among 4, 5, 6, 8 and 10 words.
- written dialogue (a script): only a unit whose words all acknowledge ("Yeah .", "Okay,
  thank you."). In a script every line is written to move the story, and a short one carries
  plot ("OWEN : My death."); the 8-word rule cost MMR on the TV scripts (validation, 512
  tokens: 0.174 without the rule, 0.159 with it, 0.181 with back-channels only).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from budgetctx.unitizers._turns import TurnStatistics

__all__ = [
    "FILLER_WORDS",
    "centroid_salience",
    "dialogue_filler",
    "filler_units",
    "fused_salience",
]

#: A unit of a dialogue with fewer words than this (speaker tags and markup removed) is filler.
FILLER_WORDS = 8


def filler_units(document: str, unit_texts: Sequence[str]) -> NDArray[np.bool_] | None:
    """Which units of ``document`` are filler, or None when it is not a dialogue.

    >>> doc = "A: Mm-hmm .\\nB: The pain started on Monday after I lifted a box.\\n" * 3
    >>> filler_units(doc, ["A: Mm-hmm .", "B: The pain started on Monday after I lifted a box."])
    array([ True, False])
    >>> lines = ["OWEN : My death.", "ANNA : It was you.", "OWEN : Yes.", "ANNA : The brakes?",
    ...          "OWEN : I cut them.", "ANNA : Why?", "OWEN : For the money.", "ANNA : Go."]
    >>> filler_units("\\n".join(lines), lines).nonzero()  # a script: only "Yes." is filler
    (array([2]),)
    >>> filler_units("Chest pain. Troponin negative.", ["Chest pain.", "Troponin negative."])
    """
    from budgetctx.unitizers._turns import turn_statistics

    return _filler(turn_statistics(document), unit_texts)


def _filler(stats: TurnStatistics | None, unit_texts: Sequence[str]) -> NDArray[np.bool_] | None:
    """:func:`filler_units` once the document's turn statistics are known."""
    from budgetctx.unitizers._turns import is_backchannel, spoken_words, strip_tags

    if stats is None:
        return None
    if stats.spontaneous:
        filler = (len(spoken_words(t)) < FILLER_WORDS for t in unit_texts)
    else:
        filler = (not spoken_words(t) or is_backchannel(strip_tags(t)) for t in unit_texts)
    return np.fromiter(filler, dtype=bool, count=len(unit_texts))


def dialogue_filler(
    segmentations: Sequence[Any], statistics: Sequence[TurnStatistics | None] | None = None
) -> NDArray[np.bool_] | None:
    """:func:`filler_units` over the units of several documents' segmentations (in order),
    or None when none of them is a dialogue. ``statistics``: each document's
    :func:`~budgetctx.unitizers._turns.turn_statistics`, when the caller has them."""
    if statistics is None:
        parts = [filler_units(s.document, [u.text for u in s.units]) for s in segmentations]
    else:
        parts = [
            _filler(t, [u.text for u in s.units])
            for s, t in zip(segmentations, statistics, strict=True)
        ]
    if all(p is None for p in parts):
        return None
    return np.concatenate(
        [
            p if p is not None else np.zeros(len(s.units), dtype=bool)
            for p, s in zip(parts, segmentations, strict=True)
        ]
    )


def centroid_salience(X: Any, *, filler: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
    """Cosine of each (L2-normalised) row of ``X`` to the centroid of the rows that are not
    ``filler``; filler rows get 0. Without ``filler`` (or when every row is filler) this is
    the plain centroid similarity.

    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> centroid_salience(X).round(3).tolist()
    [0.894, 0.894, 0.447]
    >>> centroid_salience(X, filler=np.array([True, True, False])).round(3).tolist()
    [0.0, 0.0, 1.0]
    """
    n = X.shape[0]
    if n == 0:
        return np.zeros(0)
    use = filler is not None and bool(filler.any()) and not bool(filler.all())
    rows = X[np.flatnonzero(~filler)] if use and filler is not None else X
    centroid = np.asarray(rows.mean(axis=0), dtype=np.float64).ravel()
    norm = float(np.linalg.norm(centroid))
    r = np.asarray(X @ centroid, dtype=np.float64).ravel() / norm if norm > 0 else np.zeros(n)
    if use and filler is not None:
        r[filler] = 0.0
    return r


def _unit_ranks(v: NDArray[np.float64]) -> NDArray[np.float64]:
    """Ranks of ``v`` scaled to [0, 1] (ties share their mean rank); 1 for a single value."""
    if v.size == 1:
        return np.ones(1)
    # scipy.stats.rankdata(v) - 1 in numpy: importing scipy.stats costs about a second
    order = np.argsort(v, kind="stable")
    sorted_v = v[order]
    starts = np.flatnonzero(np.r_[True, sorted_v[1:] != sorted_v[:-1]])
    ends = np.r_[starts[1:], v.size]
    ranks = np.empty(v.size, dtype=np.float64)
    ranks[order] = np.repeat((starts + ends - 1) / 2.0, ends - starts)
    return ranks / (v.size - 1)


def fused_salience(relevance: NDArray[np.float64], X: Any) -> NDArray[np.float64]:
    """No-query salience that length and filler cannot both fool (issue 21, third pass): the
    mean of two normalised ranks, the unit's centroid ``relevance`` and its number of distinct
    content terms (non-zero entries of its TF-IDF row ``X``), times the largest relevance (so
    a unit first on both keeps it and MMR's balance with redundancy keeps its scale). Units
    with relevance 0 (filler, or sharing nothing with the centroid) stay 0.

    Why these two: centroid cosine is normalised for length, so a short unit made of the
    document's most frequent words ("Thank you.") can outrank a long one that carries the
    content; the content-term count is what sumy's LSA ranks by in effect (with every
    dimension kept its score is the norm of the unit's term vector) and wins on dialogues and
    on clinical notes, but alone favours long, off-topic units. Their rank mean keeps a unit
    high only when it is both on topic and substantial. Rank fusion needs no weights, so
    nothing here was fitted; the choice of the pair among centroid, LexRank-style PageRank
    and content-term count was made on validation splits (docs/results.md).

    >>> from scipy import sparse
    >>> X = sparse.csr_matrix([[1, 0, 0, 0], [1, 1, 1, 1], [1, 1, 1, 0], [1, 0, 0, 0]])
    >>> fused_salience(np.array([0.9, 0.6, 0.3, 0.0]), X).round(3).tolist()
    [0.45, 0.675, 0.225, 0.0]
    """
    r = np.clip(np.asarray(relevance, dtype=np.float64), 0.0, None)
    pos = np.flatnonzero(r > 0)
    if pos.size == 0 or not hasattr(X, "tocsr"):
        # dense rows (embeddings) have no terms to count: the centroid relevance as it is
        return r
    terms = np.diff(X.tocsr().indptr).astype(np.float64)
    out = np.zeros_like(r)
    fused = 0.5 * (_unit_ranks(r[pos]) + _unit_ranks(terms[pos]))
    out[pos] = fused * float(r.max())
    return out
