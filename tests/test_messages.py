"""Chat messages: the billed count (against the OpenAI cookbook's published figures), the
budget contract of ``fit_messages`` (hypothesis), provenance into each message, bad input."""

from __future__ import annotations

import json
from typing import Any

import pytest

from budgetctx import (
    InputError,
    InvalidParameterError,
    count_message_tokens,
    get_tokenizer,
)

# The example_messages of the OpenAI cookbook, "How to count tokens with tiktoken"
# (examples/How_to_count_tokens_with_tiktoken.ipynb, section 6, "Counting tokens for chat
# completions API calls"; openai/openai-cookbook at commit c81359cd). Its printed output:
#   gpt-3.5-turbo: 129 prompt tokens counted by the OpenAI API.
#   gpt-4-0613:    129 prompt tokens counted by the OpenAI API.
#   gpt-4:         129 prompt tokens counted by the OpenAI API.
#   gpt-4o:        124 prompt tokens counted by the OpenAI API.
#   gpt-4o-mini:   124 prompt tokens counted by the OpenAI API.
COOKBOOK_MESSAGES = [
    {
        "role": "system",
        "content": "You are a helpful, pattern-following assistant that translates corporate "
        "jargon into plain English.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "New synergies will help drive top-line growth.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Things working well together will increase revenue.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "Let's circle back when we have more bandwidth to touch base on "
        "opportunities for increased leverage.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Let's talk later when we're less busy about how to do better.",
    },
    {
        "role": "user",
        "content": "This late pivot means we don't have time to boil the ocean for the client "
        "deliverable.",
    },
]
COOKBOOK_COUNTS = {
    "gpt-3.5-turbo": 129,
    "gpt-4-0613": 129,
    "gpt-4": 129,
    "gpt-4o": 124,
    "gpt-4o-mini": 124,
}


@pytest.mark.parametrize(("model", "expected"), sorted(COOKBOOK_COUNTS.items()))
def test_cookbook_published_counts(model: str, expected: int) -> None:
    assert count_message_tokens(COOKBOOK_MESSAGES, model=model) == expected


def test_dated_model_names_resolve_through_tiktoken_table() -> None:
    # gpt-4-0613 is no registered alias: tiktoken's offline model table names cl100k_base.
    assert count_message_tokens(COOKBOOK_MESSAGES, model="gpt-4o-2024-08-06") == 124
    assert count_message_tokens(COOKBOOK_MESSAGES, tokenizer="cl100k_base") == 129


def test_hand_computed_counts() -> None:
    # o200k_base: "user" 1, "Hello." 2, "system" 1, "Be brief." 3, "example_user" 2.
    one = [{"role": "user", "content": "Hello."}]
    assert count_message_tokens(one) == 3 + (3 + 1 + 2) == 9
    two = [{"role": "system", "content": "Be brief."}, *one]
    assert count_message_tokens(two) == 3 + (3 + 1 + 3) + (3 + 1 + 2) == 16
    named = [{"role": "user", "name": "example_user", "content": "Hello."}]
    assert count_message_tokens(named) == 3 + (3 + 1 + 2 + 2 + 1) == 12


def test_words_tokenizer_counts_by_the_same_formula() -> None:
    msgs = [{"role": "user", "content": "one two three"}]
    assert count_message_tokens(msgs, tokenizer="words") == 3 + 3 + 1 + 3


def test_text_parts_and_low_detail_images() -> None:
    tok = get_tokenizer("o200k_base")
    parts = [
        {"type": "text", "text": "What is in this image?"},
        {"type": "image_url", "image_url": {"url": "https://x.test/a.png", "detail": "low"}},
        {"type": "text", "text": "Be brief."},
    ]
    msgs = [{"role": "user", "content": parts}]
    expected = 3 + 3 + 1 + tok.count("What is in this image?") + 85 + tok.count("Be brief.")
    assert count_message_tokens(msgs) == expected


def test_other_images_need_image_tokens() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    msgs = [{"role": "user", "content": [image]}]
    with pytest.raises(InputError, match=r"messages\[0\] content part 0 .*image_tokens=N"):
        count_message_tokens(msgs)
    assert count_message_tokens(msgs, image_tokens=765) == 3 + 3 + 1 + 765


def test_unknown_part_type_is_refused() -> None:
    msgs = [
        {"role": "user", "content": "hi"},
        {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "x"}}]},
    ]
    with pytest.raises(InputError, match=r"messages\[1\] content part 0 .*input_audio"):
        count_message_tokens(msgs)


def test_tool_calls_are_counted_as_their_json() -> None:
    tok = get_tokenizer("o200k_base")
    calls = [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "lookup", "arguments": '{"mrn": "123"}'},
        }
    ]
    msgs = [
        {"role": "user", "content": "Look it up."},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "call_1", "content": "K 4.1"},
    ]
    calls_json = json.dumps(calls, ensure_ascii=False, separators=(",", ":"))
    expected = (
        3
        + (3 + 1 + tok.count("Look it up."))
        + (3 + tok.count("assistant") + tok.count(calls_json))
        + (3 + tok.count("tool") + tok.count("call_1") + tok.count("K 4.1"))
    )
    assert count_message_tokens(msgs) == expected


@pytest.mark.parametrize(
    ("messages", "match"),
    [
        ("hello", "must be a list of message dicts"),
        ({"role": "user", "content": "x"}, "must be a list of message dicts"),
        ([], "messages is empty"),
        (["hello"], r"messages\[0\] is a str"),
        ([{"content": "x"}], r"messages\[0\] has no 'role'"),
        ([{"role": "robot", "content": "x"}], r"unknown role 'robot'"),
        ([{"role": "user"}], r"messages\[0\] has no 'content'"),
        ([{"role": "user", "content": 42}], r"content of type int"),
        ([{"role": "user", "content": None}], r"content of type NoneType"),
        ([{"role": "user", "content": [{"type": "text"}]}], r"content part 0"),
    ],
)
def test_bad_messages(messages: Any, match: str) -> None:
    with pytest.raises(InputError, match=match):
        count_message_tokens(messages)


def test_bad_model_names_the_fix() -> None:
    with pytest.raises(InvalidParameterError, match="pass tokenizer="):
        count_message_tokens([{"role": "user", "content": "x"}], model="no-such-model")
    with pytest.raises(InvalidParameterError, match="pass one of them"):
        count_message_tokens(
            [{"role": "user", "content": "x"}], model="gpt-4o", tokenizer="cl100k_base"
        )
