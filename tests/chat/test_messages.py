"""Chat messages: the billed count (against the OpenAI cookbook's published figures), the
budget contract of ``fit_messages`` (hypothesis), provenance into each message, bad input."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budgetctx import (
    FittedMessages,
    InputError,
    InvalidParameterError,
    count_message_tokens,
    fit_messages,
    get_tokenizer,
    list_selectors,
    list_unitizers,
    pin_regex,
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
        ([{"role": "user", "content": "x", "metadata": {1, 2}}], r"'metadata' that is not JSON"),
    ],
)
def test_bad_messages(messages: Any, match: str) -> None:
    with pytest.raises(InputError, match=match):
        count_message_tokens(messages)
    with pytest.raises(InputError, match=match):
        fit_messages(messages, 100)


def test_bad_model_names_the_fix() -> None:
    with pytest.raises(InvalidParameterError, match="pass tokenizer="):
        count_message_tokens([{"role": "user", "content": "x"}], model="no-such-model")
    with pytest.raises(InvalidParameterError, match="pass one of them"):
        count_message_tokens(
            [{"role": "user", "content": "x"}], model="gpt-4o", tokenizer="cl100k_base"
        )


# --- fit_messages ---------------------------------------------------------------------------

NOTE = (
    "Patient admitted with chest pain at rest. Troponin negative twice. ECG showed no "
    "ischemic changes. Potassium was 3.1 and was repleted orally. Echo showed an ejection "
    "fraction of 55 percent. Diet as tolerated. Aspirin 81 mg daily was continued. The "
    "patient ambulated without difficulty. Discharged home in stable condition. Follow up "
    "with cardiology in two weeks."
)
LAB = (
    "Sodium 138. Potassium 3.1 low. Chloride 101. Creatinine 0.9. Glucose 104. Magnesium "
    "1.9. Hemoglobin 13.2. Platelets 240. INR 1.0. Troponin below detection twice."
)


def chat() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You answer questions about a hospital stay."},
        {"role": "user", "content": NOTE},
        {"role": "assistant", "content": "I have read the note."},
        {"role": "tool", "tool_call_id": "call_1", "content": LAB},
        {"role": "user", "content": "What was the potassium and how was it treated?"},
    ]


def spans_map(fit: FittedMessages, original: list[dict[str, Any]], separator: str) -> None:
    """Every kept span maps into the original text, and the spans (in document order) joined
    by the separator rebuild the new text, unless the text was kept whole and verbatim.
    JSON texts are condensed as JSON (no spans); the history may have dropped messages."""
    out = dict(zip(fit.sources, fit.messages, strict=True))
    for p in fit.compressed:
        if p.structure == "json":
            continue
        source = original[p.index]["content"]
        text = source if p.part is None else source[p.part]["text"]
        new = out[p.index]["content"]
        new_text = new if p.part is None else new[p.part]["text"]
        spans = sorted(span for u in p.units for span in u.spans)
        assert all(0 <= a <= b <= len(text) for a, b in spans)
        if new_text != text:
            assert separator.join(text[a:b] for a, b in spans) == new_text


def test_fits_unchanged_and_input_not_mutated() -> None:
    msgs = chat()
    snapshot = json.dumps(msgs)
    fit = fit_messages(msgs, 10_000, model="gpt-4o")
    assert list(fit.messages) == msgs
    assert fit.compressed == ()
    assert fit.prompt_tokens == fit.prompt_tokens_before == count_message_tokens(msgs)
    fit.messages[0]["content"] = "changed"
    assert json.dumps(msgs) == snapshot


def test_auto_condenses_the_longest_first_and_shares_a_large_cut() -> None:
    msgs = chat()
    tok = get_tokenizer("gpt-4o")
    before = count_message_tokens(msgs, model="gpt-4o")
    note, lab = tok.count(NOTE), tok.count(LAB)
    assert note - 10 >= lab  # a small cut leaves the note longer than the lab report
    fit = fit_messages(msgs, before - 10, model="gpt-4o")
    assert fit.prompt_tokens <= before - 10
    assert fit.prompt_tokens == count_message_tokens(list(fit.messages), model="gpt-4o")
    assert [p.index for p in fit.compressed] == [1]
    for i in (0, 2, 3, 4):
        assert fit.messages[i] == msgs[i]
    spans_map(fit, msgs, "\n")
    assert fit.compressed[0].tokens_after < fit.compressed[0].tokens_before
    # Cutting the note to below the lab report's length would gut one message and keep a
    # shorter one whole: both share the cut instead.
    cut = note - lab + 20
    fit = fit_messages(msgs, before - cut, model="gpt-4o")
    assert fit.prompt_tokens <= before - cut
    assert [p.index for p in fit.compressed] == [1, 3]
    spans_map(fit, msgs, "\n")


def test_query_is_the_last_user_question() -> None:
    msgs = chat()
    budget = count_message_tokens(msgs) - 60
    fit = fit_messages(msgs, budget, compress=[1])
    kept = fit.messages[1]["content"]
    assert "Potassium was 3.1" in kept  # the sentence the question is about
    centroid = fit_messages(msgs, budget, compress=[1], query=None)
    assert centroid.prompt_tokens <= budget


def test_query_never_reads_what_follows_the_last_user_message() -> None:
    msgs = [
        *chat(),
        {"role": "assistant", "content": "Potassium was 3.1 and was repleted orally."},
    ]
    budget = count_message_tokens(msgs) - 60
    fit = fit_messages(msgs, budget)
    assert fit.query == msgs[4]["content"]
    assert fit.messages[5] == msgs[5]
    assert fit_messages(msgs, budget, query=None).query is None
    assert fit_messages(msgs, budget, query="echo").query == "echo"


def test_global_selection_across_messages() -> None:
    msgs = chat()
    budget = count_message_tokens(msgs) - 80
    fit = fit_messages(msgs, budget, compress=[1, 3])
    assert fit.prompt_tokens <= budget
    assert {p.index for p in fit.compressed} == {1, 3}
    assert len({p.selector for p in fit.compressed}) == 1
    spans_map(fit, msgs, "\n")


def test_compress_callable_and_reserve() -> None:
    msgs = chat()
    budget = count_message_tokens(msgs)
    fit = fit_messages(msgs, budget, reserve=50, compress=lambda i, m: m["role"] == "tool")
    assert fit.prompt_tokens <= budget - 50
    assert [p.index for p in fit.compressed] == [3]
    assert fit.reserve == 50


def test_keep_flags_guard_system_and_last_user() -> None:
    msgs = chat()
    with pytest.raises(InvalidParameterError, match="keep_system=False"):
        fit_messages(msgs, 50, compress=[0])
    with pytest.raises(InvalidParameterError, match="keep_last_user=False"):
        fit_messages(msgs, 50, compress=[4])
    with pytest.raises(InvalidParameterError, match="there are 5 messages"):
        fit_messages(msgs, 50, compress=[9])
    long_system = [
        {"role": "system", "content": NOTE},
        {"role": "user", "content": "Was the potassium low?"},
    ]
    budget = count_message_tokens(long_system) - 30
    with pytest.raises(InputError, match="cannot be condensed need"):
        fit_messages(long_system, budget)
    fit = fit_messages(long_system, budget, keep_system=False)
    assert fit.prompt_tokens <= budget and fit.compressed[0].index == 0


class BOSWords:
    """Words plus one BOS token per call, as tokenizers that add special tokens count: texts
    cost more counted apart than joined, which the selection cannot see."""

    name = "bos-words"

    def count(self, text: str) -> int:
        return len(text.split()) + 1

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]

    def truncate(self, text: str, max_tokens: int) -> str:
        return " ".join(text.split()[: max(max_tokens - 1, 0)])


def test_recount_reselects_when_texts_cost_more_apart() -> None:
    msgs = chat()
    tok = BOSWords()
    before = count_message_tokens(msgs, tokenizer=tok)
    # One token short: both texts fit joined (one BOS) but not apart (two BOS).
    fit = fit_messages(msgs, before - 1, tokenizer=tok, compress=[1, 3])
    assert any(n.startswith("recounted") for n in fit.notes)
    assert fit.prompt_tokens <= before - 1
    assert fit.prompt_tokens == count_message_tokens(list(fit.messages), tokenizer=tok)
    spans_map(fit, msgs, "\n")


def test_no_room_for_any_unit_empties_the_condensed_text() -> None:
    msgs = chat()
    tok = BOSWords()
    floor = count_message_tokens(
        [{**m, "content": ""} if i in (1, 3) else m for i, m in enumerate(msgs)], tokenizer=tok
    )
    fit = fit_messages(msgs, floor, tokenizer=tok, compress=[1, 3], history="keep")
    assert fit.prompt_tokens == floor
    assert fit.messages[1]["content"] == fit.messages[3]["content"] == ""
    assert all(p.units == () and p.tokens_after == 1 for p in fit.compressed)


def test_pinned_sentence_is_kept_and_marked() -> None:
    msgs = chat()
    budget = count_message_tokens(msgs) - 70
    fit = fit_messages(msgs, budget, compress=[1, 3], pin=pin_regex("(?i)aspirin"))
    assert fit.prompt_tokens <= budget
    assert "Aspirin 81 mg daily was continued." in fit.messages[1]["content"]
    pinned = [u for p in fit.compressed for u in p.units if u.pinned]
    assert [u.text for u in pinned] == ["Aspirin 81 mg daily was continued."]


def test_fixed_part_over_budget_names_both_figures() -> None:
    msgs = chat()
    with pytest.raises(InputError, match=r"need \d+ tokens, more than the 20 available"):
        fit_messages(msgs, 30, reserve=10)


def test_image_parts_kept_text_parts_condensed() -> None:
    image = {"type": "image_url", "image_url": {"url": "https://x.test/ecg.png", "detail": "low"}}
    msgs: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": NOTE}, image]},
        {"role": "user", "content": "Is the ECG normal?"},
    ]
    budget = count_message_tokens(msgs) - 40
    fit = fit_messages(msgs, budget)
    assert fit.prompt_tokens <= budget
    assert fit.messages[0]["content"][1] == image
    assert fit.compressed[0].part == 0
    spans_map(fit, msgs, "\n")


def test_bad_parameters() -> None:
    msgs = chat()
    with pytest.raises(InvalidParameterError, match="'budget' parameter of fit_messages"):
        fit_messages(msgs, 0)
    with pytest.raises(InvalidParameterError, match="'reserve' parameter of fit_messages"):
        fit_messages(msgs, 100, reserve=100)
    with pytest.raises(InvalidParameterError, match="'compress' parameter"):
        fit_messages(msgs, 100, compress="longest")
    with pytest.raises(InvalidParameterError, match="'separator' parameter of fit_messages"):
        fit_messages(msgs, 100, separator=3)  # type: ignore[arg-type]


def test_to_dict_is_json() -> None:
    msgs = chat()
    fit = fit_messages(msgs, count_message_tokens(msgs) - 50)
    out = json.loads(json.dumps(fit.to_dict()))
    assert out["prompt_tokens"] == fit.prompt_tokens
    assert out["compressed"][0]["units"][0]["spans"]


SENTENCES = [
    "Chest pain at rest.",
    "Troponin negative twice.",
    "Potassium 3.1, repleted.",
    "Aspirin 81 mg daily.",
    "Café au lait spots noted.",
    "日本 visitor, 🙂 cooperative.",
    "Follow up in two weeks.",
    "EF 55%.",
    "",
    "   ",
]


@st.composite
def chats(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if draw(st.booleans()):
        out.append({"role": "system", "content": draw(st.sampled_from(SENTENCES))})
    for _ in range(draw(st.integers(1, 6))):
        role = draw(st.sampled_from(["user", "user", "tool", "assistant"]))
        text = " ".join(draw(st.lists(st.sampled_from(SENTENCES), max_size=8)))
        if draw(st.integers(0, 4)) == 0:
            image = {"type": "image_url", "image_url": {"url": "u", "detail": "low"}}
            content: Any = [{"type": "text", "text": text}, image]
        else:
            content = text
        msg: dict[str, Any] = {"role": role, "content": content}
        if draw(st.booleans()) and role == "user":
            msg["name"] = "clinician"
        out.append(msg)
    out.append({"role": "user", "content": draw(st.sampled_from(SENTENCES[:4]))})
    return out


# The last user message may share no word with the others: relevance then falls back to the
# centroid with a BudgetCtxWarning, which is not what this test is about.
@pytest.mark.filterwarnings("ignore::budgetctx.BudgetCtxWarning")
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    chats(),
    st.integers(1, 400),
    st.integers(0, 30),
    st.sampled_from(["o200k_base", "cl100k_base", "words"]),
    st.sampled_from(list_selectors()),
    st.sampled_from(list_unitizers()),
    st.booleans(),
)
def test_budget_contract_property(
    msgs: list[dict[str, Any]],
    budget: int,
    reserve: int,
    tokenizer: str,
    selector: str,
    unitizer: str,
    truncate: bool,
) -> None:
    if reserve >= budget:
        reserve = 0
    try:
        fit = fit_messages(
            msgs,
            budget,
            reserve=reserve,
            tokenizer=tokenizer,
            selector=selector,
            unitizer=unitizer,
            truncate=truncate,
        )
    except InputError as exc:
        assert "cannot be condensed" in str(exc)
        return
    assert fit.prompt_tokens == count_message_tokens(list(fit.messages), tokenizer=tokenizer)
    assert fit.prompt_tokens <= budget - reserve
    last_user = max(i for i, m in enumerate(msgs) if m["role"] == "user")
    out = dict(zip(fit.sources, fit.messages, strict=True))
    assert out[last_user] == msgs[last_user]
    for i, m in enumerate(msgs):
        if i in fit.dropped:
            assert m["role"] != "system"
            continue
        if m["role"] in ("system", "assistant"):
            assert out[i] == m
        if not isinstance(m["content"], str):
            assert out[i]["content"][1] == m["content"][1]  # the image
    assert {p.index for p in fit.compressed} <= {
        i for i, m in enumerate(msgs) if m["role"] in ("user", "tool") and i != last_user
    }
    spans_map(fit, msgs, "\n")


def test_cli_fit_messages(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from budgetctx.cli import app

    runner = CliRunner()
    msgs = chat()
    budget = count_message_tokens(msgs, model="gpt-4") - 40
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"model": "gpt-4", "messages": msgs}), encoding="utf-8")
    result = runner.invoke(app, ["fit-messages", str(request), "--budget", str(budget)])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["model"] == "gpt-4"
    # The request's model picks the tokenizer (cl100k_base for gpt-4).
    assert count_message_tokens(body["messages"], model="gpt-4") <= budget
    assert body["messages"][4] == msgs[4]
    listed = tmp_path / "messages.json"
    listed.write_text(json.dumps(msgs), encoding="utf-8")
    result = runner.invoke(app, ["fit-messages", str(listed), "-b", str(budget), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["compressed"]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    result = runner.invoke(app, ["fit-messages", str(bad), "--budget", "10"])
    assert result.exit_code == 2
    assert "is not JSON" in result.output
