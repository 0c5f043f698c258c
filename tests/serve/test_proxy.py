"""The proxy end to end: the official ``openai`` client -> ``budgetctx serve`` (a subprocess) ->
a real loopback upstream that refuses any prompt over its budget."""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

import httpx
import openai
import pytest

from tests.serve._upstream import REPLY_WORDS, cookbook_count
from tests.serve.conftest import BUDGET, SMALL_BUDGET, Proxy

NOTE = (
    "HISTORY: The patient reports chest pain radiating to the left arm since this morning. "
    "Troponin was negative twice. ECG showed no ST elevation. "
    "PLAN: Start aspirin 81 mg daily. Follow up with cardiology in two weeks. "
)


def _messages(repeat: int, marker: str = "") -> list[dict[str, Any]]:
    visits = (f"{NOTE} Visit {i}: blood pressure {120 + i}/80 {marker}." for i in range(repeat))
    long = " ".join(visits)
    return [
        {"role": "system", "content": "You summarise clinical notes."},
        {"role": "user", "content": long},
        {"role": "user", "content": "What is the plan?"},
    ]


def _client(proxy: Proxy) -> openai.OpenAI:
    return openai.OpenAI(base_url=proxy.base_url, api_key="sk-test", max_retries=0, timeout=20)


def test_an_over_budget_prompt_is_condensed_to_the_budget(proxy: Proxy, fresh: Any) -> None:
    messages = _messages(30)
    assert cookbook_count(messages) > BUDGET  # else the test proves nothing
    raw = _client(proxy).chat.completions.with_raw_response.create(
        model="gpt-4o", messages=messages
    )
    completion = raw.parse()
    assert completion.choices[0].message.content == "".join(REPLY_WORDS)
    (got,) = fresh.received
    assert got.prompt_tokens <= BUDGET
    before = int(raw.headers["x-budgetctx-tokens-before"])
    after = int(raw.headers["x-budgetctx-tokens-after"])
    assert before == cookbook_count(messages)
    assert after == got.prompt_tokens  # the header is the exact count of what was sent
    assert raw.headers["x-budgetctx-selector"] not in ("", "none")
    # system and last user message are sent verbatim; the long one shrank
    sent = got.body["messages"]
    assert sent[0] == messages[0] and sent[-1] == messages[-1]
    assert len(sent[1]["content"]) < len(messages[1]["content"])
    # the provenance record is held and names what was kept
    pid = raw.headers["x-budgetctx-provenance-id"]
    record = httpx.get(f"{proxy.url}/v1/provenance/{pid}", timeout=10).json()
    assert record["prompt_tokens"] == after
    assert record["endpoint"] == "chat.completions"


def test_a_prompt_within_budget_is_forwarded_unchanged(proxy: Proxy, fresh: Any) -> None:
    messages = _messages(1)
    raw = _client(proxy).chat.completions.with_raw_response.create(
        model="gpt-4o", messages=messages, temperature=0.5
    )
    (got,) = fresh.received
    assert got.body["messages"] == messages
    assert got.body["temperature"] == 0.5  # other fields pass through
    assert raw.headers["x-budgetctx-tokens-before"] == raw.headers["x-budgetctx-tokens-after"]
    assert raw.headers["x-budgetctx-selector"] == "none"
    assert "x-budgetctx-provenance-id" not in raw.headers


def test_the_budget_header_tightens_the_model_budget(proxy: Proxy, fresh: Any) -> None:
    messages = _messages(4)
    assert SMALL_BUDGET < cookbook_count(messages) <= BUDGET
    raw = _client(proxy).chat.completions.with_raw_response.create(
        model="gpt-4o",
        messages=messages,
        extra_headers={"x-budgetctx-budget": str(SMALL_BUDGET)},
    )
    assert int(raw.headers["x-budgetctx-tokens-after"]) <= SMALL_BUDGET
    assert fresh.received[0].prompt_tokens <= SMALL_BUDGET


def test_a_configured_model_uses_its_own_budget_and_selector(proxy: Proxy, fresh: Any) -> None:
    raw = _client(proxy).chat.completions.with_raw_response.create(
        model="small", messages=_messages(4)
    )
    assert fresh.received[0].prompt_tokens <= SMALL_BUDGET
    assert raw.headers["x-budgetctx-selector"] == "lead"


