"""Model names -> tokenizers: OpenAI names to their encodings (checked against tiktoken's own
offline table), the exact open-model vocabularies, and the not-exact estimates."""

from __future__ import annotations

import json
import pickle
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken.model import encoding_name_for_model

from budgetctx import UnknownComponentError, count_message_tokens, fit_messages, get_tokenizer
from budgetctx.tokenizers import EstimatedTokenizer, QuicktokTokenizer, is_exact
from budgetctx.tokenizers._models import (
    DIGIT_FAMILIES,
    ESTIMATE_FACTORS,
    OTHER_SCRIPT_FACTORS,
    model_tokenizer_name,
    parse_estimate_spec,
)

OPENAI = [
    "gpt-4o",
    "gpt-4o-mini",
    "gpt-4o-2024-08-06",
    "chatgpt-4o-latest",
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-4.1-nano",
    "gpt-4.5-preview",
    "gpt-5",
    "gpt-5-mini",
    "gpt-5-nano",
    "gpt-5.1",
    "o1",
    "o1-mini",
    "o1-preview",
    "o3",
    "o3-mini",
    "o3-pro",
    "o4-mini",
    "gpt-4",
    "gpt-4-0613",
    "gpt-4-32k",
    "gpt-4-turbo",
    "gpt-4-turbo-2024-04-09",
    "gpt-3.5-turbo",
    "gpt-3.5-turbo-0125",
    "gpt-35-turbo",
    "text-embedding-3-small",
    "text-embedding-3-large",
    "text-embedding-ada-002",
]


@pytest.mark.parametrize("model", OPENAI)
def test_openai_names_match_tiktokens_own_table(model: str) -> None:
    assert model_tokenizer_name(model) == encoding_name_for_model(model)
    assert get_tokenizer(model).name == encoding_name_for_model(model)
    assert is_exact(get_tokenizer(model))


def test_gpt_oss_counts_as_o200k_base() -> None:
    # o200k_harmony is o200k_base plus special tokens, which user text never turns into.
    assert encoding_name_for_model("gpt-oss-120b") == "o200k_harmony"
    assert get_tokenizer("gpt-oss-120b").name == "o200k_base"


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("openai/gpt-4.1", "o200k_base"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama3"),
        ("llama-3.3-70b", "llama3"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen3"),
        ("qwen3-32b", "qwen3"),
        ("claude-3-5-sonnet", "claude"),
        ("claude-sonnet-4-5-20250929", "claude"),
        ("anthropic/claude-opus-4-1", "claude"),
        ("gemini-1.5-pro", "gemini"),
        ("gemini-2.5-flash", "gemini"),
    ],
)
def test_other_families(model: str, family: str) -> None:
    assert model_tokenizer_name(model) == family


@pytest.mark.parametrize("model", ["qwen3.5-plus", "llama-2-7b", "mistral-large", "gpt4o"])
def test_unknown_families_are_refused_not_guessed(model: str) -> None:
    assert model_tokenizer_name(model) is None
    with pytest.raises(UnknownComponentError):
        get_tokenizer(model)


def test_the_issue_models_are_no_longer_refused() -> None:
    msgs = [{"role": "user", "content": "Chest pain at rest. Troponin negative twice."}]
    for model in ("claude-3-5-sonnet", "gemini-1.5-pro", "o3-mini"):
        assert count_message_tokens(msgs, model=model) > 0
    fit = fit_messages(msgs * 3, 40, model="claude-3-5-sonnet")
    assert fit.exact is False and fit.prompt_tokens <= 40
    assert json.loads(json.dumps(fit.to_dict()))["exact"] is False
    assert fit_messages(msgs, 400, model="o3-mini").exact is True


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300)


@settings(max_examples=60, deadline=None)
@given(TEXT, st.sampled_from(sorted(ESTIMATE_FACTORS)), st.integers(0, 80))
def test_estimates_are_the_stated_margin_over_o200k(text: str, family: str, n: int) -> None:
    tok = get_tokenizer(family)
    base = get_tokenizer("o200k_base").count(text)
    assert not is_exact(tok)
    factor = ESTIMATE_FACTORS[family]
    assert tok.count(text) >= factor * base - 1e-9
    # the plain estimate, unless the text has what the family counts apart
    apart = any(c.isdigit() for c in text) if family in DIGIT_FAMILIES else not text.isascii()
    if not apart or (family not in OTHER_SCRIPT_FACTORS and family not in DIGIT_FAMILIES):
        assert tok.count(text) < factor * base + 1
    cut = tok.truncate(text, n)
    assert text.startswith(cut) and tok.count(cut) <= max(n, 0)


