"""Evaluation metrics: ROUGE, token F1, the paper's overlap, BERTScore, macro-F1, bootstrap CIs.

Every metric takes ``(candidate, reference)`` in that order, and empty input has a defined
answer (a zero score; ``nan`` with ``n=0`` for a bootstrap of nothing).

>>> from budgetctx.eval.metrics import Rouge, token_f1, paper_overlap
>>> Rouge().score("the cat sat", "the cat sat on the mat").rouge1.r
0.5
>>> token_f1("The cat sat.", "the cat sat on the mat")  # articles and punctuation dropped
PRF(p=1.0, r=0.5, f=0.6666666666666666)
>>> paper_overlap("the cat sat", "the cat sat on the mat")["bigram"].r
0.4
"""

from __future__ import annotations

from budgetctx.eval.metrics._bertscore import (
    DEFAULT_BERTSCORE_MODEL,
    BERTScore,
    BERTScoreBaseline,
)
from budgetctx.eval.metrics._bootstrap import (
    ConfidenceInterval,
    PairedBootstrap,
    bootstrap_ci,
    paired_bootstrap,
)
from budgetctx.eval.metrics._classification import (
    PUBMEDQA_CLASSES,
    ClassificationReport,
    classification_report,
    macro_f1,
)
from budgetctx.eval.metrics._lcs import lcs_length
from budgetctx.eval.metrics._overlap import paper_overlap
from budgetctx.eval.metrics._prf import PRF
from budgetctx.eval.metrics._rouge import Rouge, RougeScores
from budgetctx.eval.metrics._token_f1 import normalize_answer, token_f1

__all__ = [
    "DEFAULT_BERTSCORE_MODEL",
    "PRF",
    "PUBMEDQA_CLASSES",
    "BERTScore",
    "BERTScoreBaseline",
    "ClassificationReport",
    "ConfidenceInterval",
    "PairedBootstrap",
    "Rouge",
    "RougeScores",
    "bootstrap_ci",
    "classification_report",
    "lcs_length",
    "macro_f1",
    "normalize_answer",
    "paired_bootstrap",
    "paper_overlap",
    "token_f1",
]
