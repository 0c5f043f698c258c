"""The upstream: one ``httpx.AsyncClient``, requests built OpenAI- or Azure-style, answers
relayed to the client (streams chunk by chunk, never buffered whole).

Failures become clear answers, never a hang: a timeout is a 504, a refused connection, a
malformed JSON answer or a stream that breaks before its first byte a 502; the upstream's own
429 and 5xx are passed through with their body and ``Retry-After``. A stream that breaks after
its first byte can no longer change its status, so it ends with an SSE ``error`` event, which
the ``openai`` client raises as an ``APIError``.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any
from urllib.parse import quote

import httpx
from starlette.responses import Response, StreamingResponse

from budgetctx._errors import InvalidParameterError
from budgetctx.serve._config import UpstreamConfig
from budgetctx.serve._problems import ApiError

__all__ = ["Upstream"]

#: Response headers worth relaying; hop-by-hop and length/encoding headers are the server's.
_RELAYED = ("content-type", "retry-after", "x-request-id", "openai-processing-ms")
_AUTH = ("authorization", "api-key", "x-api-key")
#: Anthropic's version and beta headers pass through whatever the key's origin.
_ANTHROPIC = ("anthropic-version", "anthropic-beta")
_STREAM_ERROR = (
    b'data: {"error": {"message": "budgetctx: the upstream stream broke before it ended; '
    b'retry the request.", "type": "upstream_error", "code": 502}}\n\n'
)
#: The same in Anthropic's shape: an ``error`` event, which the ``anthropic`` client raises.
_ANTHROPIC_STREAM_ERROR = (
    b'event: error\ndata: {"type": "error", "error": {"type": "api_error", "message": '
    b'"budgetctx: the upstream stream broke before it ended; retry the request."}}\n\n'
)


class Upstream:
    """Sends chat completions to the configured upstream."""

    def __init__(self, config: UpstreamConfig) -> None:
        self.config = config
        # Read once at start: a key that is missing must stop the server, not silently fall
        # back to passing the clients' own keys through.
        self._key: str | None = None
        if config.api_key_env is not None:
            self._key = os.environ.get(config.api_key_env) or None
            if self._key is None:
                raise InvalidParameterError(
                    f"The environment variable {config.api_key_env!r} named by "
                    "upstream.api_key_env is not set or is empty; export it before starting "
                    "the server, or remove api_key_env to pass the clients' own keys through.",
                    parameter="api_key_env",
                    value=config.api_key_env,
                )
        timeout = httpx.Timeout(config.timeout_s, connect=config.connect_timeout_s)
        limits = httpx.Limits(
            max_connections=config.max_connections,
            max_keepalive_connections=config.max_connections,
        )
        self._client = httpx.AsyncClient(timeout=timeout, limits=limits)

    async def aclose(self) -> None:
        await self._client.aclose()

    def url(self, api: str, *, model: str, deployment: str | None) -> str:
        """``api`` is ``chat/completions``, ``responses`` or ``messages`` (Anthropic)."""
        cfg = self.config
        if cfg.azure_api_version is None or api == "messages":
            return f"{cfg.base_url}/{api}"
        version = f"api-version={quote(cfg.azure_api_version, safe='')}"
        if api == "responses":  # Azure names the deployment in the body's model
            return f"{cfg.base_url}/openai/responses?{version}"
        name = quote(deployment or model, safe="")
        return f"{cfg.base_url}/openai/deployments/{name}/{api}?{version}"

    def headers(self, client_headers: Mapping[str, str], api: str = "") -> dict[str, str]:
        cfg = self.config
        # identity: the stream is relayed byte for byte, so it must not be compressed
        out = {"content-type": "application/json", "accept-encoding": "identity"}
        for name in _ANTHROPIC:
            if name in client_headers:
                out[name] = client_headers[name]
        key = self._key
        if key:
            if api == "messages":
                out["x-api-key"] = key
            elif cfg.azure_api_version is not None:
                out["api-key"] = key
            else:
                out["authorization"] = f"Bearer {key}"
        elif cfg.pass_through_auth:
            for name in _AUTH:
                if name in client_headers:
                    out[name] = client_headers[name]
        return out

    async def forward(
        self,
        payload: dict[str, Any],
        *,
        api: str,
        model: str,
        deployment: str | None,
        client_headers: Mapping[str, str],
        extra_headers: Mapping[str, str],
        on_error: Callable[[str], None],
    ) -> Response:
        """Send ``payload``; answer with the upstream's response or a clear 502/504."""
        if api == "responses" and self.config.azure_api_version is not None and deployment:
            payload = {**payload, "model": deployment}
        request = self._client.build_request(
            "POST",
            self.url(api, model=model, deployment=deployment),
            content=json.dumps(payload, ensure_ascii=False).encode("utf-8"),
            headers=self.headers(client_headers, api),
        )
        try:
            response = await self._client.send(request, stream=True)
        except httpx.TimeoutException as exc:
            on_error("timeout")
            raise ApiError(
                504,
                f"The upstream did not answer within {self.config.timeout_s:g} s; retry later, "
                "or raise upstream.timeout_s.",
                kind="upstream_timeout",
            ) from exc
        except httpx.HTTPError as exc:
            on_error("connect")
            raise ApiError(
                502,
                f"The upstream could not be reached ({type(exc).__name__}); check "
                "upstream.base_url and that the model server is running.",
                kind="upstream_connect",
            ) from exc
        headers = {k: v for k, v in response.headers.items() if k.lower() in _RELAYED}
        headers.update(extra_headers)
        if response.status_code >= 400 or not payload.get("stream"):
            return await self._whole(response, headers, on_error)
        # The first chunk is awaited here, so that a stream that breaks before its first byte
        # still gets a 502 status instead of a 200 followed by an error event.
        chunks = response.aiter_raw()
        try:
            first = await anext(chunks, b"")
        except httpx.TimeoutException as exc:
            await response.aclose()
            on_error("timeout")
            raise ApiError(
                504, "The upstream sent no event in time; retry later.", kind="upstream_timeout"
            ) from exc
        except httpx.HTTPError as exc:
            await response.aclose()
            on_error("stream")
            raise ApiError(
                502,
                f"The upstream's stream broke before its first event ({type(exc).__name__}); "
                "retry the request.",
                kind="upstream_dropped",
            ) from exc
        broke = _ANTHROPIC_STREAM_ERROR if api == "messages" else _STREAM_ERROR
        return StreamingResponse(
            _relay(first, chunks, response, on_error, broke),
            status_code=response.status_code,
            headers=headers,
            media_type=response.headers.get("content-type", "text/event-stream"),
        )

    async def _whole(
        self, response: httpx.Response, headers: dict[str, str], on_error: Callable[[str], None]
    ) -> Response:
        try:
            body = await response.aread()
        except httpx.TimeoutException as exc:
            on_error("timeout")
            raise ApiError(
                504, "The upstream stopped answering mid-response; retry later.", kind="timeout"
            ) from exc
        except httpx.HTTPError as exc:
            on_error("stream")
            raise ApiError(
                502,
                f"The upstream's response broke off ({type(exc).__name__}); retry the request.",
                kind="upstream_dropped",
            ) from exc
        finally:
            await response.aclose()
        if response.status_code >= 400:
            on_error("status")  # passed through as is: 429 and 5xx keep Retry-After
            return Response(body, status_code=response.status_code, headers=headers)
        try:
            json.loads(body)
        except ValueError as exc:
            on_error("malformed")
            raise ApiError(
                502,
                f"The upstream answered {response.status_code} with a body that is not JSON "
                f"({len(body)} bytes); check that upstream.base_url points at an "
                "OpenAI-compatible API.",
                kind="upstream_malformed",
            ) from exc
        return Response(body, status_code=response.status_code, headers=headers)


async def _relay(
    first: bytes,
    chunks: AsyncIterator[bytes],
    response: httpx.Response,
    on_error: Callable[[str], None],
    broke: bytes = _STREAM_ERROR,
) -> AsyncIterator[bytes]:
    try:
        if first:
            yield first
        async for chunk in chunks:
            yield chunk
    except httpx.HTTPError:
        on_error("stream")
        yield broke
    finally:
        await response.aclose()
