"""What of a failed request may be recorded: status, sanitised error type/code, a body hash.

An upstream error body, an HTTP reason phrase and a client library's exception message are
bytes the server chose, and servers echo the request: a 400 or 422 that quotes the prompt, a
reason phrase built from it, h11's ``illegal header line: bytearray(b'...')``. Cutting the
prompt out by pattern cannot be complete (a server may quote any fragment, re-encoded), so by
default none of that text is kept. A failure is described by

* the HTTP status (never the reason phrase);
* the error object's ``type`` and ``code`` when each is short and made of ``[A-Za-z0-9_.-]``;
* the first 12 hex digits of the body's SHA-256, to match the failure with a server's log;
* for a connection failure, the exception's class name (``RemoteProtocolError``), never its
  message.

``include_upstream_body=True`` (an :class:`~budgetctx.generate.OpenAIGenerator` option) adds
the reason phrase, the server's short error text and the exception message, with prompt text
cut out where it is found verbatim: for debugging against a server that sees no PHI.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import openai

from budgetctx.generate._base import Message
from budgetctx.generate._response import MalformedResponseError
from budgetctx.generate._retry import retry_after, retryable_status

__all__ = [
    "Failure",
    "body_digest",
    "connection_failure",
    "malformed_failure",
    "redact",
    "safe_token",
    "status_failure",
]

_REASON_CHARS = 200
_TOKEN = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
# OpenAI/Azure ("maximum context length", context_length_exceeded), vLLM, llama.cpp
# ("exceeds the available context size") refuse an over-long prompt with a 400. The body is
# searched in memory only; what is kept is the verdict.
_CONTEXT_LENGTH = re.compile(
    r"context[ _-]?(?:length|size|window)|maximum context|too many tokens", re.IGNORECASE
)


@dataclass(frozen=True)
class Failure:
    """One failed attempt, described without upstream text (unless opted in)."""

    kind: Literal["status", "timeout", "connection", "malformed"]
    reason: str
    retryable: bool
    status: int | None = None
    retry_after: float | None = None
    context_length: bool = False


def safe_token(value: Any) -> str | None:
    """``value`` as a short identifier, or None if it is anything else.

    >>> safe_token("context_length_exceeded"), safe_token(400), safe_token("a b"), safe_token(None)
    ('context_length_exceeded', '400', None, None)
    """
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value)
    return text if _TOKEN.fullmatch(text) else None


def body_digest(body: bytes) -> str:
    """First 12 hex digits of the SHA-256 of a response body.

    >>> body_digest(b"")
    'e3b0c44298fc'
    """
    return hashlib.sha256(body).hexdigest()[:12]


def _error_object(body: object) -> Mapping[str, Any] | None:
    # the openai client passes the inner "error" object when there is one, else the body
    if isinstance(body, Mapping):
        inner = body.get("error")
        return inner if isinstance(inner, Mapping) else body
    return None


def _type_and_code(body: object) -> list[str]:
    err = _error_object(body)
    if err is None:
        return []
    out = []
    for field in ("type", "code"):
        token = safe_token(err.get(field))
        if token is not None:
            out.append(f"error {field} {token!r}")
    return out


def _describe(head: str, body: bytes | None, error: object, extra: Sequence[str]) -> str:
    parts = [*_type_and_code(error)]
    if body is not None:
        parts.append(f"body sha256 {body_digest(body)}")
    parts.extend(extra)
    return head + (f" ({'; '.join(parts)})" if parts else "")


def status_failure(
    exc: openai.APIStatusError, msgs: Sequence[Message], *, include_body: bool
) -> Failure:
    """A non-2xx answer."""
    status = exc.status_code
    try:
        raw: bytes | None = exc.response.content
    except Exception:  # a streamed body not read: nothing to hash
        raw = None
    text = raw.decode("utf-8", "replace") if raw is not None else ""
    err = _error_object(exc.body)
    code = safe_token(err.get("code")) if err is not None else None
    too_long = status == 400 and (
        code == "context_length_exceeded" or _CONTEXT_LENGTH.search(text) is not None
    )
    extra = []
    if include_body:
        phrase = exc.response.reason_phrase or ""
        if phrase:
            extra.append(f"reason phrase: {redact(phrase, msgs)}")
        detail = redact(_error_detail(exc.body), msgs)
        if detail:
            extra.append(f"server said: {detail}")
    retryable = retryable_status(status)
    return Failure(
        "status",
        _describe(f"HTTP {status}", raw, exc.body, extra),
        retryable=retryable,
        status=status,
        retry_after=retry_after(exc.response.headers) if retryable else None,
        context_length=too_long,
    )


def malformed_failure(
    exc: MalformedResponseError, body: str, msgs: Sequence[Message], *, include_body: bool
) -> Failure:
    """A 200 whose body is not a chat completion (the description names its shape only)."""
    extra = []
    if include_body and exc.error is not None:
        detail = redact(_error_detail(exc.error), msgs)
        if detail:
            extra.append(f"server said: {detail}")
    reason = _describe(f"HTTP 200 but {exc}", body.encode("utf-8"), exc.error, extra)
    return Failure("malformed", reason, retryable=True, status=200)


def connection_failure(
    exc: openai.APIConnectionError, msgs: Sequence[Message], *, include_body: bool
) -> Failure:
    """No HTTP answer: the class name of what failed, its message only when opted in."""
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    reason = f"connection failed ({type(cause).__name__}"
    if include_body and str(cause):
        reason += f": {redact(str(cause)[:_REASON_CHARS], msgs)}"
    return Failure("connection", reason + ")", retryable=True)


def _error_detail(body: object) -> str:
    """The server's own short error text; never a field meant to echo the request."""
    text = ""
    err = _error_object(body)
    if err is not None:
        if isinstance(err.get("message"), str):
            text = err["message"]
        elif isinstance(err.get("error"), str):
            text = err["error"]
        elif isinstance(err.get("detail"), str):
            text = err["detail"]
        elif isinstance(err.get("detail"), list):  # FastAPI/pydantic: loc + msg, no input
            parts = []
            for item in err["detail"]:
                if isinstance(item, dict):
                    loc = ".".join(str(x) for x in item.get("loc", ()))
                    parts.append(f"{loc}: {item.get('msg', '')}".strip(": "))
            text = "; ".join(parts)
    elif isinstance(body, str):
        text = body
    text = " ".join(text.split())
    if len(text) > _REASON_CHARS:
        text = text[: _REASON_CHARS - 3] + "..."
    return text


def redact(text: str, msgs: Sequence[Message]) -> str:
    """Cut verbatim prompt text out of ``text``: best effort, for the opt-in path only.

    >>> redact("bad input: Jonas P., MRN 4488", [Message("user", "Jonas P., MRN 4488")])
    'bad input: [prompt text removed]'
    """
    pieces: set[str] = set()
    for m in msgs:
        content = " ".join(m.content.split())
        if len(content) >= 8:
            pieces.add(content)
            pieces.add(content[:40])
        for line in m.content.splitlines():
            line = " ".join(line.split())
            if len(line) >= 12:
                pieces.add(line)
                pieces.add(line[:40])
    for piece in sorted(pieces, key=len, reverse=True):
        text = text.replace(piece, "[prompt text removed]")
    return text
