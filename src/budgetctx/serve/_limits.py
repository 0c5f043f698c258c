"""Bounds on what a client can make the server hold: slow or endless connections, bodies read
too slowly, JSON the library cannot take, and more selections than the machine can run.

The JSON rules: no ``NaN``/``Infinity``, no number that overflows a float (``1e400``), no
integer of more than 18 digits, no lone surrogate (``"\\ud800"``) in a string or a key, and
at most :data:`MAX_DEPTH` levels of nesting. Each breach is a 422 naming where it is.

Selections run in threads by default; a thread cannot be stopped, so an abandoned selection
(past ``selection_timeout_s``) keeps its slot until it really ends, and at most
``max_selections`` run at once whatever clients do. With ``selection_processes`` an abandoned
selection's worker process is killed and replaced (see ``_app``).

>>> parse_json(b'{"budget": 5}')
{'budget': 5}
>>> try:
...     parse_json(b'{"a": [1, NaN]}')
... except ApiError as exc:
...     print(exc.status, exc.parameter, exc.value)
422 a[1] NaN
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import threading
import time
from typing import Any

import anyio
from starlette.requests import Request
from uvicorn.protocols.http.h11_impl import H11Protocol

from budgetctx.serve._problems import ApiError

__all__ = [
    "MAX_DEPTH",
    "SelectionSlots",
    "Ticket",
    "guarded_protocol",
    "parse_json",
    "read_json",
]

MAX_DEPTH = 64  # tool schemas nest deep; nothing legitimate nests deeper
_MAX_INT_DIGITS = 18
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Bad:
    """A value the JSON parser saw and the server refuses, kept to say where it was."""

    def __init__(self, shown: str, why: str) -> None:
        self.shown = shown
        self.why = why


def _constant(name: str) -> _Bad:
    return _Bad(name, f"{name}, which JSON does not allow; send a finite number")


def _float(text: str) -> float | _Bad:
    value = float(text)
    if math.isfinite(value):
        return value
    return _Bad(text[:40], f"{text[:40]}, which is out of range; send a finite number")


def _int(text: str) -> int | _Bad:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        return _Bad(
            f"an integer of {len(text)} digits",
            f"an integer of {len(text)} digits; send at most {_MAX_INT_DIGITS}",
        )
    return int(text)


def _refuse(path: str, shown: Any, why: str) -> ApiError:
    return ApiError(
        422,
        f"The request's {path or 'body'} is {why}.",
        parameter=path or "body",
        value=shown,
        kind="bad_json_value",
    )


def _check(value: Any) -> None:
    """Walk the parsed body (iteratively: depth is what is being checked) for refused values."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _refuse(
                path,
                f"nested {depth} deep",
                f"nested more than {MAX_DEPTH} levels deep; send a flatter body",
            )
        if isinstance(item, _Bad):
            raise _refuse(path, item.shown, item.why)
        if isinstance(item, str):
            if _SURROGATE.search(item):
                raise _refuse(
                    path,
                    "a lone surrogate",
                    "a string holding a lone UTF-16 surrogate (e.g. \\ud800), which is not "
                    "text; send valid Unicode",
                )
        elif isinstance(item, dict):
            for key, sub in item.items():
                if _SURROGATE.search(key):
                    raise _refuse(
                        path,
                        "a lone surrogate",
                        "an object with a key holding a lone UTF-16 surrogate; send valid Unicode",
                    )
                name = key if len(key) <= 40 and key.isidentifier() else "(a key)"
                stack.append((sub, f"{path}.{name}" if path else name, depth + 1))
        elif isinstance(item, list):
            stack.extend((sub, f"{path}[{i}]", depth + 1) for i, sub in enumerate(item))


