"""The paper's own unigram/bigram overlap (Appendix D of the budgeted-context paper).

Appendix D defines ROUGE-1/2 as multiset overlap of the unigrams ``U(y)`` and consecutive word
pairs ``B(y)`` of the generated text ``y`` and the reference ``y*``:
``P = |U(y) ∩ U(y*)| / |U(y)|``, ``R = |U(y) ∩ U(y*)| / |U(y*)|``, ``F = 2PR / (P + R)``.
It does not say how words are found. We take whitespace tokens and, by default, lowercase them:
the appendix calls the quantity ROUGE, and ROUGE (Lin, 2004; rouge_score) is case-insensitive,
so case-folding is what the paper's numbers are comparable with. Punctuation is kept attached
(``"mat."`` differs from ``"mat"``) and nothing is stemmed; that is the difference from
:class:`Rouge`, which is what to report as ROUGE.
"""

from __future__ import annotations

from collections import Counter

from budgetctx.eval.metrics._prf import PRF, prf_from_counts

__all__ = ["paper_overlap"]


def _ngrams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(zip(*(tokens[i:] for i in range(n)), strict=False))


def paper_overlap(candidate: str, reference: str, *, lowercase: bool = True) -> dict[str, PRF]:
    """Unigram and bigram multiset overlap on whitespace tokens, as in the paper's Appendix D.

    >>> out = paper_overlap("the cat sat", "The cat sat on the mat")
    >>> out["unigram"].r, out["bigram"].p
    (0.5, 1.0)
    """
    if lowercase:
        candidate, reference = candidate.lower(), reference.lower()
    cand, ref = candidate.split(), reference.split()
    out: dict[str, PRF] = {}
    for name, n in (("unigram", 1), ("bigram", 2)):
        c, r = _ngrams(cand, n), _ngrams(ref, n)
        out[name] = prf_from_counts(sum((c & r).values()), c.total(), r.total())
    return out
