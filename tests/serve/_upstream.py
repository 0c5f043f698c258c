"""A real loopback upstream for the proxy tests: FastAPI on uvicorn, in a thread.

It answers OpenAI's ``POST /v1/chat/completions`` and ``POST /v1/responses``, Anthropic's
``POST /v1/messages`` (its prompt counted as the o200k_base tokens of every text in it, a lower
bound of the proxy's estimate) and Azure's ``POST
/openai/deployments/{name}/chat/completions``, checks that every prompt it receives is within
``max_prompt_tokens`` counted by the OpenAI cookbook formula with the o200k_base tokenizer
(written out here, independently of the library's ``count_message_tokens``), and answers 400
when it is not. ``faults`` scripts the next answers: ``"429"``, ``"500"``, ``"slow"`` (sleeps
past the proxy's timeout), ``"malformed"`` (200 with a body that is not JSON), ``"drop_early"``
/ ``"drop_late"`` (a stream that breaks before / after its first event), ``"gated"`` (a stream
that sends one event and waits for ``gate`` before the rest; ``gate_opened`` records whether
the gate was opened in time, i.e. whether the client saw the first event while the upstream was
still holding the rest).
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

__all__ = [
    "REPLY_WORDS",
    "Received",
    "Upstream",
    "anthropic_text_tokens",
    "cookbook_count",
    "free_port",
    "responses_count",
]

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


def responses_count(body: dict[str, Any]) -> int:
    """The cookbook formula over a Responses body: instructions, then each input message
    (string content, or the sum of its text parts)."""
    tok = get_tokenizer("o200k_base")
    items = body["input"]
    messages = [{"role": "user", "content": items}] if isinstance(items, str) else items
    if body.get("instructions"):
        messages = [{"role": "system", "content": body["instructions"]}, *messages]
    total = 3
    for m in messages:
        content = m["content"]
        texts = [content] if isinstance(content, str) else [p["text"] for p in content]
        total += 3 + tok.count(m["role"]) + sum(tok.count(t) for t in texts)
    return total


def anthropic_text_tokens(body: dict[str, Any]) -> int:
    """The o200k_base tokens of every text of a Messages body: system, text blocks, tool
    results (strings or text blocks) and tool_use inputs (as JSON)."""
    tok = get_tokenizer("o200k_base")

    def texts(content: Any) -> list[str]:
        if isinstance(content, str):
            return [content]
        out: list[str] = []
        for block in content or []:
            if block["type"] == "text":
                out.append(block["text"])
            elif block["type"] == "tool_result":
                out.extend(texts(block.get("content", "")))
            elif block["type"] == "tool_use":
                out.append(json.dumps(block["input"]))
        return out

    all_texts = texts(body.get("system"))
    for message in body["messages"]:
        all_texts.extend(texts(message["content"]))
    return sum(tok.count(t) for t in all_texts)


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
    gate_opened: bool | None = None
    port: int = field(default_factory=free_port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Upstream:
        # Build the counter before serving: its first load can outlast the proxy's timeout.
        get_tokenizer("o200k_base").count("warm")
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
            responses = request.url.path.endswith("/responses")
            anthropic = request.url.path.endswith("/messages")
            if anthropic:
                count = anthropic_text_tokens(body)
            else:
                count = responses_count(body) if responses else cookbook_count(body["messages"])
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
                events = (
                    _anthropic_events(body, count)
                    if anthropic
                    else _response_events(body, count)
                    if responses
                    else self._events(body, fault)
                )
                return StreamingResponse(events, media_type="text/event-stream")
            if anthropic:
                return JSONResponse(_message(body, count))
            return JSONResponse((_response if responses else _completion)(body, count))

        app.post("/v1/chat/completions")(handle)
        app.post("/v1/responses")(handle)
        app.post("/v1/messages")(handle)
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
                self.gate_opened = await asyncio.to_thread(self.gate.wait, 5)
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


def _response(body: dict[str, Any], prompt_tokens: int) -> dict[str, Any]:
    return {
        "id": "resp_test",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": body["model"],
        "output": [
            {
                "type": "message",
                "id": "msg_test",
                "status": "completed",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": "".join(REPLY_WORDS), "annotations": []}
                ],
            }
        ],
        "usage": {
            "input_tokens": prompt_tokens,
            "output_tokens": len(REPLY_WORDS),
            "total_tokens": prompt_tokens + len(REPLY_WORDS),
        },
    }


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _message(body: dict[str, Any], prompt_tokens: int) -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": [{"type": "text", "text": "".join(REPLY_WORDS)}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": prompt_tokens, "output_tokens": len(REPLY_WORDS)},
    }


async def _anthropic_events(body: dict[str, Any], prompt_tokens: int) -> Any:
    start = {**_message(body, prompt_tokens), "content": [], "stop_reason": None}
    yield _sse("message_start", {"type": "message_start", "message": start})
    block = {"type": "text", "text": ""}
    yield _sse(
        "content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}
    )
    for word in REPLY_WORDS:
        delta = {"type": "text_delta", "text": word}
        yield _sse(
            "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
        )
    yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": len(REPLY_WORDS)},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


async def _response_events(body: dict[str, Any], prompt_tokens: int) -> Any:
    done = _response(body, prompt_tokens)
    created = {**done, "status": "in_progress", "output": [], "usage": None}
    n = 0
    yield _sse(
        "response.created", {"type": "response.created", "response": created, "sequence_number": n}
    )
    for word in REPLY_WORDS:
        n += 1
        delta = {
            "type": "response.output_text.delta",
            "item_id": "msg_test",
            "output_index": 0,
            "content_index": 0,
            "delta": word,
            "logprobs": [],
            "sequence_number": n,
        }
        yield _sse("response.output_text.delta", delta)
    n += 1
    yield _sse(
        "response.completed", {"type": "response.completed", "response": done, "sequence_number": n}
    )
