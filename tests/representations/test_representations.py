"""Representation options: validated at construction, defaults unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from budgetctx import InvalidParameterError
from budgetctx.representations import (
    EmbeddingRepresentation,
    TfidfRepresentation,
    get_representation,
    list_representations,
)
from budgetctx.representations._embeddings import resolve_model_path


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        # "french" is not a list scikit-learn knows: encode would fall back to all-ones rows
        ({"stop_words": "french"}, "stop_words"),
        ({"stop_words": 1}, "stop_words"),
        ({"sublinear_tf": "yes"}, "sublinear_tf"),
        ({"sublinear_tf": 1}, "sublinear_tf"),
        ({"ngram_range": (2, 1)}, "ngram_range"),
        ({"ngram_range": (0, 1)}, "ngram_range"),
        ({"ngram_range": (1, 1.5)}, "ngram_range"),
        ({"ngram_range": "1,2"}, "ngram_range"),
        ({"ngram_range": (1, 2, 3)}, "ngram_range"),
        ({"vectorizer_": "fitted"}, "vectorizer_"),
    ],
)
def test_tfidf_refuses_bad_options(options: dict[str, Any], parameter: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        get_representation("tfidf", **options)
    assert info.value.parameter == parameter
    assert str(info.value).startswith(f"The {parameter!r} parameter of TfidfRepresentation")


def test_tfidf_defaults_and_a_list_pair() -> None:
    rep = TfidfRepresentation(ngram_range=[1, 2])  # type: ignore[arg-type]
    assert rep.ngram_range == (1, 2)  # hashable again: it keys the per-thread vectorizer cache
    assert rep.encode(["chest pain", "pain resolved"]).X.shape[0] == 2
    assert TfidfRepresentation().params() == {
        "stop_words": "english",
        "sublinear_tf": True,
        "ngram_range": [1, 1],
        "fitted_on_corpus": False,
        "semantic": True,
    }
    assert TfidfRepresentation(stop_words=None).params()["stop_words"] is None
    assert TfidfRepresentation(vectorizer_=TfidfVectorizer()).vectorizer_ is not None


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"model": ""}, "model"),
        ({"model": None}, "model"),
        ({"device": 0}, "device"),
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": "64"}, "batch_size"),
        ({"batch_size": 6.4}, "batch_size"),
    ],
)
def test_embeddings_refuse_bad_options_without_loading_a_model(
    options: dict[str, Any], parameter: str
) -> None:
    with pytest.raises(InvalidParameterError) as info:
        EmbeddingRepresentation(**options)
    assert info.value.parameter == parameter


def test_resolve_model_path_refuses_a_non_string() -> None:
    with pytest.raises(InvalidParameterError, match="'model' parameter of resolve_model_path"):
        resolve_model_path(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("spec", [None, 1.0, TfidfRepresentation])
def test_registry_refuses_what_is_neither_name_nor_representation(spec: Any) -> None:
    with pytest.raises(InvalidParameterError) as info:
        get_representation(spec)
    assert info.value.parameter == "representation"
    for name in list_representations():
        assert repr(name) in str(info.value)
