"""Chat messages under one token budget: count them the way the model bills them, condense some.

A chat request is OpenAI-style messages (``{"role": ..., "content": ...}``). Its prompt
tokens are counted with the formula of the OpenAI cookbook ("How to count tokens with
tiktoken", the figures it publishes for gpt-3.5-turbo, gpt-4, gpt-4o and gpt-4o-mini)::

    prompt_tokens = 3                       # the reply is primed: <|start|>assistant<|message|>
                  + sum over messages of (
                        3                   # <|start|>, <|message|>, <|end|>
                      + tokens(role) + tokens(content)
                      + (tokens(name) + 1 if name))

Text parts of a content array are counted one by one; an image part with ``detail: "low"``
costs 85 tokens (OpenAI's published rule); any other image needs ``image_tokens=N``. Fields
OpenAI publishes no rule for (``tool_calls``, ``function_call``, ``tool_call_id``) are
counted as their text (JSON for the structured ones): an estimate, not the billed figure.

:func:`fit_messages` keeps the messages it may not touch verbatim (system, the last user
question, assistant turns, tool calls) and condenses the others with one global selection
over all of them (``build_context`` with one document per condensed text), so the most
relevant sentences win wherever they are.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from budgetctx._errors import InputError, InvalidParameterError, UnknownComponentError
from budgetctx._validation import (
    Boolean,
    Constraint,
    InstanceOf,
    Interval,
    NoneOr,
    Predicate,
    check,
    short_repr,
)
from budgetctx.context import SelectedUnit
from budgetctx.tokenizers import Tokenizer, get_tokenizer

__all__ = [
    "IMAGE_LOW_DETAIL_TOKENS",
    "ROLES",
    "TOKENS_PER_MESSAGE",
    "TOKENS_PER_NAME",
    "TOKENS_REPLY_PRIMING",
    "FittedMessages",
    "MessageProvenance",
    "count_message_tokens",
]

#: The cookbook's constants for gpt-3.5-turbo-0125, gpt-4-0613, gpt-4o and gpt-4o-mini.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
TOKENS_REPLY_PRIMING = 3
#: OpenAI's published cost of an image part sent with ``detail: "low"``.
IMAGE_LOW_DETAIL_TOKENS = 85
#: Roles a chat message may have ("developer" is the system role of the o-series models).
ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_SYSTEM_ROLES = ("system", "developer")
_AUTO_ROLES = ("user", "tool")
_STRUCTURED = ("tool_calls", "function_call")
#: Rounds of "recount, shrink the content budget by the overshoot, select again": the
#: overshoot comes from BPE merges across texts and is a few tokens, so one round is usual.
_MAX_ROUNDS = 8

CompressSpec = str | Sequence[int] | Callable[[int, Mapping[str, Any]], bool]


@dataclass(frozen=True)
class _Text:
    """One condensable text of a message: its ``content`` string (``part`` None) or one text
    part of its content array (``part`` is the part's index)."""

    part: int | None
    text: str
    tokens: int


@dataclass(frozen=True)
class _Message:
    index: int
    role: str
    #: every token of the message but its texts: overhead, role, name, images, tool calls
    fixed: int
    texts: tuple[_Text, ...]
    structured: bool

    @property
    def tokens(self) -> int:
        return self.fixed + sum(t.tokens for t in self.texts)

    @property
    def text_tokens(self) -> int:
        return sum(t.tokens for t in self.texts)


@dataclass(frozen=True)
class MessageProvenance:
    """What was kept of one condensed text of a message.

    ``index`` is the message's position in the input list; ``part`` is the index of the text
    part in its content array (None when ``content`` is a string). ``units`` are the kept
    units: their ``spans`` are character offsets into that text (``message["content"]``, or
    ``message["content"][part]["text"]``), and joining the spanned text of every unit with the
    separator gives the message's new text exactly.

    >>> p = MessageProvenance(index=1, part=None, role="user", tokens_before=120,
    ...                       tokens_after=40, units=(), selector="mmr")
    >>> p.to_dict()["tokens_saved"]
    80
    """

    index: int
    part: int | None
    role: str
    tokens_before: int
    tokens_after: int
    units: tuple[SelectedUnit, ...]
    selector: str

    @property
    def tokens_saved(self) -> int:
        return self.tokens_before - self.tokens_after

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["tokens_saved"] = self.tokens_saved
        out["units"] = [
            {
                **asdict(u),
                "spans": [list(s) for s in u.spans],
                "unit_spans": [list(s) for s in u.unit_spans],
            }
            for u in self.units
        ]
        return out


@dataclass(frozen=True)
class FittedMessages:
    """Chat messages that fit a budget, ready to send, with what was condensed.

    ``messages`` are new dicts (the input is never changed); ``prompt_tokens`` is their count
    by :func:`count_message_tokens` and is never above ``budget - reserve``.

    >>> fit = FittedMessages(messages=({"role": "user", "content": "Hi."},), prompt_tokens=9,
    ...                      prompt_tokens_before=9, budget=100, reserve=0, tokenizer="o200k_base")
    >>> fit.to_dict()["tokens_saved"]
    0
    """

    messages: tuple[dict[str, Any], ...]
    prompt_tokens: int
    prompt_tokens_before: int
    budget: int
    reserve: int
    tokenizer: str
    compressed: tuple[MessageProvenance, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def tokens_saved(self) -> int:
        return self.prompt_tokens_before - self.prompt_tokens

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "messages": [copy.deepcopy(m) for m in self.messages],
            "prompt_tokens": self.prompt_tokens,
            "prompt_tokens_before": self.prompt_tokens_before,
            "tokens_saved": self.tokens_saved,
            "budget": self.budget,
            "reserve": self.reserve,
            "tokenizer": self.tokenizer,
            "compressed": [p.to_dict() for p in self.compressed],
            "notes": list(self.notes),
        }


def _is_compress(value: Any) -> bool:
    if isinstance(value, str):
        return value == "auto"
    if callable(value):
        return True
    return isinstance(value, Sequence) and all(
        isinstance(i, int) and not isinstance(i, bool) for i in value
    )


_CONSTRAINTS: dict[str, Constraint] = {
    "budget": Interval(int, 1, None, fix="e.g. budget=4096."),
    "reserve": Interval(int, 0, None, fix="e.g. reserve=512 to keep room for the answer."),
    "model": NoneOr(InstanceOf(str, "a str"), fix="e.g. model='gpt-4o'."),
    "tokenizer": Predicate(
        lambda v: v is None or isinstance(v, str | Tokenizer),
        "None, a tokenizer name or a Tokenizer",
        fix="see list_tokenizers().",
    ),
    "image_tokens": NoneOr(
        Interval(int, 0, None), fix="pass the image's token cost, e.g. image_tokens=765."
    ),
    "keep_system": Boolean(),
    "keep_last_user": Boolean(),
    "compress": Predicate(
        _is_compress,
        "'auto', a sequence of message indices or a callable (index, message) -> bool",
        fix="e.g. compress=[1, 3].",
    ),
    "query": Predicate(
        lambda v: v is None or isinstance(v, str),
        "'auto', None or a query str",
        fix="'auto' uses the last user message; None the centroid of the condensed text.",
    ),
}


def _check(owner: str, **values: Any) -> dict[str, Any]:
    return {name: check(owner, name, value, _CONSTRAINTS[name]) for name, value in values.items()}


def _tokenizer(owner: str, model: str | None, tokenizer: str | Tokenizer | None) -> Tokenizer:
    """The tokenizer of ``model`` or ``tokenizer`` (o200k_base when neither is given).

    A dated model name that is not a registered alias (``gpt-4-0613``) is looked up in
    tiktoken's own model table, which is offline.
    """
    if model is not None and tokenizer is not None:
        raise InvalidParameterError(
            f"Both model={model!r} and tokenizer={short_repr(tokenizer)} were given to "
            f"{owner}; pass one of them (model picks its tokenizer).",
            parameter="tokenizer",
            value=short_repr(tokenizer),
        )
    if model is None:
        return get_tokenizer("o200k_base" if tokenizer is None else tokenizer)
    try:
        return get_tokenizer(model)
    except UnknownComponentError as exc:
        from tiktoken.model import encoding_name_for_model

        try:
            name = encoding_name_for_model(model)
        except KeyError:
            raise InvalidParameterError(
                f"The 'model' parameter of {owner} must name a model whose tokenizer is known. "
                f"Got {model!r} instead; pass tokenizer= instead (see list_tokenizers()), e.g. "
                "tokenizer='o200k_base' or 'hf:/path/to/tokenizer.json'.",
                parameter="model",
                value=model,
            ) from exc
        return get_tokenizer(name)


def _input_error(index: int, what: str, fix: str, value: Any = None) -> InputError:
    return InputError(f"messages[{index}] {what}; {fix}", parameter="messages", value=value)


def _image_cost(index: int, p: int, part: Mapping[str, Any], image_tokens: int | None) -> int:
    image = part.get("image_url")
    detail = image.get("detail", "auto") if isinstance(image, Mapping) else "auto"
    if detail == "low":
        return IMAGE_LOW_DETAIL_TOKENS
    if image_tokens is None:
        raise _input_error(
            index,
            f"content part {p} is an image with detail={detail!r}, whose token cost depends on "
            "its size and the model (only detail='low' has a fixed cost, "
            f"{IMAGE_LOW_DETAIL_TOKENS} tokens)",
            "pass image_tokens=N (the cost of one such image), or send it with detail='low'.",
            value=detail,
        )
    return image_tokens


def _parse(messages: Any, tok: Tokenizer, image_tokens: int | None) -> list[_Message]:
    """Validate ``messages`` and count each one, text by text."""
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
        raise InputError(
            f"messages must be a list of message dicts, got {type(messages).__name__}; pass "
            "e.g. [{'role': 'user', 'content': 'Hello'}].",
            parameter="messages",
            value=type(messages).__name__,
        )
    if not messages:
        raise InputError(
            "messages is empty; pass at least one message, e.g. "
            "[{'role': 'user', 'content': 'Hello'}].",
            parameter="messages",
            value=0,
        )
    return [_parse_one(i, m, tok, image_tokens) for i, m in enumerate(messages)]


def _parse_one(i: int, msg: Any, tok: Tokenizer, image_tokens: int | None) -> _Message:
    if not isinstance(msg, Mapping):
        raise _input_error(
            i,
            f"is a {type(msg).__name__}, not a message dict",
            "pass {'role': ..., 'content': ...}.",
            type(msg).__name__,
        )
    role = msg.get("role")
    if role not in ROLES:
        what = "has no 'role'" if role is None else f"has the unknown role {short_repr(role)}"
        raise _input_error(i, what, f"use one of {', '.join(ROLES)}.", short_repr(role))
    structured = any(msg.get(k) is not None for k in _STRUCTURED)
    content = msg.get("content")
    if "content" not in msg and not structured:
        raise _input_error(
            i, "has no 'content'", "pass 'content' (a str or a list of content parts)."
        )
    fixed = TOKENS_PER_MESSAGE + tok.count(role)
    texts: list[_Text] = []
    if isinstance(content, str):
        texts.append(_Text(None, content, tok.count(content)))
    elif isinstance(content, list | tuple):
        for p, part in enumerate(content):
            kind = part.get("type") if isinstance(part, Mapping) else None
            if kind == "text" and isinstance(part.get("text"), str):
                texts.append(_Text(p, part["text"], tok.count(part["text"])))
            elif kind == "image_url":
                fixed += _image_cost(i, p, part, image_tokens)
            else:
                raise _input_error(
                    i,
                    f"content part {p} is {short_repr(part)}, which budgetctx cannot count",
                    "use {'type': 'text', 'text': ...} or {'type': 'image_url', ...} parts, "
                    "or drop that part.",
                    short_repr(kind),
                )
    elif content is not None or not structured:
        raise _input_error(
            i,
            f"has content of type {type(content).__name__}",
            "pass a str or a list of content parts (None only beside tool_calls).",
            type(content).__name__,
        )
    for key, value in msg.items():
        if key in ("role", "content") or value is None:
            continue
        if key == "name":
            fixed += tok.count(str(value)) + TOKENS_PER_NAME
        elif isinstance(value, str):
            fixed += tok.count(value)
        else:  # tool_calls, function_call: an estimate, OpenAI publishes no rule
            fixed += tok.count(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    return _Message(i, role, fixed, tuple(texts), structured)


def _total(parsed: Sequence[_Message]) -> int:
    return TOKENS_REPLY_PRIMING + sum(m.tokens for m in parsed)


def count_message_tokens(
    messages: Sequence[Mapping[str, Any]],
    *,
    model: str | None = None,
    tokenizer: str | Tokenizer | None = None,
    image_tokens: int | None = None,
) -> int:
    """Prompt tokens of chat ``messages`` as OpenAI bills them (the cookbook's formula).

    ``3 + sum(3 + tokens(role) + tokens(content) + (tokens(name) + 1 if name))`` with the
    tokenizer of ``model`` (or ``tokenizer``; o200k_base when neither is given). Image parts
    cost 85 tokens with ``detail: "low"``, else ``image_tokens``. ``tool_calls`` and
    ``function_call`` are counted as their JSON text: an estimate (OpenAI publishes no rule).

    >>> count_message_tokens([{"role": "user", "content": "Hello."}], model="gpt-4o")
    9
    """
    opts = _check(
        "count_message_tokens", model=model, tokenizer=tokenizer, image_tokens=image_tokens
    )
    tok = _tokenizer("count_message_tokens", opts["model"], opts["tokenizer"])
    return _total(_parse(messages, tok, opts["image_tokens"]))
