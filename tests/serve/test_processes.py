"""``selection_processes = 2``: condensing in worker processes, errors and logs included."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import openai

from tests.serve.conftest import BUDGET, Proxy
from tests.serve.test_proxy import _messages

NOTE = (
    "HISTORY: Chest pain since this morning. Troponin was negative twice.\n"
    "MEDICATIONS: Warfarin 5 mg daily.\n"
    "PLAN: Start aspirin 81 mg daily. Follow up with cardiology in two weeks.\n"
)


def _post(proxy: Proxy, path: str, body: Any) -> httpx.Response:
    return httpx.post(f"{proxy.base_url}/{path}", json=body, timeout=60)


def test_chat_is_condensed_in_a_worker_process(proxy_processes: Proxy, fresh: Any) -> None:
    client = openai.OpenAI(base_url=proxy_processes.base_url, api_key="k", max_retries=0)
    raw = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=_messages(30))
    (got,) = fresh.received
    assert got.prompt_tokens <= BUDGET
    assert int(raw.headers["x-budgetctx-tokens-after"]) == got.prompt_tokens
    pid = raw.headers["x-budgetctx-provenance-id"]  # held by the server process
    record = httpx.get(f"{proxy_processes.base_url}/provenance/{pid}", timeout=10).json()
    assert record["prompt_tokens"] == got.prompt_tokens


def test_documents_and_regex_pins_cross_the_process_boundary(proxy_processes: Proxy) -> None:
    body = {
        "documents": [{"text": NOTE * 3, "id": "a"}, NOTE],
        "budget": 40,
        "pin": [{"regex": "(?i)warfarin"}],
    }
    response = _post(proxy_processes, "context", body)
    assert response.status_code == 200, response.text
    ctx = response.json()
    assert ctx["tokens_used"] <= 40
    assert any(u["pinned"] and "Warfarin" in u["text"] for u in ctx["units"])


def test_library_errors_come_back_with_their_parameter(proxy_processes: Proxy) -> None:
    # UnknownComponentError cannot be pickled as is: the worker sends its message and fields
    for field, value in (("selector", "nope"), ("unitizer", "nope"), ("budget", 0)):
        response = _post(proxy_processes, "context", {"text": NOTE, "budget": 20, field: value})
        assert response.status_code == 422, response.text
        assert response.json()["parameter"] == field


def test_a_batch_in_a_worker_process(proxy_processes: Proxy) -> None:
    body = {"requests": [{"text": NOTE, "budget": 20}, {"text": NOTE, "budget": -1}]}
    ok, bad = _post(proxy_processes, "contexts", body).json()["results"]
    assert ok["tokens_used"] <= 20 and ok["provenance_id"]
    assert bad["status"] == 422 and bad["parameter"] == "budget"


def test_worker_processes_log_no_request_text(proxy_processes: Proxy) -> None:
    marker = f"PHIMARKER{uuid.uuid4().hex}"
    warned = {"text": NOTE, "budget": 20, "pin_sections": [marker]}  # warns in the worker
    assert _post(proxy_processes, "context", warned).status_code == 200
    assert _post(proxy_processes, "context", {"text": marker, "budget": 5}).status_code == 200
    logs = proxy_processes.log_text()
    assert marker not in logs
    lines = [json.loads(line) for line in logs.splitlines() if line.strip()]
    assert any(r.get("category") == "BudgetCtxWarning" for r in lines)
