"""``POST /v1/messages``: the Anthropic Messages API through the proxy, with the official
``anthropic`` client (normal and streaming), tool_use / tool_result, ``tools=`` counted, and
the ``/v1/responses`` stream with the ``openai`` client."""

from __future__ import annotations

import itertools
import json
from typing import Any

import anthropic
import openai
import pytest

from budgetctx import fit_messages
from budgetctx.serve._anthropic import apply_fitted, place_breakpoint, to_chat
from budgetctx.serve._problems import ApiError
from budgetctx.tokenizers import get_tokenizer
from tests.serve._upstream import REPLY_WORDS, anthropic_text_tokens
from tests.serve.conftest import BUDGET, Proxy

NOTE = (
    "HISTORY: The patient reports chest pain radiating to the left arm since this morning. "
    "Troponin was negative twice. ECG showed no ST elevation. "
    "PLAN: Start aspirin 81 mg daily. Follow up with cardiology in two weeks. "
)
LONG = " ".join(f"{NOTE} Visit {i}: blood pressure {120 + i}/80." for i in range(30))
MODEL = "claude-3-5-sonnet"


def _client(proxy: Proxy) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=proxy.url, api_key="sk-ant-test", max_retries=0, timeout=20)


def _agent_messages() -> list[dict[str, Any]]:
    labs = json.dumps(
        {"results": [{"test": "K", "value": 3 + i / 10, "day": i} for i in range(60)]}
    )
    return [
        {"role": "user", "content": [{"type": "text", "text": LONG}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look up the labs."},
                {"type": "tool_use", "id": "tu_1", "name": "labs", "input": {"test": "K"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "tu_1", "content": labs},
                {"type": "text", "text": "What is the plan, and the potassium trend?"},
            ],
        },
    ]


def test_a_long_chat_is_condensed_with_the_official_client(proxy: Proxy, fresh: Any) -> None:
    messages = _agent_messages()
    system = [
        {"type": "text", "text": "You summarise notes.", "cache_control": {"type": "ephemeral"}}
    ]
    raw = _client(proxy).messages.with_raw_response.create(
        model=MODEL, max_tokens=100, system=system, messages=messages
    )
    reply = raw.parse()
    assert reply.content[0].text == "".join(REPLY_WORDS)
    (got,) = fresh.received
    assert got.path == "/v1/messages"
    # the client's key is passed through (x-api-key, or Bearer as anthropic>=2 sends it)
    key = got.headers.get("x-api-key") or got.headers.get("authorization", "")
    assert key.removeprefix("Bearer ") == "sk-ant-test"
    assert "anthropic-version" in got.headers
    before = int(raw.headers["x-budgetctx-tokens-before"])
    after = int(raw.headers["x-budgetctx-tokens-after"])
    assert before > BUDGET >= after
    assert raw.headers["x-budgetctx-count"] == "estimate"  # no public Claude tokenizer
    assert got.prompt_tokens <= after  # the texts alone, counted exactly, are under the estimate
    sent = got.body
    assert sent["system"] == system  # cache_control passed through
    assert sent["messages"][1] == messages[1]  # tool_use kept whole
    result = sent["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "tu_1"
    labs = json.loads(result["content"])  # still JSON, the same shape, the cut said inside
    assert isinstance(labs["results"], list) and len(labs["results"]) < 60
    assert "of 60 items of $.results" in labs["_budgetctx_omitted"]
    assert sent["messages"][2]["content"][1] == messages[2]["content"][1]  # the question
    assert len(sent["messages"][0]["content"][0]["text"]) < len(LONG)


def test_streaming_with_the_official_client(proxy: Proxy, fresh: Any) -> None:
    with _client(proxy).messages.stream(
        model=MODEL, max_tokens=100, messages=[{"role": "user", "content": LONG + " Plan?"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "".join(REPLY_WORDS)
    assert final.stop_reason == "end_turn"
    (got,) = fresh.received
    assert got.body["stream"] is True
    assert len(got.body["messages"][0]["content"]) < len(LONG)


def test_a_broken_anthropic_stream_raises_in_the_client(proxy: Proxy, fresh: Any) -> None:
    fresh.faults.append("429")
    with pytest.raises(anthropic.RateLimitError):
        _client(proxy).messages.create(
            model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "Hi"}]
        )


def test_tool_definitions_are_counted(proxy: Proxy, fresh: Any) -> None:
    tools = [
        {
            "name": f"tool_{i}",
            "description": "Looks up one laboratory value for the patient.",
            "input_schema": {"type": "object", "properties": {"test": {"type": "string"}}},
        }
        for i in range(3)
    ]
    messages = [{"role": "user", "content": "What is the potassium?"}]
    raw = _client(proxy).messages.with_raw_response.create(
        model=MODEL, max_tokens=10, messages=messages, tools=tools
    )
    plain = _client(proxy).messages.with_raw_response.create(
        model=MODEL, max_tokens=10, messages=messages
    )
    with_tools = int(raw.headers["x-budgetctx-tokens-before"])
    without = int(plain.headers["x-budgetctx-tokens-before"])
    assert with_tools > without + 60
    # and on the OpenAI route: the tools come off the messages' budget
    client = openai.OpenAI(base_url=proxy.base_url, api_key="sk", max_retries=0, timeout=20)
    fns = [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t["description"],
                "parameters": t["input_schema"],
            },
        }
        for t in tools
    ]
    long = [{"role": "user", "content": LONG}, {"role": "user", "content": "Plan?"}]
    r = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=long, tools=fns)
    assert int(r.headers["x-budgetctx-tokens-after"]) <= BUDGET
    tools_tokens = int(r.headers["x-budgetctx-tokens-after"]) - fresh.received[-1].prompt_tokens
    assert tools_tokens > 60  # the sent messages left room for the tools
    # tools that alone exceed the budget: a clear 422 naming the budget
    with pytest.raises(anthropic.UnprocessableEntityError) as info:
        _client(proxy).messages.create(
            model=MODEL, max_tokens=10, messages=messages, tools=tools * 10
        )
    assert info.value.response.json()["parameter"] == "budget"