def test_estimate_factor_is_checked_and_pickles() -> None:
    with pytest.raises(ValueError, match="factor"):
        EstimatedTokenizer("claude", factor=0.9)
    tok = EstimatedTokenizer("claude", factor=2.0)
    again = pickle.loads(pickle.dumps(tok))
    assert again.count("one two three") == tok.count("one two three") == 6
    assert again.name == "claude~o200k_basex2"


@pytest.mark.parametrize(
    "tok", [EstimatedTokenizer("claude"), EstimatedTokenizer("gemini", factor=2)]
)
def test_an_estimate_loads_again_from_its_name(tok: EstimatedTokenizer) -> None:
    # A Context records the tokenizer's name; get_tokenizer must rebuild the same counter.
    from budgetctx import get_tokenizer

    again = get_tokenizer(tok.name)
    assert (again.name, again.count("Aspirin 81 mg daily.")) == (
        tok.name,
        tok.count("Aspirin 81 mg daily."),
    )


quicktok = pytest.importorskip("quicktok", reason="quicktok-v1 (extra 'open') is not installed")


@pytest.mark.parametrize("name", ["llama3", "qwen3"])
def test_special_token_text_is_counted_as_text(name: str) -> None:
    # A note may quote "<|endoftext|>": it is text to count, never a refusal (as tiktoken's
    # encode_ordinary), and never fewer tokens than the special token would be.
    tok = QuicktokTokenizer(name)
    assert tok.count("a <|endoftext|> b") > tok.count("a  b")


@pytest.mark.parametrize("name", ["llama3", "qwen3"])
def test_open_vocabularies_count_and_truncate(name: str) -> None:
    tok = get_tokenizer(name)
    assert is_exact(tok)
    text = "Na 135, K 4.1. 日本語 🙂 café"
    assert tok.count(text) == len(quicktok.get_encoding(name).encode(text))
    cut = tok.truncate(text, 5)
    assert text.startswith(cut) and tok.count(cut) <= 5
    assert pickle.loads(pickle.dumps(tok)).count(text) == tok.count(text)


def test_llama3_known_ids() -> None:
    # Meta's tokenizer.model: "Hello" is 9906, " world" 1917 (the ids printed in Meta's
    # llama3 README example and in every Llama-3 tokenizer.json).
    enc = quicktok.get_encoding("llama3")
    assert enc.encode("Hello world") == [9906, 1917]


@pytest.mark.parametrize(
    "text",
    ["Привет, как дела? " * 5, "สวัสดีครับ " * 5, "Tôi là bác sĩ. " * 5, "患者は胸痛を訴えた。" * 5],
)
def test_claude_counts_letters_outside_ascii_at_the_other_factor(text: str) -> None:
    # Anthropic's published tokenizer splits these up to 3.1x finer than o200k_base
    # (benchmarks/measure_estimates.py): 1.6x alone would undercount them.
    base = get_tokenizer("o200k_base").count(text)
    assert get_tokenizer("claude").count(text) >= 2.5 * base
    assert (
        get_tokenizer("gemini").count(text) < 1.4 * base + 1
    )  # Gemma's vocabulary is multilingual
    english = "Chest pain at rest, troponin negative twice. " * 5
    assert (
        get_tokenizer("claude").count(english)
        < 1.6 * get_tokenizer("o200k_base").count(english) + 1
    )


def test_an_estimate_with_its_own_other_factor_round_trips() -> None:
    tok = EstimatedTokenizer("claude", factor=1.8, other_factor=4.0)
    assert tok.name == "claude~o200k_basex1.8+4"
    again = parse_estimate_spec(tok.name)
    assert again is not None and (again.factor, again.other_factor) == (1.8, 4.0)
    assert pickle.loads(pickle.dumps(tok)).count("Привет") == tok.count("Привет")
    assert EstimatedTokenizer("claude", factor=2.0).other_factor == 2.0  # one calibration
    with pytest.raises(ValueError, match="other_factor"):
        EstimatedTokenizer("claude", other_factor=0.5)


@pytest.mark.parametrize(
    "text", ["2026-03-14T08:00", '{"value": 135.2, "time": "2026-03-01T07:00"}', "Na 135, K 4.1"]
)
def test_gemini_counts_every_digit(text: str) -> None:
    # Gemma's SentencePiece (Gemini's vocabulary) makes each digit a token; o200k_base takes
    # up to three digits in one: this timestamp is 16 Gemma 3 tokens, 10 in o200k_base.
    digits = sum(c.isdigit() for c in text)
    rest = re.sub(r"[0-9]+", " ", text)
    count = get_tokenizer("gemini").count(text)
    assert count >= digits + 1.4 * get_tokenizer("o200k_base").count(rest) - 1e-9
    assert count >= 1.4 * get_tokenizer("o200k_base").count(text) - 1e-9
    assert get_tokenizer("gemini").count("2026-03-14T08:00") >= 16
