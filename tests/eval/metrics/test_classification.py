"""Macro-F1 and the classification report (PubMedQA yes/no/maybe)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score

from budgetctx import InvalidParameterError
from budgetctx.eval.metrics import PUBMEDQA_CLASSES, classification_report, macro_f1


def test_macro_f1_matches_sklearn_on_random_labels() -> None:
    rng = np.random.default_rng(0)
    classes = list(PUBMEDQA_CLASSES)
    for _ in range(20):
        gold = [str(x) for x in rng.choice(classes, size=50)]
        pred = [str(x) for x in rng.choice(classes, size=50)]
        expect = f1_score(gold, pred, labels=classes, average="macro", zero_division=0.0)
        assert macro_f1(gold, pred) == pytest.approx(expect, abs=1e-12)
        assert classification_report(gold, pred).accuracy == accuracy_score(gold, pred)


def test_unparseable_predictions_are_wrong_and_counted() -> None:
    gold = ["yes", "yes", "no", "maybe", "no"]
    pred = ["yes", "Yes", "I think no", None, "no"]
    r = classification_report(gold, pred)
    assert r.n == 5
    assert r.n_correct == 2
    assert r.accuracy == 0.4
    assert r.n_unparseable == 3
    assert r.unparseable_examples == ("Yes", "I think no", "None")
    # yes: tp 1, fn 1 -> F 2/3; no: tp 1, fn 1 -> 2/3; maybe: 0
    assert r.per_class_f1 == {"yes": pytest.approx(2 / 3), "no": pytest.approx(2 / 3), "maybe": 0.0}
    assert r.macro_f1 == pytest.approx(4 / 9)
    assert r.support == {"yes": 2, "no": 2, "maybe": 1}
    assert r.predicted == {"yes": 1, "no": 1, "maybe": 0}
    marked = [p if p in PUBMEDQA_CLASSES else "<bad>" for p in pred]
    expect = f1_score(gold, marked, labels=list(PUBMEDQA_CLASSES), average="macro")
    assert r.macro_f1 == pytest.approx(expect)
    json.dumps(r.to_dict())


def test_custom_classes_and_empty_input() -> None:
    assert macro_f1(["a", "b"], ["a", "b"], classes=("a", "b")) == 1.0
    r = classification_report([], [])
    assert (r.n, r.macro_f1, r.accuracy, r.n_unparseable) == (0, 0.0, 0.0, 0)
    assert r.per_class_f1 == {"yes": 0.0, "no": 0.0, "maybe": 0.0}


def test_bad_input() -> None:
    with pytest.raises(InvalidParameterError, match="same length"):
        macro_f1(["yes"], ["yes", "no"])
    with pytest.raises(InvalidParameterError, match="Gold labels"):
        macro_f1(["Yes"], ["yes"])
    with pytest.raises(InvalidParameterError, match="distinct"):
        macro_f1(["yes"], ["yes"], classes=("yes", "yes"))
    with pytest.raises(InvalidParameterError, match="not the string"):
        macro_f1(["yes"], ["yes"], classes="yes")
