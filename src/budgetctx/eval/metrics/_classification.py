"""Macro-F1 and a classification report for label tasks (PubMedQA yes/no/maybe)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from budgetctx._errors import InvalidParameterError

__all__ = ["ClassificationReport", "classification_report", "macro_f1"]

PUBMEDQA_CLASSES = ("yes", "no", "maybe")
_UNPARSEABLE = "\x00unparseable"


@dataclass(frozen=True)
class ClassificationReport:
    """Macro-F1, accuracy and counts of predicted labels against gold labels.

    A prediction outside ``classes`` is *unparseable*: it counts as wrong (a false negative of
    its gold class) and is counted in ``n_unparseable``; it is never mapped to a class.

    >>> r = classification_report(["yes", "no"], ["yes", "Yes."])
    >>> r.accuracy, r.n_unparseable, r.unparseable_examples
    (0.5, 1, ('Yes.',))
    """

    macro_f1: float
    accuracy: float
    per_class_f1: dict[str, float]
    classes: tuple[str, ...]
    n: int
    n_correct: int
    n_unparseable: int
    support: dict[str, int]  # gold labels per class
    predicted: dict[str, int]  # parseable predictions per class
    unparseable_examples: tuple[str, ...]  # up to 5 distinct unparseable predictions

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["classes"] = list(self.classes)
        out["unparseable_examples"] = list(self.unparseable_examples)
        return out


def classification_report(
    labels: Sequence[str],
    predictions: Sequence[str | None],
    *,
    classes: Sequence[str] = PUBMEDQA_CLASSES,
) -> ClassificationReport:
    """Compare ``predictions`` with gold ``labels`` over ``classes`` (macro-F1 via scikit-learn).

    Per-class F1 with no gold and no predicted example is 0 (scikit-learn's
    ``zero_division=0``). Empty input gives a report of zeros.
    """
    classes = _check_classes(classes)
    labels, predictions = list(labels), list(predictions)
    if len(labels) != len(predictions):
        raise InvalidParameterError(
            f"labels and predictions must have the same length. Got {len(labels)} and "
            f"{len(predictions)} instead. Pass one prediction per gold label.",
            parameter="predictions",
            value=len(predictions),
        )
    bad_gold = sorted({str(g) for g in labels if g not in classes})
    if bad_gold:
        raise InvalidParameterError(
            f"Gold labels must be among classes {list(classes)}. Got {bad_gold[:5]} instead. "
            "Map the gold labels first, or pass classes=... that include them.",
            parameter="labels",
            value=bad_gold[:5],
        )
    unparseable = [p for p in predictions if p not in classes]
    examples = tuple(dict.fromkeys(str(p) for p in unparseable))[:5]
    n = len(labels)
    if n == 0:
        zeros = dict.fromkeys(classes, 0)
        return ClassificationReport(
            0.0, 0.0, dict.fromkeys(classes, 0.0), classes, 0, 0, 0, zeros, dict(zeros), ()
        )
    from sklearn.metrics import f1_score

    # An unparseable prediction (any value, even None) becomes a marker outside ``classes``,
    # so it is a false negative of its gold class and a false positive of no class.
    marked = [p if p in classes else _UNPARSEABLE for p in predictions]
    per_class = f1_score(labels, marked, labels=list(classes), average=None, zero_division=0.0)
    n_correct = sum(1 for g, p in zip(labels, predictions, strict=True) if g == p)
    gold_counts, pred_counts = Counter(labels), Counter(predictions)
    return ClassificationReport(
        macro_f1=float(per_class.mean()),
        accuracy=n_correct / n,
        per_class_f1={c: float(f) for c, f in zip(classes, per_class, strict=True)},
        classes=classes,
        n=n,
        n_correct=n_correct,
        n_unparseable=len(unparseable),
        support={c: gold_counts[c] for c in classes},
        predicted={c: pred_counts[c] for c in classes},
        unparseable_examples=examples,
    )


def macro_f1(
    labels: Sequence[str],
    predictions: Sequence[str | None],
    *,
    classes: Sequence[str] = PUBMEDQA_CLASSES,
) -> float:
    """Unweighted mean of per-class F1 over ``classes``; unparseable predictions are wrong.

    >>> macro_f1(["yes", "no", "maybe"], ["yes", "no", "no"])
    0.5555555555555555
    """
    return classification_report(labels, predictions, classes=classes).macro_f1


def _check_classes(classes: Sequence[str]) -> tuple[str, ...]:
    if isinstance(classes, str):
        raise InvalidParameterError(
            f"classes must be a sequence of labels, not the string {classes!r}. "
            "Pass e.g. classes=('yes', 'no', 'maybe').",
            parameter="classes",
            value=classes,
        )
    out = tuple(classes)
    if not out or len(set(out)) != len(out):
        raise InvalidParameterError(
            f"classes must be a non-empty sequence of distinct labels. Got {list(out)} instead. "
            "Pass e.g. classes=('yes', 'no', 'maybe').",
            parameter="classes",
            value=list(out),
        )
    return out
