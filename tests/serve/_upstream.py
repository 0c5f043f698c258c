"""A real loopback upstream for the proxy tests: FastAPI on uvicorn, in a thread.

It answers OpenAI's ``POST /v1/chat/completions`` and Azure's
``POST /openai/deployments/{name}/chat/completions``, checks that every prompt it receives is
within ``max_prompt_tokens`` counted by the OpenAI cookbook formula with the o200k_base
tokenizer (written out here, independently of the library's ``count_message_tokens``), and
answers 400 when it is not. ``faults`` scripts the next answers: ``"429"``, ``"500"``,
``"slow"`` (sleeps past the proxy's timeout), ``"malformed"`` (200 with a body that is not
JSON), ``"drop_early"`` / ``"drop_late"`` (a stream that breaks before / after its first
event), ``"gated"`` (a stream that sends one event and waits for ``gate`` before the rest).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from budgetctx import get_tokenizer

__all__ = ["REPLY_WORDS", "Received", "Upstream", "cookbook_count", "free_port"]

REPLY_WORDS = ("The", " patient", " is", " stable", ".")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cookbook_count(messages: list[dict[str, Any]]) -> int:
    """OpenAI cookbook: 3 per message, role and content counted, 1 per name, 3 for the reply."""
    tok = get_tokenizer("o200k_base")
    total = 3
    for message in messages:
        total += 3
        for key, value in message.items():
            total += tok.count(value)
            if key == "name":
                total += 1
    return total


@dataclass
class Received:
    path: str
    query: str
    headers: dict[str, str]
    body: dict[str, Any]
    prompt_tokens: int


@dataclass
class Upstream:
    """Start with ``with Upstream() as up:``; ``up.url`` is the OpenAI-style base URL."""

    max_prompt_tokens: int = 10**9
    received: list[Received] = field(default_factory=list)
    faults: deque[str] = field(default_factory=deque)
    gate: threading.Event = field(default_factory=threading.Event)
    port: int = field(default_factory=free_port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Upstream:
        config = uvicorn.Config(
            self._app(), host="127.0.0.1", port=self.port, log_level="warning", lifespan="off"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the test upstream did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.gate.set()
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def _app(self) -> FastAPI:
        app = FastAPI()

        async def handle(request: Request) -> Response:
            body = await request.json()
            count = cookbook_count(body["messages"])
            self.received.append(
                Received(request.url.path, request.url.query, dict(request.headers), body, count)
            )
            if count > self.max_prompt_tokens:
                return JSONResponse(
                    {"error": {"message": f"prompt {count} > {self.max_prompt_tokens}"}}, 400
                )
            fault = self.faults.popleft() if self.faults else ""
            if fault == "429":
                return JSONResponse(
                    {"error": {"message": "slow down", "type": "rate_limit"}},
                    429,
                    headers={"retry-after": "7"},
                )
            if fault == "500":
                return JSONResponse({"error": {"message": "boom", "type": "server"}}, 500)
            if fault == "slow":
                await asyncio.sleep(3)
            if fault == "malformed":
                return Response(b'{"id": "x", "choices": [', media_type="application/json")
            if body.get("stream"):
                return StreamingResponse(self._events(body, fault), media_type="text/event-stream")
            return JSONResponse(_completion(body, count))

        app.post("/v1/chat/completions")(handle)
        app.post("/openai/deployments/{name}/chat/completions")(handle)
        return app

    async def _events(self, body: dict[str, Any], fault: str) -> Any:
        if fault == "drop_early":
            raise RuntimeError("dropped before the first event")
        for i, word in enumerate(REPLY_WORDS):
            chunk = {
                "id": "chatcmpl-test",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}],
            }
            yield f"data: {json.dumps(chunk)}\n\n".encode()
            if i == 0 and fault == "gated":
                await asyncio.to_thread(self.gate.wait, 10)
            if i == 1 and fault == "drop_late":
                raise RuntimeError("dropped mid-stream")
        yield b"data: [DONE]\n\n"


def _completion(body: dict[str, Any], prompt_tokens: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "".join(REPLY_WORDS)},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(REPLY_WORDS),
            "total_tokens": prompt_tokens + len(REPLY_WORDS),
        },
    }