def test_the_responses_stream_with_the_openai_client(proxy: Proxy, fresh: Any) -> None:
    client = openai.OpenAI(base_url=proxy.base_url, api_key="sk", max_retries=0, timeout=20)
    stream = client.responses.create(model="gpt-4o", input=LONG, stream=True)
    deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
    assert "".join(deltas) == "".join(REPLY_WORDS)
    (got,) = fresh.received
    assert got.prompt_tokens <= BUDGET and got.body["stream"] is True


def test_history_drop_removes_whole_blocks() -> None:
    turns: list[dict[str, Any]] = []
    for t in range(20):
        turns.append({"role": "user", "content": f"Question {t}: {NOTE}"})
        turns.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"t{t}", "name": "f", "input": {"n": t}}],
            }
        )
        turns.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"t{t}", "content": NOTE},
                    {"type": "text", "text": "Thanks."},
                ],
            }
        )
        turns.append({"role": "assistant", "content": f"Answer {t}. " + NOTE})
    turns.append({"role": "user", "content": "Final question?"})
    body = {"model": MODEL, "system": "Be brief.", "messages": turns}
    view = to_chat(body)
    fitted = fit_messages(view.messages, 900, tokenizer="o200k_base")
    assert fitted.dropped
    out = apply_fitted(body, view, fitted)
    sent = out["messages"]
    assert sent[0]["role"] == "user" and sent[-1] == turns[-1]
    uses = {
        b["id"]
        for m in sent
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_use"
    }
    results = {
        b["tool_use_id"]
        for m in sent
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_result"
    }
    assert results <= uses  # no orphan tool_result
    assert anthropic_text_tokens(out) < anthropic_text_tokens(body)
    assert out["system"] == "Be brief."


@pytest.mark.parametrize(
    "body",
    [
        {"messages": []},
        {"messages": [{"role": "system", "content": "x"}]},
        {"messages": [{"role": "user", "content": 3}]},
        {"system": 3, "messages": [{"role": "user", "content": "x"}]},
    ],
)
def test_what_cannot_be_counted_is_a_422(body: dict[str, Any]) -> None:
    with pytest.raises(ApiError) as info:
        to_chat(body)
    assert info.value.status == 422


