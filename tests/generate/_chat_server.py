"""A small OpenAI-compatible chat-completions server on loopback, for tests.

It answers ``POST /v1/chat/completions`` and Azure's
``POST /openai/deployments/{deployment}/chat/completions?api-version=...`` with a deterministic
reply (``"echo: " + last user message``) and word-count usage, records every request, tracks how
many requests were in flight at once, and plays scripted faults first::

    with ChatServer() as server:
        server.push(Fault.rate_limited(retry_after="1"), Fault.error(500))
        gen = OpenAIGenerator("m", base_url=server.url)
        gen.generate([Message("user", "hi")])   # third request succeeds
        assert len(server.requests) == 3
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["ChatServer", "Fault", "RecordedRequest", "reply_for"]


def reply_for(messages: list[dict[str, Any]]) -> str:
    """The canned reply: ``"echo: "`` + the content of the last user message."""
    user = [m.get("content", "") for m in messages if m.get("role") == "user"]
    return "echo: " + (user[-1] if user else "")


@dataclass(frozen=True)
class Fault:
    """What to answer to one request instead of the normal reply.

    ``body=None`` means the normal reply (after ``delay``); ``usage=False`` leaves usage out.
    ``reason`` replaces the HTTP reason phrase; ``bad_header`` adds a header line that is not
    ``name: value`` (the client's HTTP parser rejects the response). In ``body``, ``reason``
    and ``bad_header`` the text ``{prompt}`` is replaced by the last user message and ``{tail}``
    by that message without its first word, as a server that echoes its input (or a fragment
    of it) would.
    """

    status: int = 200
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    usage: bool = True
    content_type: str = "application/json"
    reason: str | None = None
    bad_header: str | None = None

    @classmethod
    def rate_limited(cls, **headers: str) -> Fault:
        """429; pass ``retry_after="2"`` or ``retry_after_ms="1500"`` for the headers."""
        hdrs = {k.replace("_", "-"): v for k, v in headers.items()}
        return cls.error(429, "Rate limit reached for requests", headers=hdrs)

    @classmethod
    def error(
        cls, status: int, message: str = "boom", *, headers: dict[str, str] | None = None
    ) -> Fault:
        body = {"error": {"message": message, "type": "test_error", "code": str(status)}}
        return cls(status=status, body=json.dumps(body).encode(), headers=headers or {})

    @classmethod
    def slow(cls, delay: float) -> Fault:
        return cls(delay=delay)

    @classmethod
    def malformed(cls, body: bytes = b'{"id": "x", "choices": [') -> Fault:
        return cls(status=200, body=body)

    @classmethod
    def no_usage(cls) -> Fault:
        return cls(usage=False)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-cased names
    body: Any  # the decoded JSON body (None if it was not JSON)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 5  # an idle keep-alive connection must not hold a thread forever

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output quiet
        pass

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):
            # The client reset the connection, as httpx does on a response it rejects (the
            # bad_header fault) while this thread waits for the next request on it: expected,
            # so no "Exception occurred during processing" traceback on the test's stderr.
            self.close_connection = True

    def do_POST(self) -> None:
        owner = self.server.owner
        split = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        owner._record(
            RecordedRequest(
                method="POST",
                path=split.path,
                query=parse_qs(split.query),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
            )
        )
        owner._enter()
        try:
            fault = owner._next_fault(body)
            delay = fault.delay if fault.delay else owner.delay
            if delay:
                owner._closing.wait(delay)
            if not _is_chat_path(split.path):
                self._send(404, json.dumps({"error": {"message": "not found"}}).encode())
            else:
                echo = reply_for(body.get("messages", []) if isinstance(body, dict) else [])
                prompt = echo.removeprefix("echo: ")
                tail = prompt.partition(" ")[2]

                def fill(text: str) -> str:
                    return text.replace("{prompt}", prompt).replace("{tail}", tail)

                payload = (
                    fill(fault.body.decode()).encode()
                    if fault.body is not None
                    else _completion(body, usage=fault.usage)
                )
                self._send(
                    fault.status if fault.body is not None else 200,
                    payload,
                    fault.headers,
                    fault.content_type,
                    reason=fill(fault.reason) if fault.reason else None,
                    bad_header=fill(fault.bad_header) if fault.bad_header else None,
                )
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test); nothing to answer
        finally:
            owner._leave()

    def _send(
        self,
        status: int,
        payload: bytes,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
        *,
        reason: str | None = None,
        bad_header: str | None = None,
    ) -> None:
        self.send_response(status, reason)
        self.send_header("Content-Type", content_type)
        if bad_header is not None:
            # a space in a header name makes the line illegal for h11
            self.send_header(bad_header, "x")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("x-request-id", "req_test_123")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)


def _is_chat_path(path: str) -> bool:
    parts = path.strip("/").split("/")
    if parts == ["v1", "chat", "completions"]:
        return True
    return (
        len(parts) == 5
        and parts[:2] == ["openai", "deployments"]
        and parts[3:]
        == [
            "chat",
            "completions",
        ]
    )


def _completion(body: Any, *, usage: bool) -> bytes:
    messages = body.get("messages", []) if isinstance(body, dict) else []
    text = reply_for(messages)
    out: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1700000000,
        "model": body.get("model", "") if isinstance(body, dict) else "",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
    }
    if usage:
        n_in = sum(len(str(m.get("content", "")).split()) for m in messages)
        n_out = len(text.split())
        out["usage"] = {
            "prompt_tokens": n_in,
            "completion_tokens": n_out,
            "total_tokens": n_in + n_out,
        }
    return json.dumps(out).encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ChatServer


class ChatServer:
    """A threaded chat-completions server on ``127.0.0.1`` (random port); a context manager.

    ``url`` is the OpenAI-style base URL (``.../v1``); ``endpoint`` the bare origin (Azure).
    ``delay`` slows every normal reply (to make requests overlap in concurrency tests).
    """

    def __init__(self, *, delay: float = 0.0) -> None:
        self.delay = delay
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._faults: deque[Fault] = deque()
        self._by_prompt: dict[str, Fault] = {}
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        # a short poll interval makes shutdown (each test's teardown) take ms, not 0.5 s
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def endpoint(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def url(self) -> str:
        return self.endpoint + "/v1"

    def push(self, *faults: Fault) -> None:
        """Answer the next requests with these faults, in order (then normally)."""
        with self._lock:
            self._faults.extend(faults)

    def on(self, prompt: str, fault: Fault) -> None:
        """Answer every request whose last user message is ``prompt`` with ``fault``."""
        with self._lock:
            self._by_prompt[prompt] = fault

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_fault(self, body: Any) -> Fault:
        messages = body.get("messages", []) if isinstance(body, dict) else []
        prompt = reply_for(messages).removeprefix("echo: ")
        with self._lock:
            if prompt in self._by_prompt:
                return self._by_prompt[prompt]
            return self._faults.popleft() if self._faults else Fault()

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1