def test_streaming_is_relayed_chunk_by_chunk(proxy: Proxy, fresh: Any) -> None:
    fresh.faults.append("gated")
    stream = _client(proxy).chat.completions.create(
        model="gpt-4o", messages=_messages(30), stream=True
    )
    words: list[str] = []
    for chunk in stream:
        # The upstream holds the rest of the stream until the gate opens (5 s at most): a
        # proxy that buffered the answer would deliver this first event only after that.
        fresh.gate.set()
        words.append(chunk.choices[0].delta.content or "")
    assert fresh.gate_opened is True
    assert "".join(words) == "".join(REPLY_WORDS)
    assert fresh.received[0].prompt_tokens <= BUDGET


def test_a_condensed_stream_says_so_in_its_headers(proxy: Proxy, fresh: Any) -> None:
    body = {"model": "gpt-4o", "messages": _messages(30), "stream": True}
    with httpx.stream("POST", f"{proxy.base_url}/chat/completions", json=body, timeout=20) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        assert int(r.headers["x-budgetctx-tokens-after"]) == fresh.received[0].prompt_tokens
        assert int(r.headers["x-budgetctx-tokens-before"]) > BUDGET
        assert "x-budgetctx-provenance-id" in r.headers
        events = [line for line in r.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "data: [DONE]"


def test_a_stream_dropped_midway_ends_in_an_error_not_a_hang(proxy: Proxy, fresh: Any) -> None:
    fresh.faults.append("drop_late")
    stream = _client(proxy).chat.completions.create(
        model="gpt-4o", messages=_messages(1), stream=True
    )
    with pytest.raises(openai.APIError, match="stream broke"):
        for _ in stream:
            pass


def test_a_stream_dropped_before_its_first_event_is_a_502(proxy: Proxy, fresh: Any) -> None:
    fresh.faults.append("drop_early")
    with pytest.raises(openai.APIStatusError) as info:
        _client(proxy).chat.completions.create(model="gpt-4o", messages=_messages(1), stream=True)
    assert info.value.status_code == 502


def test_rate_limits_pass_through_with_retry_after(proxy: Proxy, fresh: Any) -> None:
    fresh.faults.append("429")
    with pytest.raises(openai.RateLimitError) as info:
        _client(proxy).chat.completions.create(model="gpt-4o", messages=_messages(1))
    assert info.value.response.headers["retry-after"] == "7"
    assert "slow down" in info.value.response.text


@pytest.mark.parametrize(("fault", "status"), [("500", 500), ("slow", 504), ("malformed", 502)])
def test_upstream_failures_get_a_clear_status(
    proxy: Proxy, fresh: Any, fault: str, status: int
) -> None:
    fresh.faults.append(fault)
    with pytest.raises(openai.APIStatusError) as info:
        _client(proxy).chat.completions.create(model="gpt-4o", messages=_messages(1))
    assert info.value.status_code == status
    kind = {"500": "status", "slow": "timeout", "malformed": "malformed"}[fault]
    metrics = httpx.get(f"{proxy.url}/metrics", timeout=10).text
    assert f'budgetctx_upstream_errors_total{{kind="{kind}"}}' in metrics
    # and the proxy keeps serving
    ok = _client(proxy).chat.completions.create(model="gpt-4o", messages=_messages(1))
    assert ok.choices[0].message.content == "".join(REPLY_WORDS)


def test_an_unknown_model_is_a_clear_400(proxy: Proxy, fresh: Any) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        _client(proxy).chat.completions.create(model="my-llama", messages=_messages(1))
    body = info.value.response.json()
    assert body["parameter"] == "model"
    assert "Unknown model 'my-llama'" in body["error"] and "[models]" in body["error"]
    assert fresh.received == []


def test_bad_messages_are_a_422_in_the_library_words(proxy: Proxy, fresh: Any) -> None:
    response = httpx.post(
        f"{proxy.base_url}/chat/completions",
        json={"model": "gpt-4o", "messages": "not a list"},
        timeout=10,
    )
    assert response.status_code == 422
    assert set(response.json()) == {"error", "parameter", "value"}
    assert fresh.received == []


def test_concurrent_requests_are_all_served(proxy: Proxy, fresh: Any) -> None:
    results: list[int] = []

    def one() -> None:
        r = httpx.post(
            f"{proxy.base_url}/chat/completions",
            json={"model": "gpt-4o", "messages": _messages(30)},
            timeout=30,
        )
        results.append(r.status_code)

    threads = [threading.Thread(target=one) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [200] * 8
    assert max(r.prompt_tokens for r in fresh.received) <= BUDGET


def test_no_request_text_reaches_any_log(
    proxy: Proxy, fresh: Any, caplog: pytest.LogCaptureFixture
) -> None:
    marker = f"PHIMARKER{uuid.uuid4().hex}"
    client = _client(proxy)
    client.chat.completions.create(model="gpt-4o", messages=_messages(30, marker))  # condensed
    client.chat.completions.create(model="gpt-4o", messages=_messages(1, marker))  # as is
    list(client.chat.completions.create(model="gpt-4o", messages=_messages(1, marker), stream=True))
    fresh.faults.extend(["500", "malformed"])
    for _ in range(2):
        with pytest.raises(openai.APIStatusError):
            client.chat.completions.create(model="gpt-4o", messages=_messages(1, marker))
    bad = [
        {"model": marker, "messages": _messages(1)},
        {"model": "gpt-4o", "messages": [{"role": "user"}]},
        {"model": "gpt-4o", "messages": marker},
    ]
    for body in bad:
        response = httpx.post(f"{proxy.base_url}/chat/completions", json=body, timeout=10)
        assert response.status_code in (400, 422)
    post = httpx.post
    assert post(f"{proxy.base_url}/context", json={"text": marker, "budget": 5}).status_code == 200
    # a library warning quoting the request ("the pin section ... matched no unit")
    warned = {"text": "Chest pain. Troponin negative.", "budget": 5, "pin_sections": [marker]}
    assert post(f"{proxy.base_url}/context", json=warned, timeout=10).status_code == 200
    for body in (
        {"text": f"{marker}. More text.", "budget": 5, "selector": marker},
        {"text": marker, "budget": marker},
        {marker: 1, "text": "x", "budget": 5},
    ):
        assert post(f"{proxy.base_url}/context", json=body, timeout=10).status_code == 422
    not_json = f'{{"text": "{marker}", "budget": '.encode()
    assert (
        post(
            f"{proxy.base_url}/context",
            content=not_json,
            headers={"content-type": "application/json"},
            timeout=10,
        ).status_code
        == 400
    )
    assert httpx.get(f"{proxy.base_url}/provenance/{marker}", timeout=10).status_code == 404

    logs = proxy.log_text()
    lines = [json.loads(line) for line in logs.splitlines() if line.strip()]
    # the log is there and describes the requests (so an empty log cannot pass this test)
    assert sum(1 for r in lines if r.get("event") == "request") >= 10
    assert any(r.get("category") == "BudgetCtxWarning" for r in lines)
    assert marker not in logs
    assert all(marker not in r.getMessage() for r in caplog.records)


def test_a_single_long_user_message_is_condensed_too(proxy: Proxy, fresh: Any) -> None:
    # Nothing but the last user message can shrink: it is condensed rather than refused.
    messages = [{"role": "user", "content": _messages(30)[1]["content"] + " What is the plan?"}]
    assert cookbook_count(messages) > BUDGET
    _client(proxy).chat.completions.create(model="gpt-4o", messages=messages)
    (got,) = fresh.received
    assert got.prompt_tokens <= BUDGET
    assert got.body["messages"][0]["role"] == "user"


def test_a_system_message_over_the_budget_is_a_422(proxy: Proxy, fresh: Any) -> None:
    messages = [
        {"role": "system", "content": _messages(30)[1]["content"]},
        {"role": "user", "content": "Hi"},
    ]
    with pytest.raises(openai.UnprocessableEntityError) as info:
        _client(proxy).chat.completions.create(model="gpt-4o", messages=messages)
    assert info.value.response.json()["parameter"] == "budget"
    assert fresh.received == []
