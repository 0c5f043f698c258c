"""``POST /v1/context`` and ``/v1/contexts`` against the real server, and its limits."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from budgetctx import get_tokenizer
from tests.serve.conftest import Proxy

NOTE = (
    "CHIEF COMPLAINT: Chest pain.\n"
    "HISTORY: The patient reports chest pain since this morning. Troponin was negative twice.\n"
    "ECG showed no ST elevation. The pain resolved with rest.\n"
    "PLAN: Start aspirin 81 mg daily. Follow up with cardiology in two weeks.\n"
)

#: POST bodies must say they are JSON (CSRF, F9)
_JSON = {"content-type": "application/json"}


def _post(proxy: Proxy, path: str, body: Any) -> httpx.Response:
    return httpx.post(f"{proxy.base_url}/{path}", json=body, timeout=30)


def test_one_document_answers_the_context_with_provenance(proxy: Proxy) -> None:
    response = _post(proxy, "context", {"text": NOTE, "budget": 25, "selector": "mmr"})
    assert response.status_code == 200
    ctx = response.json()
    assert 0 < ctx["tokens_used"] <= 25
    assert get_tokenizer("o200k_base").count(ctx["text"]) == ctx["tokens_used"]
    for unit in ctx["units"]:
        for start, end in unit["spans"]:
            assert NOTE[start:end] in ctx["text"]
    assert response.headers["x-budgetctx-tokens-after"] == str(ctx["tokens_used"])
    assert response.headers["x-budgetctx-selector"] == "mmr"
    held = httpx.get(f"{proxy.base_url}/provenance/{ctx['provenance_id']}", timeout=10).json()
    # the default store (SQLite) keeps offsets and counts, never the text
    assert held["context"]["tokens_used"] == ctx["tokens_used"] and "text" not in held["context"]
    assert [u["spans"] for u in held["context"]["units"]] == [u["spans"] for u in ctx["units"]]


def test_every_option_reaches_the_library(proxy: Proxy) -> None:
    body = {
        "text": NOTE,
        "budget": 30,
        "tokenizer": "cl100k_base",
        "unitizer": "sentence",
        "selector": "lead",
        "query": "aspirin",
        "separator": " | ",
        "truncate": True,
    }
    ctx = _post(proxy, "context", body).json()
    assert ctx["tokenizer"] == "cl100k_base"
    assert ctx["selector"] == "lead" and ctx["query"] == "aspirin"
    assert get_tokenizer("cl100k_base").count(ctx["text"]) == ctx["tokens_used"] <= 30
    assert " | " in ctx["text"]


def test_profile_reaches_the_library(proxy: Proxy) -> None:
    # "profile": null is the library's profile=None; the default (absent) is "auto"
    from budgetctx import build_context
    from budgetctx.data import sample_note

    note = sample_note()
    body = {"text": note, "budget": 128, "unitizer": "section"}
    auto = _post(proxy, "context", body).json()
    off = _post(proxy, "context", {**body, "profile": None}).json()
    assert auto["params"]["profile"]["name"] == "clinical"
    assert "profile" not in off["params"]
    assert off["text"] == build_context(note, 128, unitizer="section", profile=None).text
    bad = _post(proxy, "context", {**body, "profile": "surgical"})
    assert bad.status_code == 422 and bad.json()["parameter"] == "profile"


def test_a_list_of_documents_with_ids_pins_and_reserve(proxy: Proxy) -> None:
    body = {
        "documents": [{"text": NOTE, "id": "note-1", "metadata": {"ward": "A"}}, NOTE],
        "budget": 60,
        "reserve": 10,
        "pin": ["PLAN", {"regex": "troponin"}],
    }
    response = _post(proxy, "context", body)
    assert response.status_code == 200, response.text
    ctx = response.json()
    assert ctx["tokens_used"] <= 50
    assert [d["id"] for d in ctx["documents"]] == ["note-1", None]
    assert ctx["documents"][0]["metadata"] == {"ward": "A"}
    assert any(u["pinned"] for u in ctx["units"])


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({"text": NOTE, "budget": 0}, "budget"),
        ({"text": NOTE, "budget": 20, "selector": "nope"}, "selector"),
        ({"text": NOTE, "budget": 20, "order": "random"}, "order"),
        ({"text": NOTE, "budget": 20, "colour": "red"}, "colour"),
        ({"budget": 20}, "text"),
        ({"text": NOTE}, "budget"),
        ({"text": NOTE, "budget": 20, "tokenizer": "hf:/etc/passwd"}, "tokenizer"),
        ({"documents": "one", "budget": 20}, "documents"),
        ({"text": NOTE, "budget": 20, "pin": [{"regex": "("}]}, "pin"),
    ],
)
def test_bad_values_are_a_422_naming_the_parameter(
    proxy: Proxy, body: dict[str, Any], parameter: str
) -> None:
    response = _post(proxy, "context", body)
    assert response.status_code == 422, response.text
    answer = response.json()
    assert set(answer) == {"error", "parameter", "value"}
    assert answer["parameter"] == parameter
    assert answer["error"].rstrip().endswith((".", ")", "'"))


def test_a_body_that_is_not_json_is_a_400(proxy: Proxy) -> None:
    response = httpx.post(
        f"{proxy.base_url}/context", content=b"{not json", headers=_JSON, timeout=10
    )
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["error"]


def test_a_body_over_the_limit_is_a_413(proxy: Proxy) -> None:
    response = _post(proxy, "context", {"text": "x. " * 100_000, "budget": 20})
    assert response.status_code == 413
    assert "limits.max_body_bytes" in response.json()["error"]


def test_a_chunked_body_over_the_limit_is_a_413(proxy: Proxy) -> None:
    def chunks() -> Any:  # no content-length: the limit is enforced while reading
        for _ in range(100):
            yield b"x" * 10_000

    response = httpx.post(f"{proxy.base_url}/context", content=chunks(), headers=_JSON, timeout=10)
    assert response.status_code == 413


def test_too_many_documents_is_a_422(proxy: Proxy) -> None:
    response = _post(proxy, "context", {"documents": [NOTE] * 4, "budget": 20})
    assert response.status_code == 422
    assert response.json()["parameter"] == "documents"
    assert response.json()["value"] == 4


def test_a_batch_answers_each_request_or_its_error(proxy: Proxy) -> None:
    body = {
        "requests": [
            {"text": NOTE, "budget": 20},
            {"text": NOTE, "budget": -1},
            {"text": NOTE, "budget": 40, "selector": "lead"},
        ]
    }
    response = _post(proxy, "contexts", body)
    assert response.status_code == 200
    first, bad, third = response.json()["results"]
    assert first["tokens_used"] <= 20 and third["tokens_used"] <= 40
    assert bad["status"] == 422 and bad["parameter"] == "budget"


def test_a_batch_over_the_document_limit_is_a_422(proxy: Proxy) -> None:
    body = {"requests": [{"text": NOTE, "budget": 20}] * 4}
    assert _post(proxy, "contexts", body).status_code == 422


def test_health_metrics_and_viewer(proxy: Proxy) -> None:
    assert httpx.get(f"{proxy.url}/healthz", timeout=10).json()["status"] == "ok"
    _post(proxy, "context", {"text": NOTE, "budget": 20})
    metrics = httpx.get(f"{proxy.url}/metrics", timeout=10).text
    for name in (
        "budgetctx_requests_total",
        "budgetctx_request_seconds_bucket",
        "budgetctx_tokens_in_total",
        "budgetctx_tokens_saved_total",
    ):
        assert name in metrics
    assert 'route="/v1/context",status="200"' in metrics
    page = httpx.get(f"{proxy.url}/", timeout=10)
    assert page.status_code == 200 and "<html" in page.text.lower()


def test_an_unknown_provenance_id_is_a_404(proxy: Proxy) -> None:
    response = httpx.get(f"{proxy.base_url}/provenance/nope", timeout=10)
    assert response.status_code == 404
    assert "provenance_size" in response.json()["error"]


def test_an_unknown_route_answers_in_the_same_shape(proxy: Proxy) -> None:
    response = httpx.get(f"{proxy.base_url}/contexts", timeout=10)
    assert response.status_code == 405
    assert "POST /v1/contexts" in response.json()["error"]
    response = httpx.post(f"{proxy.url}/v2/context", json={}, timeout=10)
    assert response.status_code == 404
    assert set(response.json()) == {"error", "parameter", "value"}