def test_the_next_turn_reuses_the_condensed_prefix(proxy: Proxy, fresh: Any) -> None:
    # One conversation, two requests: the second appends an answer and a question. The proxy
    # sends the first request's condensed messages again, byte for byte, as the prefix.
    client = openai.OpenAI(base_url=proxy.base_url, api_key="sk", max_retries=0, timeout=20)
    first = [
        {"role": "system", "content": "You summarise notes. (conversation test)"},
        {"role": "user", "content": LONG},
        {"role": "user", "content": "What is the plan?"},
    ]
    r1 = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=first)
    second = [
        *first,
        {"role": "assistant", "content": "Aspirin and cardiology follow-up."},
        {"role": "user", "content": "And the troponin?"},
    ]
    r2 = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=second)
    assert r1.headers["x-budgetctx-prefix"] == "new"
    assert r2.headers["x-budgetctx-prefix"] == "reused"
    sent1, sent2 = (got.body["messages"] for got in fresh.received)
    assert sent2[: len(sent1)] == sent1  # byte for byte: the provider's cache stays warm
    assert sent2[len(sent1) :] == second[len(first) :]
    assert max(got.prompt_tokens for got in fresh.received) <= BUDGET


#: A small tool definition: the proxy's test budget is 300 tokens.
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_labs",
            "parameters": {"type": "object", "properties": {"bed": {"type": "integer"}}},
        },
    }
]


def test_requests_with_tools_reuse_the_condensed_prefix_too(proxy: Proxy, fresh: Any) -> None:
    # tools= definitions are a fixed prefix: they come off the budget and the condensed
    # history under them is reused byte for byte (before, such requests were refitted).
    client = openai.OpenAI(base_url=proxy.base_url, api_key="sk", max_retries=0, timeout=20)
    tools_tokens = get_tokenizer("o200k_base").count(json.dumps(TOOLS, ensure_ascii=False))
    assert tools_tokens > 10
    chat: list[dict[str, Any]] = [
        {"role": "system", "content": "You summarise notes. (tools conversation test)"},
        {"role": "user", "content": LONG},
        {"role": "user", "content": "What is the plan?"},
    ]
    headers = []
    for turn in range(3):
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o",
            messages=chat,  # type: ignore[arg-type]
            tools=TOOLS,  # type: ignore[arg-type]
        )
        headers.append(raw.headers)
        chat = [
            *chat,
            {"role": "assistant", "content": f"Answer {turn}."},
            {"role": "user", "content": f"And question {turn}?"},
        ]
    assert [h["x-budgetctx-prefix"] for h in headers] == ["new", "reused", "reused"]
    sent = [got.body["messages"] for got in fresh.received]
    for a, b in itertools.pairwise(sent):
        assert b[: len(a)] == a  # byte for byte
    for got, h in zip(fresh.received, headers, strict=True):
        assert got.body["tools"] == TOOLS
        assert got.prompt_tokens + tools_tokens == int(h["x-budgetctx-tokens-after"]) <= BUDGET


def test_a_cache_breakpoint_is_placed_only_when_the_client_placed_none() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "Q1"},
            {"role": "assistant", "content": "A1"},
            {"role": "user", "content": [{"type": "text", "text": "Q2"}]},
        ]
    }
    out = place_breakpoint(body)
    assert out["messages"][:2] == body["messages"][:2]
    assert out["messages"][2]["content"] == [
        {"type": "text", "text": "Q2", "cache_control": {"type": "ephemeral"}}
    ]
    assert "cache_control" not in body["messages"][2]["content"][0]  # the input is not changed
    mine = {
        **body,
        "system": [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}],
    }
    assert place_breakpoint(mine) == mine


def test_the_proxy_resolves_family_model_names_but_never_paths() -> None:
    from budgetctx.serve._config import ServeConfig
    from budgetctx.serve._models import Resolver

    resolver = Resolver(ServeConfig())
    assert resolver.model("meta-llama/Llama-3.1-8B-Instruct").tokenizer == "llama3"
    assert resolver.model("claude-sonnet-4-5").tokenizer == "claude"
    assert resolver.model("o3-mini").tokenizer == "o200k_base"
    with pytest.raises(ApiError) as info:
        resolver.model("/models/tokenizer.json")
    assert info.value.status == 400
    assert resolver.model("open-mistral-nemo-2407").tokenizer == "tekken"
    for spec in ("tekken:serve.toml", "tekken:/etc/budgetctx/serve.toml", "hf:tokenizer"):
        with pytest.raises(ApiError) as info:
            resolver.tokenizer(spec)
        assert info.value.status == 422 and "not a file" in str(info.value)
        with pytest.raises(ApiError):
            resolver.model(spec)
