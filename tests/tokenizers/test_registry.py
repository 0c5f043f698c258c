"""get_tokenizer / list_tokenizers / register_tokenizer."""

from __future__ import annotations

import pytest

import budgetctx
from budgetctx import InvalidParameterError, UnknownComponentError
from budgetctx.tokenizers import (
    TiktokenTokenizer,
    Tokenizer,
    WordTokenizer,
    _base,
    get_tokenizer,
    list_tokenizers,
    register_tokenizer,
)


def test_list_tokenizers() -> None:
    assert list_tokenizers() == [
        "cl100k_base",
        "claude",
        "gemini",
        "hf",
        "llama3",
        "o200k_base",
        "qwen3",
        "tekken",
        "words",
    ]
    assert budgetctx.list_tokenizers() == list_tokenizers()


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("o200k_base", "o200k_base"),
        ("gpt-4o", "o200k_base"),
        ("GPT-4o", "o200k_base"),
        ("gpt-4o-mini", "o200k_base"),
        ("gpt-4.1", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("o1", "o200k_base"),
        ("O3", "o200k_base"),
        ("o4-mini", "o200k_base"),
        ("cl100k_base", "cl100k_base"),
        ("CL100K_BASE", "cl100k_base"),
        ("gpt-4", "cl100k_base"),
        ("GPT-4", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("text-embedding-3-small", "cl100k_base"),
    ],
)
def test_openai_names_and_aliases(spec: str, expected: str) -> None:
    tok = get_tokenizer(spec)
    assert isinstance(tok, TiktokenTokenizer)
    assert isinstance(tok, Tokenizer)
    assert tok.name == expected
    assert repr(tok) == f"TiktokenTokenizer({expected!r})"


@pytest.mark.parametrize("spec", ["words", "whitespace", "Words", "WHITESPACE"])
def test_words_aliases(spec: str) -> None:
    tok = get_tokenizer(spec)
    assert isinstance(tok, WordTokenizer)
    assert isinstance(tok, Tokenizer)
    assert tok.name == "words"


def test_each_call_builds_a_new_instance_sharing_the_encoding() -> None:
    a, b = get_tokenizer("gpt-4o"), get_tokenizer("o200k_base")
    assert isinstance(a, TiktokenTokenizer) and isinstance(b, TiktokenTokenizer)
    assert a is not b
    assert a._enc is b._enc  # the ranks are loaded once


@pytest.mark.parametrize("spec", ["gpt-99", "o200k", "p50k_base", "", "hf"])
def test_unknown_name(spec: str) -> None:
    if spec == "hf":  # a known name, but it needs a path: a bad-options error, not a crash
        with pytest.raises(InvalidParameterError, match="path"):
            get_tokenizer(spec)
        return
    with pytest.raises(UnknownComponentError) as exc:
        get_tokenizer(spec)
    err = exc.value
    assert isinstance(err, KeyError)
    assert err.kind == "tokenizer"
    assert err.name == spec
    assert err.available == list_tokenizers()
    message = str(err)
    assert repr(spec) in message
    for name in list_tokenizers():
        assert repr(name) in message


def test_instance_is_returned_unchanged() -> None:
    for tok in (TiktokenTokenizer("cl100k_base"), WordTokenizer()):
        assert get_tokenizer(tok) is tok


def test_options_with_an_instance() -> None:
    tok = WordTokenizer()
    with pytest.raises(InvalidParameterError) as exc:
        get_tokenizer(tok, encoding="o200k_base")
    assert exc.value.parameter == "tokenizer_options"
    assert exc.value.value == ["encoding"]


def test_unknown_option_for_a_name() -> None:
    with pytest.raises(InvalidParameterError, match="o200k_base"):
        get_tokenizer("o200k_base", lowercase=True)


def test_register_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_base._REGISTRY, "_factories", dict(_base._REGISTRY._factories))
    monkeypatch.setattr(_base._REGISTRY, "_aliases", dict(_base._REGISTRY._aliases))
    register_tokenizer("chars", WordTokenizer, aliases=("Letters",))
    assert "chars" in list_tokenizers()
    assert isinstance(get_tokenizer("LETTERS"), WordTokenizer)
    for taken in ("o200k_base", "GPT-4O", "words"):
        with pytest.raises(InvalidParameterError, match="already registered"):
            register_tokenizer(taken, WordTokenizer)


@pytest.mark.parametrize("spec", [None, 200_000, b"o200k_base", WordTokenizer])
def test_a_spec_that_is_neither_name_nor_tokenizer_is_refused(spec: object) -> None:
    # F13: get_tokenizer(None) used to return None and fail later with an AttributeError
    with pytest.raises(InvalidParameterError) as exc:
        get_tokenizer(spec)  # type: ignore[arg-type]
    assert exc.value.parameter == "tokenizer"
    message = str(exc.value)
    assert message.startswith("The 'tokenizer' parameter of get_tokenizer must be")
    for name in list_tokenizers():
        assert repr(name) in message


def test_an_object_missing_the_protocol_is_refused() -> None:
    class CountsOnly:
        name = "half"

        def count(self, text: str) -> int:
            return len(text)

    with pytest.raises(InvalidParameterError, match="Tokenizer protocol"):
        get_tokenizer(CountsOnly())  # type: ignore[arg-type]
