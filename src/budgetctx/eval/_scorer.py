"""The text metrics of a sweep row: ROUGE-1/2/L (P, R, F1), token F1, the paper's overlap.

>>> scores = SweepScorer(use_stemmer=True)("Heart failure.", "Heart failure treated.")
>>> scores["rouge1"] > 0.5, sorted(scores)[:3]
(True, ['overlap1_f', 'overlap2_f', 'rouge1'])
"""

from __future__ import annotations

__all__ = ["SweepScorer"]


class SweepScorer:
    """ROUGE-1/2/L F1 (rouge-score), token F1 and the paper's n-gram overlap, rounded to 6
    places so that rows written by different processes compare equal."""

    def __init__(self, use_stemmer: bool) -> None:
        from budgetctx.eval.metrics import Rouge, paper_overlap, token_f1

        self.rouge = Rouge(use_stemmer=use_stemmer)
        self._token_f1 = token_f1
        self._overlap = paper_overlap

    def __call__(self, candidate: str, reference: str) -> dict[str, float]:
        r = self.rouge.score(candidate, reference)
        tf = self._token_f1(candidate, reference)
        ov = self._overlap(candidate, reference)
        out = {}
        for name, prf in r.to_dict().items():
            out[name] = round(float(prf["f"]), 6)
            out[f"{name}_p"] = round(float(prf["p"]), 6)
            out[f"{name}_r"] = round(float(prf["r"]), 6)
        out["token_f1"] = round(float(tf.f), 6)
        out["overlap1_f"] = round(float(ov["unigram"].f), 6)
        out["overlap2_f"] = round(float(ov["bigram"].f), 6)
        return out
