"""Mistral's Tekken tokenizer: the bundled vocabulary, a tekken.json of one's own, the model
names mistral-common maps to it, and the Tokenizer contract (truncate, pickle, long runs).

Exactness against mistral-common itself is checked by benchmarks/verify_tekken.py (it needs
an environment with numpy<2.4); here a Tekken file written by the test, read both by
TekkenTokenizer and by a tiktoken Encoding built independently, must agree, and so must the
real files whenever mistral-common's data folder is present."""

from __future__ import annotations

import base64
import importlib.util
import json
import pickle
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx import TokenizerError, fit_messages
from budgetctx.tokenizers import get_tokenizer, is_exact
from budgetctx.tokenizers._models import model_tokenizer_name
from budgetctx.tokenizers._tekken import TEKKEN_MODELS, TekkenTokenizer, _bundled

PATTERN = r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def _write_tekken(path: Path, merges: list[bytes], special: int = 3) -> Path:
    vocab = [bytes([i]) for i in range(256)] + merges
    path.write_text(
        json.dumps(
            {
                "config": {
                    "pattern": PATTERN,
                    "default_vocab_size": len(vocab) + special,
                    "default_num_special_tokens": special,
                },
                "vocab": [
                    {"rank": i, "token_bytes": base64.b64encode(b).decode(), "token_str": None}
                    for i, b in enumerate(vocab)
                ],
            }
        ),
        encoding="utf-8",
    )
    return path


def test_a_tekken_json_counts_as_tiktoken_does(tmp_path: Path) -> None:
    merges = [b"he", b"ll", b"hell", b"hello", b" w", b" wo"]
    path = _write_tekken(tmp_path / "tekken.json", merges)
    tok = get_tokenizer(f"tekken:{path}")
    ranks = {b: i for i, b in enumerate([bytes([i]) for i in range(256)] + merges)}
    reference = tiktoken.Encoding("ref", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens={})
    for text in ("hello world", "hello\n\n  hello", "", "héllo 42"):
        assert tok.count(text) == len(reference.encode_ordinary(text))
    assert tok.encode("hello") == [259 + 3]  # "hello" is rank 259, after the 3 special ids
    assert tok.name == f"tekken:{path}" and is_exact(tok)
    assert pickle.loads(pickle.dumps(tok)).count("hello world") == tok.count("hello world")


def test_a_file_that_is_not_tekken_names_the_fix(tmp_path: Path) -> None:
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"model": {}}', encoding="utf-8")
    with pytest.raises(TokenizerError, match=r"tekken\.json"):
        TekkenTokenizer(str(bad))


def test_the_bundled_vocabulary() -> None:
    _pattern, special, ranks = _bundled()
    assert special == 1000 and len(ranks) == 130_072
    assert sorted(ranks.values()) == list(range(130_072))
    assert all(ranks[bytes([i])] == i for i in range(256))  # the byte tokens come first
    tok = get_tokenizer("tekken")
    # a Tekken word piece: " Aspirin" is not one token, " the" is
    assert tok.count(" the") == 1 and tok.count(" Aspirin") > 1


@pytest.mark.parametrize(
    "model",
    [
        "open-mistral-nemo-2407",
        "mistralai/Mistral-Nemo-Instruct-2407",
        "pixtral-12b-2409",
        "ministral-8b-2410",
        "mistral-small-2409",
    ],
)
def test_mistral_common_tekken_models_map_to_it(model: str) -> None:
    assert model_tokenizer_name(model) == "tekken"
    assert get_tokenizer(model).name == "tekken"


@pytest.mark.parametrize("model", ["mistral-large-2411", "open-mixtral-8x22b", "codestral-2405"])
def test_sentencepiece_mistral_models_are_not_guessed(model: str) -> None:
    assert model_tokenizer_name(model) is None


def test_every_listed_model_maps() -> None:
    assert all(model_tokenizer_name(m) == "tekken" for m in TEKKEN_MODELS)


def test_fit_messages_for_a_mistral_model_is_exact() -> None:
    msgs = [{"role": "user", "content": "Chest pain at rest. Troponin negative twice. " * 20}]
    msgs = [*msgs, {"role": "user", "content": "Summarise."}]
    fit = fit_messages(msgs, 80, model="open-mistral-nemo")
    assert fit.exact is True and fit.prompt_tokens <= 80 and fit.tokenizer == "tekken"


def test_a_long_whitespace_run_does_not_panic() -> None:
    tok = get_tokenizer("tekken")
    text = "a" + " " * 1_000_000 + "b"
    assert tok.count(text) == len(tok.encode(text)) > 2


@settings(max_examples=60, deadline=None)
@given(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200),
    st.integers(0, 60),
)
def test_truncate_is_a_prefix_within_the_count(text: str, n: int) -> None:
    tok = get_tokenizer("tekken")
    cut = tok.truncate(text, n)
    assert text.startswith(cut) and tok.count(cut) <= n
    assert tok.count_batch([text, cut]) == [tok.count(text), tok.count(cut)]


def _mistral_common_data() -> Path | None:
    spec = importlib.util.find_spec("mistral_common")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(spec.submodule_search_locations[0]) / "data"
    return folder if (folder / "tekken_240911.json").is_file() else None


def test_the_bundled_vocabulary_is_mistral_commons(sample_note: str) -> None:
    folder = _mistral_common_data()
    if folder is None:
        pytest.skip("mistral-common is not installed (it pins numpy<2.4); see verify_tekken.py")
    bundled = get_tokenizer("tekken")
    for name in ("tekken_240911.json", "tekken_240718.json"):
        own = TekkenTokenizer(str(folder / name))
        assert own.encode(sample_note) == bundled.encode(sample_note)
