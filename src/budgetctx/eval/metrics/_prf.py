"""Precision / recall / F1 triple shared by every overlap metric."""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["PRF", "prf_from_counts"]


@dataclass(frozen=True)
class PRF:
    """Precision ``p``, recall ``r`` and their harmonic mean ``f`` (F1); in [0, 1] unless rescaled.

    >>> PRF(1.0, 0.5, 2 / 3).to_dict()["r"]
    0.5
    """

    p: float
    r: float
    f: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def fmeasure(precision: float, recall: float) -> float:
    """Harmonic mean; 0.0 when both are 0 (rouge_score's convention)."""
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def prf_from_counts(overlap: int, n_candidate: int, n_reference: int) -> PRF:
    """P = overlap / |candidate|, R = overlap / |reference|; an empty side scores 0."""
    precision = overlap / n_candidate if n_candidate else 0.0
    recall = overlap / n_reference if n_reference else 0.0
    return PRF(precision, recall, fmeasure(precision, recall))
