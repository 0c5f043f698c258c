"""SQuAD-style token F1 (the official SQuAD v1.1/v2.0 evaluation script's normalisation)."""

from __future__ import annotations

import re
import string
from collections import Counter

from budgetctx.eval.metrics._prf import PRF, prf_from_counts

__all__ = ["normalize_answer", "token_f1"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> list[str]:
    """Lowercase, drop ASCII punctuation, drop the articles a/an/the, split on whitespace.

    >>> normalize_answer("The Cat's  hat!")
    ['cats', 'hat']
    """
    return _ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split()


def token_f1(candidate: str, reference: str) -> PRF:
    """Multiset token overlap after :func:`normalize_answer`.

    Unlike the SQuAD v2 script (which gives 1.0 when both sides are empty, its "no answer"
    convention), an empty side always scores 0, as every other metric here does.

    >>> token_f1("the cat sat", "a cat sat down")
    PRF(p=1.0, r=0.6666666666666666, f=0.8)
    """
    cand = Counter(normalize_answer(candidate))
    ref = Counter(normalize_answer(reference))
    overlap = sum((cand & ref).values())
    return prf_from_counts(overlap, cand.total(), ref.total())