def parse_json(data: bytes) -> Any:
    """The body as JSON, or an :class:`ApiError`: 400 if it is not JSON, 422 for a value
    the server refuses (see the module docstring)."""
    try:
        value = json.loads(data, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except json.JSONDecodeError as exc:
        raise ApiError(
            400,
            f"The request body is not valid JSON ({exc.msg} at byte {exc.pos}); send a JSON "
            "object with content-type application/json.",
            kind="not_json",
        ) from None
    except UnicodeDecodeError as exc:
        raise ApiError(
            400,
            f"The request body is not UTF-8 (bad byte at offset {exc.start}); send UTF-8 JSON.",
            kind="not_utf8",
        ) from None
    except RecursionError:
        raise _refuse(
            "body",
            f"nested over {MAX_DEPTH} deep",
            f"nested more than {MAX_DEPTH} levels deep; send a flatter body",
        ) from None
    _check(value)
    return value


async def read_json(request: Request, *, limit: int, timeout: float) -> Any:
    """The request's JSON, read up to ``limit`` bytes (413) within ``timeout`` seconds (408)."""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise _too_large(int(declared), limit)
    data = bytearray()
    try:
        with anyio.fail_after(timeout):
            async for chunk in request.stream():
                data += chunk
                if len(data) > limit:
                    raise _too_large(len(data), limit)
    except TimeoutError:
        raise ApiError(
            408,
            f"The request body took longer than {timeout:g} s to arrive ({len(data)} bytes "
            "read); send it at once, or raise limits.body_timeout_s.",
            parameter="body",
            value=len(data),
            kind="body_timeout",
        ) from None
    return parse_json(bytes(data))


def _too_large(size: int, limit: int) -> ApiError:
    return ApiError(
        413,
        f"The request body has at least {size} bytes; this server takes at most {limit}. Send "
        "fewer or shorter documents, or raise limits.max_body_bytes.",
        parameter="body",
        value=size,
        kind="body_too_large",
    )


class SelectionSlots:
    """At most ``size`` selections at once; a slot is freed when its selection really ends
    (an abandoned thread keeps its slot), so abandoned work cannot pile up. A request waits
    for a slot within its selection timeout, and gets a 503 if none frees in time."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._used = 0
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        return self._used

    def try_acquire(self) -> bool:
        with self._lock:
            if self._used >= self.size:
                return False
            self._used += 1
            return True

    async def acquire(self) -> Ticket:
        # Slots are freed from worker threads and pool callbacks: a short poll is the
        # simplest wake-up that crosses threads, and costs nothing next to a selection.
        while not self.try_acquire():
            await anyio.sleep(0.02)
        return Ticket(self)

    def release(self) -> None:
        with self._lock:
            self._used -= 1

    def busy(self) -> ApiError:
        return ApiError(
            503,
            f"All {self.size} selection slots stayed busy for the whole selection timeout; "
            "retry shortly, or raise limits.max_selections (each slot is a selection's CPU "
            "and memory).",
            headers={"retry-after": "1"},
            kind="selections_busy",
        )


class Ticket:
    """One acquired slot, released exactly once: by the work when it ends, or by the
    request when it gave up before the work started."""

    def __init__(self, slots: SelectionSlots) -> None:
        self._slots = slots
        self._lock = threading.Lock()
        self._state = "acquired"  # -> "running" -> "done", or -> "done" (never started)

    def start(self) -> bool:
        """Called by the work: False if the request already gave the slot up."""
        with self._lock:
            if self._state != "acquired":
                return False
            self._state = "running"
            return True

    def done(self) -> None:
        with self._lock:
            if self._state == "done":
                return
            self._state = "done"
        self._slots.release()

    def abandon(self) -> None:
        """The request gave up: free the slot now unless the work is running."""
        with self._lock:
            if self._state != "acquired":
                return
            self._state = "done"
        self._slots.release()


_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
    b"connection: close\r\nretry-after: 1\r\ncontent-length: %d\r\n\r\n%s"
)


def guarded_protocol(*, max_connections: int, idle_timeout: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol with a connection cap (more are answered 503 and closed) and
    an idle timeout: a connection without a request in progress for ``idle_timeout`` seconds
    (slow headers, a stalled keep-alive) is closed. uvicorn itself has neither: its
    keep-alive timer is reset by every byte, and ``limit_concurrency`` only answers once the
    headers are complete."""
    body = json.dumps(
        {
            "error": f"The server has {max_connections} open connections, its limit; retry "
            "shortly, or raise limits.max_connections.",
            "parameter": None,
            "value": max_connections,
        }
    ).encode()
    busy = _BUSY % (len(body), body)

    class GuardedH11Protocol(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                transport.write(busy)
                transport.close()
                return
            self._idle_since: float | None = time.monotonic()
            self._seen: Any = None
            self._tick()

        def _tick(self) -> None:
            if self.transport.is_closing():
                return
            cycle = self.cycle
            now = time.monotonic()
            if cycle is not None and not cycle.response_complete:
                self._idle_since = None  # a request in progress: its own timeouts apply
            elif self._idle_since is None or cycle is not self._seen:
                self._idle_since, self._seen = now, cycle
            elif now - self._idle_since >= idle_timeout:
                self.transport.close()
                return
            self.loop.call_later(min(1.0, idle_timeout / 2), self._tick)

    return GuardedH11Protocol
