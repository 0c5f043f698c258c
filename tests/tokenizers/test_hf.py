"""HFTokenizer on a real tokenizer.json (all-MiniLM-L6-v2, BERT WordPiece), loaded locally."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx import InvalidParameterError, TokenizerError
from budgetctx.tokenizers import HFTokenizer, Tokenizer, get_tokenizer

TEXTS = [
    "",
    "   ",
    "Aspirin 81 mg p.o. daily.",
    "Metoprolol 25 mg p.o. b.i.d.; zolpidem 5 mg q.h.s.; 67 y.o. male, Dr. Smith.",
    "Na 135, K 4.1, BP 120/80.",
    "Café naïve résumé Straße İstanbul e\u0301",
    "患者は高血圧の既往があります。 مريض 🧠 👩\u200d⚕️",
    "line one\r\nline two\t\ttabbed\n\n",
    "[CLS] [SEP] [PAD] [MASK] <|endoftext|>",
    "unbelievableness " * 60,  # > 128 tokens: the file's own truncation must not cap the count
    "pneumonoultramicroscopicsilicovolcanoconiosis" * 5,
]


def _reference(path: Path) -> Any:
    """The tokenizers library itself, with the file's padding and truncation switched off."""
    from tokenizers import Tokenizer as HFTok

    ref = HFTok.from_file(str(path))
    ref.no_padding()
    ref.no_truncation()
    return ref


@pytest.fixture(scope="module")
def hf(minilm_json: Path) -> Tokenizer:
    return get_tokenizer(f"hf:{minilm_json}")


@pytest.fixture(scope="module")
def ref(minilm_json: Path) -> Any:
    return _reference(minilm_json)


def test_specs_all_load_the_same_file(minilm_json: Path, minilm_dir: Path) -> None:
    for spec in (f"hf:{minilm_json}", str(minilm_json), str(minilm_dir), f"hf:{minilm_dir}"):
        tok = get_tokenizer(spec)
        assert isinstance(tok, HFTokenizer)
        assert isinstance(tok, Tokenizer)
        assert tok.name == f"hf:{minilm_json}"
        assert tok.count("Aspirin 81 mg p.o. daily.") == 11
    assert get_tokenizer("huggingface", path=minilm_dir).name == f"hf:{minilm_json}"
    assert HFTokenizer(minilm_json, name="minilm").name == "minilm"


def test_name_option_through_get_tokenizer(minilm_json: Path) -> None:
    assert get_tokenizer(f"hf:{minilm_json}", name="minilm").name == "minilm"


@pytest.mark.parametrize("text", TEXTS)
def test_counts_match_tokenizers_library(hf: Tokenizer, ref: Any, text: str) -> None:
    assert hf.count(text) == len(ref.encode(text, add_special_tokens=False).ids)


@settings(max_examples=200, deadline=None)
@given(text=st.text())
def test_hypothesis_counts_match_tokenizers_library(hf: Tokenizer, ref: Any, text: str) -> None:
    assert hf.count(text) == len(ref.encode(text, add_special_tokens=False).ids)


def test_file_padding_and_truncation_are_ignored(hf: Tokenizer, minilm_json: Path) -> None:
    """This tokenizer.json pads to 128 and cuts at 128 (sentence-transformers' settings); a count
    must be the text's own length, not the padded or capped one."""
    from tokenizers import Tokenizer as HFTok

    raw = HFTok.from_file(str(minilm_json))
    assert raw.padding is not None and raw.truncation is not None
    assert hf.count("hello") == 1
    assert hf.count("hello " * 300) == 300
    assert hf.count_batch(["hello", "hello world", ""]) == [1, 2, 0]


def test_special_tokens_are_not_added(hf: Tokenizer) -> None:
    """No [CLS]/[SEP]: those belong to the prompt wrapper, not to the context."""
    assert hf.count("") == 0
    assert hf.count("hello world") == 2


def test_count_batch_equals_count(hf: Tokenizer) -> None:
    for texts in (TEXTS, TEXTS * 10):
        assert hf.count_batch(texts) == [hf.count(t) for t in texts]
        assert hf.count_batch(tuple(texts)) == [hf.count(t) for t in texts]
    assert hf.count_batch([]) == []


def test_truncate_on_wordpiece_boundary(hf: Tokenizer) -> None:
    assert hf.truncate("unbelievableness is real", 1) == "unbelievable"
    assert hf.truncate("unbelievableness is real", 2) == "unbelievableness"
    assert hf.truncate("Na 135, K 4.1", 3) == "Na 135,"


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "tokenizer.json"
    with pytest.raises(TokenizerError) as exc:
        get_tokenizer(f"hf:{missing}")
    assert str(missing) in str(exc.value)
    with pytest.raises(TokenizerError, match=r"tokenizer\.json"):
        get_tokenizer(str(missing))
    with pytest.raises(TokenizerError) as exc:
        get_tokenizer(f"hf:{tmp_path}")  # a folder without a tokenizer.json
    assert str(tmp_path / "tokenizer.json") in str(exc.value)


@pytest.mark.parametrize(
    "content", ["", "{not json", '{"model": {"type": "NoSuchModel"}}', "[1, 2, 3]"]
)
def test_corrupt_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(TokenizerError) as exc:
        get_tokenizer(str(path))
    assert str(path) in str(exc.value)
    assert exc.value.__cause__ is not None


def test_pickle_round_trip(minilm_json: Path) -> None:
    for tok in (HFTokenizer(minilm_json), HFTokenizer(minilm_json, name="minilm")):
        back = pickle.loads(pickle.dumps(tok))
        assert isinstance(back, HFTokenizer)
        assert back.name == tok.name
        assert repr(back) == repr(tok)
        assert back.count_batch(TEXTS) == tok.count_batch(TEXTS)
        assert back.truncate(TEXTS[3], 7) == tok.truncate(TEXTS[3], 7)
        assert len(pickle.dumps(tok)) < 1000  # by path, not by vocabulary


@pytest.mark.slow
def test_mtsamples_notes(hf: Tokenizer, ref: Any, mtsamples_notes: list[str]) -> None:
    expected = [len(e.ids) for e in ref.encode_batch(mtsamples_notes, add_special_tokens=False)]
    assert hf.count_batch(mtsamples_notes) == expected


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"path": None}, "path"),
        ({"path": 3}, "path"),
        ({"path": ""}, "path"),
        ({"path": "x.json", "name": 5}, "name"),
        ({"path": "x.json", "name": ""}, "name"),
    ],
)
def test_bad_options_are_invalid_parameters(options: dict[str, Any], parameter: str) -> None:
    # checked before the file is looked for, so a bad name fails even beside a missing file
    with pytest.raises(InvalidParameterError) as exc:
        HFTokenizer(**options)
    assert exc.value.parameter == parameter
    assert str(exc.value).startswith(f"The {parameter!r} parameter of HFTokenizer")


def test_a_path_object_and_a_name_are_accepted(minilm_json: Path) -> None:
    assert HFTokenizer(minilm_json, name="minilm").name == "minilm"
    assert get_tokenizer("hf", path=minilm_json).count("chest pain") == 2
