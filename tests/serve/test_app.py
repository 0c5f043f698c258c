"""The app in process (httpx's ASGI transport): limits, upstream styles and failures, config."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from budgetctx import InvalidParameterError
from budgetctx.data import sample_note
from budgetctx.serve import (
    Limits,
    ModelConfig,
    ServeConfig,
    UpstreamConfig,
    create_app,
    load_config,
)
from tests.serve._upstream import Upstream, free_port

MESSAGES = [{"role": "user", "content": "Chest pain. Troponin negative."}]


def _call(config: ServeConfig, method: str, path: str, **kwargs: Any) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(config))
        async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
            return await client.request(method, path, timeout=30, **kwargs)

    return anyio.run(go)


def test_a_selection_over_the_timeout_is_a_503() -> None:
    config = ServeConfig(limits=Limits(selection_timeout_s=0.001))
    body = {"text": sample_note() * 20, "budget": 200, "selector": "facility"}
    response = _call(config, "POST", "/v1/context", json=body)
    assert response.status_code == 503
    assert "limits.selection_timeout_s" in response.json()["error"]
    assert response.headers["retry-after"] == "1"


def test_an_unreachable_upstream_is_a_502() -> None:
    config = ServeConfig(upstream=UpstreamConfig(base_url=f"http://127.0.0.1:{free_port()}/v1"))
    body = {"model": "gpt-4o", "messages": MESSAGES}
    response = _call(config, "POST", "/v1/chat/completions", json=body)
    assert response.status_code == 502
    assert "upstream.base_url" in response.json()["error"]


def test_no_upstream_is_a_503_that_names_the_setting() -> None:
    body = {"model": "gpt-4o", "messages": MESSAGES}
    response = _call(ServeConfig(), "POST", "/v1/chat/completions", json=body)
    assert response.status_code == 503
    assert "base_url" in response.json()["error"]


def test_azure_style_with_the_key_from_the_environment(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_AZURE_KEY", "azure-secret")
    upstream.received.clear()
    config = ServeConfig(
        upstream=UpstreamConfig(
            base_url=upstream.root, api_key_env="TEST_AZURE_KEY", azure_api_version="2024-10-21"
        ),
        models={"gpt-4o": ModelConfig(deployment="prod-4o")},
    )
    body = {"model": "gpt-4o", "messages": MESSAGES}
    headers = {"authorization": "Bearer client-key"}
    response = _call(config, "POST", "/v1/chat/completions", json=body, headers=headers)
    assert response.status_code == 200, response.text
    (got,) = upstream.received
    assert got.path == "/openai/deployments/prod-4o/chat/completions"
    assert got.query == "api-version=2024-10-21"
    assert got.headers["api-key"] == "azure-secret"
    assert "authorization" not in got.headers  # the configured key wins over the client's


@pytest.mark.parametrize("pass_through", [True, False])
def test_the_client_authorization_is_passed_through_only_when_allowed(
    upstream: Upstream, pass_through: bool
) -> None:
    upstream.received.clear()
    config = ServeConfig(
        upstream=UpstreamConfig(base_url=upstream.url, pass_through_auth=pass_through)
    )
    body = {"model": "gpt-4o", "messages": MESSAGES}
    headers = {"authorization": "Bearer client-key"}
    assert _call(config, "POST", "/v1/chat/completions", json=body, headers=headers).is_success
    got = upstream.received[0].headers.get("authorization")
    assert got == ("Bearer client-key" if pass_through else None)


def test_an_unknown_model_is_counted_with_the_default_tokenizer(upstream: Upstream) -> None:
    upstream.received.clear()
    config = ServeConfig(
        upstream=UpstreamConfig(base_url=upstream.url), default_tokenizer="cl100k_base"
    )
    body = {"model": "my-llama", "messages": MESSAGES}
    response = _call(config, "POST", "/v1/chat/completions", json=body)
    assert response.status_code == 200
    assert int(response.headers["x-budgetctx-tokens-before"]) > 0


def test_a_bad_budget_header_is_a_422(upstream: Upstream) -> None:
    config = ServeConfig(upstream=UpstreamConfig(base_url=upstream.url))
    body = {"model": "gpt-4o", "messages": MESSAGES}
    headers = {"x-budgetctx-budget": "lots"}
    response = _call(config, "POST", "/v1/chat/completions", json=body, headers=headers)
    assert response.status_code == 422
    assert response.json()["parameter"] == "x-budgetctx-budget"


def test_a_request_cannot_name_a_tokenizer_file_but_the_config_can(tmp_path: Path) -> None:
    body = {"text": "Chest pain. Troponin negative.", "budget": 5, "tokenizer": "words.json"}
    refused = _call(ServeConfig(), "POST", "/v1/context", json=body)
    assert refused.status_code == 422 and "[tokenizers]" in refused.json()["error"]
    mapped = ServeConfig(tokenizers={"ward": "words"})
    body["tokenizer"] = "ward"
    assert _call(mapped, "POST", "/v1/context", json=body).json()["tokenizer"] == "words"


def test_provenance_can_be_switched_off() -> None:
    config = ServeConfig(provenance_size=0)
    body = {"text": "Chest pain. Troponin negative.", "budget": 5}
    response = _call(config, "POST", "/v1/context", json=body)
    assert response.json()["provenance_id"] is None
    assert "x-budgetctx-provenance-id" not in response.headers
    assert _call(config, "GET", "/healthz").json()["provenance"] is False


def test_config_files_toml_and_json(tmp_path: Path) -> None:
    toml = tmp_path / "serve.toml"
    toml.write_text(
        'default_tokenizer = "o200k_base"\n[upstream]\nbase_url = "http://h:1/v1/"\n'
        '[models."gpt-4o"]\nbudget = 4000\nreserve = 100\n[limits]\nmax_documents = 8\n',
        encoding="utf-8",
    )
    cfg = load_config(toml)
    assert cfg.upstream is not None and cfg.upstream.base_url == "http://h:1/v1"
    assert cfg.models["gpt-4o"] == ModelConfig(budget=4000, reserve=100)
    assert cfg.limits.max_documents == 8
    as_json = tmp_path / "serve.json"
    as_json.write_text(json.dumps({"provenance_size": 0}), encoding="utf-8")
    assert load_config(as_json).provenance_size == 0


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"upstream": {"base_url": "ftp://x"}}, "'base_url' parameter of UpstreamConfig"),
        ({"upstream": {"base_url": "http://x", "api_key_env": "sk-123"}}, "not the key"),
        ({"limits": {"max_documents": 0}}, "'max_documents' parameter of Limits"),
        ({"models": {"m": {"budget": -5}}}, "'budget' parameter of ModelConfig"),
        ({"modles": {}}, "Unknown key 'modles'"),
        ({"limits": {"max_body": 1}}, "Unknown key 'max_body' in [limits]"),
    ],
)
def test_a_bad_config_names_the_key_and_the_fix(data: dict[str, Any], needle: str) -> None:
    with pytest.raises(InvalidParameterError, match=needle.replace("[", r"\[")):
        ServeConfig.from_mapping(data)


def test_the_cli_reports_a_bad_config_file_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "serve.toml"
    bad.write_text("[limits\n", encoding="utf-8")
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from budgetctx.cli import main; main()",
            "serve",
            "--config",
            str(bad),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "could not be parsed" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_cli_flags_override_the_file() -> None:
    base = ServeConfig(upstream=UpstreamConfig(base_url="http://a:1/v1", timeout_s=9))
    cfg = base.with_overrides(base_url="http://b:2/v1", provenance_size=0)
    assert cfg.upstream == UpstreamConfig(base_url="http://b:2/v1", timeout_s=9)
    assert cfg.provenance_size == 0
    assert ServeConfig().with_overrides(base_url="http://c:3").upstream is not None
    assert base.with_overrides() == base
