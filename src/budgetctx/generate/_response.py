"""Reading a chat-completions response body: the reply text, usage and finish reason.

A 200 whose body is not a chat completion raises :class:`MalformedResponseError`, whose
message describes the *shape* of the body only (never its text: a server may echo the prompt).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from budgetctx.generate._base import Usage

if TYPE_CHECKING:
    from budgetctx.tokenizers import Tokenizer

__all__ = ["MalformedResponseError", "Reply", "estimator", "parse_completion"]


@dataclass(frozen=True)
class Reply:
    """What a chat completion said."""

    text: str
    usage: Usage | None
    finish_reason: str | None
    response_id: str | None


class MalformedResponseError(Exception):
    """A 200 whose body is not a chat completion; ``error`` is its error object, if any."""

    def __init__(self, description: str, *, error: object = None) -> None:
        super().__init__(description)
        self.error = error


def parse_completion(body: str) -> Reply:
    """The first choice of a chat-completions body.

    >>> parse_completion('{"choices": [{"message": {"content": "hi"}}]}').text
    'hi'
    """
    try:
        data = json.loads(body)
    except ValueError:
        raise MalformedResponseError("the body is not JSON") from None
    if not isinstance(data, dict):
        raise MalformedResponseError(f"the body is a JSON {type(data).__name__}, not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        # the error object rides on the exception, never in its message: it may echo the
        # prompt (see _failure for what of it is kept)
        raise MalformedResponseError("the body has no 'choices'", error=data.get("error"))
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        raise MalformedResponseError("choices[0] has no 'message'")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise MalformedResponseError("choices[0].message.content is not a string")
    finish = first.get("finish_reason")
    rid = data.get("id")
    return Reply(
        text=content or "",
        usage=_parse_usage(data.get("usage")),
        finish_reason=finish if isinstance(finish, str) else None,
        response_id=rid if isinstance(rid, str) else None,
    )


def _parse_usage(usage: Any) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    n_in, n_out = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if type(n_in) is not int or type(n_out) is not int or n_in < 0 or n_out < 0:
        return None
    return Usage(input_tokens=n_in, output_tokens=n_out)


@functools.cache
def estimator() -> Tokenizer:
    """The tokenizer that counts usage when the server reports none."""
    from budgetctx.tokenizers import get_tokenizer

    return get_tokenizer("o200k_base")
