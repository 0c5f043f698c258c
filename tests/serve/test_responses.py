"""``POST /v1/responses``: the Responses API through the proxy, with the official client."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from budgetctx import FittedMessages, fit_messages
from budgetctx.serve._problems import ApiError
from budgetctx.serve._responses import apply_fitted, to_messages
from tests.serve._upstream import REPLY_WORDS, responses_count
from tests.serve.conftest import BUDGET, Proxy

NOTE = (
    "HISTORY: The patient reports chest pain radiating to the left arm since this morning. "
    "Troponin was negative twice. ECG showed no ST elevation. "
    "PLAN: Start aspirin 81 mg daily. Follow up with cardiology in two weeks. "
)
LONG = " ".join(f"{NOTE} Visit {i}: blood pressure {120 + i}/80." for i in range(30))


def _client(proxy: Proxy) -> openai.OpenAI:
    return openai.OpenAI(base_url=proxy.base_url, api_key="sk-test", max_retries=0, timeout=20)


def test_a_single_long_input_is_condensed_to_the_budget(proxy: Proxy, fresh: Any) -> None:
    assert responses_count({"input": LONG}) > BUDGET
    raw = _client(proxy).responses.with_raw_response.create(
        model="gpt-4o", input=LONG, instructions="Summarise."
    )
    assert raw.parse().output_text == "".join(REPLY_WORDS)
    (got,) = fresh.received
    assert got.path == "/v1/responses"
    assert got.prompt_tokens <= BUDGET
    assert int(raw.headers["x-budgetctx-tokens-after"]) == got.prompt_tokens
    assert got.body["instructions"] == "Summarise."
    assert isinstance(got.body["input"], str) and len(got.body["input"]) < len(LONG)


def test_message_items_keep_their_shape_and_the_question(proxy: Proxy, fresh: Any) -> None:
    items = [
        {"role": "user", "content": [{"type": "input_text", "text": LONG}]},
        {"role": "user", "content": "What is the plan?"},
    ]
    _client(proxy).responses.create(model="gpt-4o", input=items)
    (got,) = fresh.received
    assert got.prompt_tokens <= BUDGET
    sent = got.body["input"]
    assert sent[1] == items[1]  # the last user message, verbatim
    assert sent[0]["content"][0]["type"] == "input_text"
    assert len(sent[0]["content"][0]["text"]) < len(LONG)


def test_other_items_are_counted_and_never_condensed() -> None:
    body = {
        "input": [
            {"role": "user", "content": LONG},
            {"type": "function_call", "call_id": "c1", "name": "labs", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": LONG},
            {"role": "user", "content": "And the plan?"},
        ]
    }
    view = to_messages(body)
    assert [m["role"] for m in view.messages] == ["user", "assistant", "tool", "user"]
    fitted: FittedMessages = fit_messages(view.messages, 200)
    out = apply_fitted(body, view, fitted)
    assert out["input"][1] == body["input"][1] and out["input"][3] == body["input"][3]
    assert len(out["input"][2]["output"]) < len(LONG)
    assert body["input"][2]["output"] == LONG  # the request itself is not changed


@pytest.mark.parametrize(
    "body",
    [
        {"input": 3},
        {"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]},
        {"input": "x", "instructions": ["a"]},
    ],
)
def test_what_cannot_be_counted_is_a_422(body: dict[str, Any]) -> None:
    with pytest.raises(ApiError) as info:
        to_messages(body)
    assert info.value.status == 422


def test_a_bad_input_through_the_proxy_is_a_422(proxy: Proxy, fresh: Any) -> None:
    with pytest.raises(openai.UnprocessableEntityError):
        _client(proxy).responses.create(model="gpt-4o", input=3)
    assert fresh.received == []
