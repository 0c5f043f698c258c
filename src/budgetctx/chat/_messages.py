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
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from budgetctx._core.results import Context, SelectedUnit
from budgetctx._core.validation import (
    Boolean,
    Constraint,
    InstanceOf,
    Interval,
    NoneOr,
    OneOf,
    Predicate,
    check,
    short_repr,
)
from budgetctx._errors import InputError, InvalidParameterError, UnknownComponentError
from budgetctx.build._options import (
    DEFAULT_SELECTOR,
    RULES,
    BuildOptions,
    check_budget,
    check_reserve,
)
from budgetctx.build._pins import Pin
from budgetctx.build._pipeline import (
    NOT_ENCODED,
    PreparedDocument,
    _prepare,
    _resolve_selector,
    validate_text,
)
from budgetctx.chat._history import HistoryPlan, dropped_note, fit_dropping, plan_history
from budgetctx.chat._json_units import condense_json, json_floor, parse_json_text
from budgetctx.representations import Representation
from budgetctx.router import Router
from budgetctx.selectors import Selector
from budgetctx.tokenizers import Tokenizer, get_tokenizer, is_exact
from budgetctx.unitizers import Unitizer

__all__ = [
    "IMAGE_LOW_DETAIL_TOKENS",
    "ROLES",
    "TOKENS_PER_MESSAGE",
    "TOKENS_PER_NAME",
    "TOKENS_REPLY_PRIMING",
    "FittedMessages",
    "MessageProvenance",
    "count_message_tokens",
    "fit_messages",
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
#: Rounds of "recount, shrink the content budget by the overshoot, select again": texts can
#: cost a few tokens more counted apart than joined (BPE merges, a token some tokenizers add
#: per call), so one round is usual.
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
    #: "text" (sentences selected, ``units`` hold their spans) or "json" (condensed as JSON:
    #: whole array items and object members kept, ``omitted`` says what was left out)
    structure: str = "text"
    omitted: str = ""

    @property
    def tokens_saved(self) -> int:
        return self.tokens_before - self.tokens_after

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["tokens_saved"] = self.tokens_saved
        out["units"] = [u.to_dict() for u in self.units]
        return out


@dataclass(frozen=True)
class FittedMessages:
    """Chat messages that fit a budget, ready to send, with what was condensed.

    ``messages`` are new dicts (the input is never changed); ``prompt_tokens`` is their count
    by :func:`count_message_tokens` and is never above ``budget - reserve``. ``compressed``
    has one entry per condensed text; ``query`` is the relevance query the selection used.

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
    notes: tuple[str, ...] = ()
    #: the relevance query the selection used (None: the centroid of the condensed texts)
    query: str | None = None
    #: input indices of the messages dropped whole by the history strategy (oldest turns);
    #: ``messages`` are the others, in order, and provenance indices are the input's
    dropped: tuple[int, ...] = ()
    #: False when the tokenizer is an estimate (a model family without a public tokenizer,
    #: e.g. Claude): the counts are then an upper bound by assumption, not the billed figure
    exact: bool = True

    @property
    def available(self) -> int:
        """The prompt tokens the messages may use: ``budget - reserve``."""
        return self.budget - self.reserve

    @property
    def tokens_saved(self) -> int:
        return self.prompt_tokens_before - self.prompt_tokens

    @property
    def sources(self) -> tuple[int, ...]:
        """The input index of each message of ``messages``."""
        gone = set(self.dropped)
        return tuple(i for i in range(len(self.messages) + len(gone)) if i not in gone)

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
            "query": self.query,
            "dropped": list(self.dropped),
            "exact": self.exact,
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
    "reserve": RULES["reserve"],
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
    "history": OneOf(
        ("auto", "keep"),
        fix="'auto' drops the oldest turns when condensing alone cannot fit them; 'keep' never "
        "drops a message.",
    ),
    "keep_turns": Interval(int, 1, None, fix="e.g. keep_turns=2 to never drop the last 2 turns."),
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


_NAME = re.compile(r"[a-z][a-z0-9_.-]{0,39}")


def _label(value: Any) -> str:
    """A role, a part type or a field name as the error shows it: quoted when it looks like
    a name, else only its type and size. Messages are printed and logged, and a value that
    is not a name may be patient text (F11: name the position and the type, never the value)."""
    if isinstance(value, str) and _NAME.fullmatch(value):
        return repr(value)
    if isinstance(value, str):
        return f"(a str of {len(value)} characters, not shown)"
    return f"(a {type(value).__name__}, not shown)"


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
        what = "has no 'role'" if role is None else f"has the unknown role {_label(role)}"
        raise _input_error(i, what, f"use one of {', '.join(ROLES)}.", _label(role))
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
                what = (
                    f"a part of type {_label(kind)}"
                    if isinstance(part, Mapping)
                    else f"a {type(part).__name__}"
                )
                raise _input_error(
                    i,
                    f"content part {p} is {what}, which budgetctx cannot count",
                    "use {'type': 'text', 'text': ...} or {'type': 'image_url', ...} parts, "
                    "or drop that part.",
                    _label(kind) if isinstance(part, Mapping) else type(part).__name__,
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
            try:
                text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            except RecursionError:
                raise _input_error(
                    i,
                    f"has a field {_label(key)} nested too deep to write as JSON",
                    "send a flatter value, as the API expects.",
                    _label(key),
                ) from None
            except (TypeError, ValueError) as exc:
                # json's message names a type ("Object of type set ..."), never a value.
                raise _input_error(
                    i,
                    f"has a field {_label(key)} that is not JSON ({exc})",
                    "pass plain JSON values (dicts, lists, str, numbers), as the API expects.",
                    _label(key),
                ) from None
            fixed += tok.count(text)
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


def _last_user(parsed: Sequence[_Message]) -> int | None:
    return next((m.index for m in reversed(parsed) if m.role == "user"), None)


def _allowed(m: _Message, last_user: int | None, keep_system: bool, keep_last_user: bool) -> str:
    """Why message ``m`` may not be condensed ("" when it may)."""
    if m.structured:
        return "it carries tool_calls/function_call, which are never condensed"
    if not m.texts:
        return "it has no text to condense"
    if keep_system and m.role in _SYSTEM_ROLES:
        return f"it is a {m.role} message and keep_system=True (pass keep_system=False)"
    if keep_last_user and m.index == last_user:
        return "it is the last user message and keep_last_user=True (pass keep_last_user=False)"
    return ""


def _longest_first(indices: Sequence[int], lengths: Sequence[int], room: int) -> list[int]:
    """The fewest of the longest texts to condense: the first ``k`` (lengths descending) such
    that the others fit verbatim and none of them is longer than the room the ``k`` condensed
    ones get on average (water-filling: two long messages share the cut instead of one of
    them being gutted while the other stays whole). All of them when nothing smaller works.

    >>> _longest_first([1, 3, 5], [5000, 4900, 100], 5000)
    [1, 3]
    >>> _longest_first([1, 3, 5], [5000, 200, 100], 4000)
    [1]
    """
    n = len(lengths)
    rest = sum(lengths)
    for k in range(1, n + 1):
        rest -= lengths[k - 1]
        share = room - rest
        if share >= 0 and (k == n or share >= k * lengths[k]):
            return sorted(indices[:k])
    return sorted(indices)


def _choose(
    parsed: Sequence[_Message],
    messages: Sequence[Mapping[str, Any]],
    compress: CompressSpec,
    *,
    limit: int,
    keep_system: bool,
    keep_last_user: bool,
) -> list[int]:
    """Indices of the messages to condense."""
    last_user = _last_user(parsed)
    if isinstance(compress, str):  # "auto": longest user/tool (and freed roles) first
        roles = _AUTO_ROLES + (() if keep_system else _SYSTEM_ROLES)
        pool = sorted(
            (
                m
                for m in parsed
                if m.role in roles and not _allowed(m, last_user, keep_system, keep_last_user)
            ),
            key=lambda m: (-m.text_tokens, m.index),
        )
        room = limit - (_total(parsed) - sum(m.text_tokens for m in pool))
        return _longest_first([m.index for m in pool], [m.text_tokens for m in pool], room)
    if callable(compress):
        wanted = [m.index for m in parsed if compress(m.index, messages[m.index])]
    else:
        wanted = list(compress)
    return _check_compress(parsed, wanted, keep_system=keep_system, keep_last_user=keep_last_user)


def _check_compress(
    parsed: Sequence[_Message], wanted: Sequence[int], *, keep_system: bool, keep_last_user: bool
) -> list[int]:
    """The named indices, each checked to exist and to be condensable."""
    last_user = _last_user(parsed)
    for i in wanted:
        if not -len(parsed) <= i < len(parsed):
            raise InvalidParameterError(
                f"The 'compress' parameter of fit_messages names message {i}, but there are "
                f"{len(parsed)} messages; pass indices in [0, {len(parsed) - 1}].",
                parameter="compress",
                value=i,
            )
        why = _allowed(parsed[i], last_user, keep_system, keep_last_user)
        if why:
            raise InvalidParameterError(
                f"The 'compress' parameter of fit_messages names message {i % len(parsed)}, "
                f"which cannot be condensed: {why}; leave it out of compress.",
                parameter="compress",
                value=i,
            )
    return sorted({i % len(parsed) for i in wanted})


#: BuildOptions fields that fit_messages sets itself (its own keywords, or fixed by the format).
_OWN_OPTIONS = ("tokenizer", "query", "reserve", "order", "document_header", "document_separator")


def _selection_options(options: BuildOptions | None, **keywords: Any) -> BuildOptions:
    """The selection's options, checked here, so a bad one fails at once and names
    fit_messages, not only when a message needs condensing."""
    if options is not None and isinstance(options, BuildOptions):
        default = BuildOptions()
        own = [n for n in _OWN_OPTIONS if getattr(options, n) != getattr(default, n)]
        if own:
            raise InvalidParameterError(
                f"The 'options' parameter of fit_messages sets {own}, which fit_messages "
                "decides itself; pass tokenizer=, query= and reserve= to fit_messages instead.",
                parameter="options",
                value=own,
            )
    return BuildOptions.merge(options, "fit_messages", **keywords)


def _auto_query(parsed: Sequence[_Message]) -> str | None:
    """The last user message's text: the question, and nothing that answers it."""
    last = _last_user(parsed)
    if last is None:
        return None
    text = "\n".join(t.text for t in parsed[last].texts)
    return text if text.strip() else None


def _with_texts(
    messages: Sequence[Mapping[str, Any]], targets: Sequence[tuple[int, _Text]], kept: list[str]
) -> list[dict[str, Any]]:
    out = [copy.deepcopy(dict(m)) for m in messages]
    for (i, t), text in zip(targets, kept, strict=True):
        if t.part is None:
            out[i]["content"] = text
        else:
            parts = list(out[i]["content"])
            parts[t.part] = {**parts[t.part], "text": text}
            out[i]["content"] = parts
    return out


def _plan_history(
    parsed: Sequence[_Message],
    messages: Sequence[Mapping[str, Any]],
    tok: Tokenizer,
    limit: int,
    keep_turns: int,
    keep_system: bool,
    keep_last_user: bool,
) -> HistoryPlan:
    """The history plan, from each message's floor (its condensable texts emptied) and the
    verbatim cost of those texts, as ``compress="auto"`` would choose them."""
    last_user = _last_user(parsed)
    roles = _AUTO_ROLES + (() if keep_system else _SYSTEM_ROLES)
    empty = tok.count("")
    floors: list[int] = []
    condensable: list[int] = []
    for m in parsed:
        if m.role in roles and not _allowed(m, last_user, keep_system, keep_last_user):
            texts = [t for t in m.texts if t.text.strip()]
            cond = sum(t.tokens for t in texts)
            floors.append(m.tokens - cond + empty * len(texts))
            condensable.append(cond)
        else:
            floors.append(m.tokens)
            condensable.append(0)
    return plan_history(
        messages,
        floors,
        condensable,
        limit=limit,
        keep_turns=keep_turns,
        overhead=TOKENS_REPLY_PRIMING,
    )


def _kept_compress(
    compress: CompressSpec, to_input: Callable[[int], int], n_kept: int, n_input: int
) -> CompressSpec:
    """``compress`` for the messages left after the history dropped some: its indices (input
    positions) mapped to kept positions, those of dropped messages left out."""
    if isinstance(compress, str):
        return compress
    if callable(compress):
        return lambda i, m: bool(compress(to_input(i), m))
    position = {to_input(k): k for k in range(n_kept)}
    return [
        position[i % n_input]
        for i in compress
        if -n_input <= i < n_input and i % n_input in position
    ]


def _condense(
    texts: Sequence[_Text],
    values: Sequence[Any],
    room: int,
    select: Callable[[list[str], int], Context],
    count: Callable[[str], int],
) -> tuple[list[str], Context | None, list[str]]:
    """Each text condensed within ``room`` tokens in all: JSON texts (``values`` not None) as
    JSON, each with its share of the room by verbatim size; the others by one selection
    over all of them, with the rest of the room. Also: the selection, and what each JSON text
    left out."""
    total = sum(t.tokens for t in texts) or 1
    kept = [t.text for t in texts]
    omitted = [""] * len(texts)
    left = room
    for k, (t, value) in enumerate(zip(texts, values, strict=True)):
        if value is not None:
            share = room * t.tokens // total
            kept[k], omitted[k] = condense_json(t.text, share, count)
            left -= min(share, count(kept[k]))
    plain = [k for k, v in enumerate(values) if v is None]
    ctx = None
    if plain:
        if left >= 1:
            ctx = select([texts[k].text for k in plain], left)
            for k, doc in zip(plain, ctx.documents, strict=True):
                kept[k] = doc.text
        else:
            for k in plain:
                kept[k] = ""
    return kept, ctx, omitted


def fit_messages(
    messages: Sequence[Mapping[str, Any]],
    budget: int,
    *,
    model: str | None = None,
    tokenizer: str | Tokenizer | None = None,
    compress: CompressSpec = "auto",
    reserve: int = 0,
    query: str | None = "auto",
    selector: str | Selector | Router = DEFAULT_SELECTOR,
    unitizer: str | Unitizer = "sentence",
    representation: str | Representation = "tfidf",
    pin: Pin | Sequence[Pin] | None = None,
    on_pin_overflow: Literal["rank", "error"] = "rank",
    image_tokens: int | None = None,
    keep_system: bool = True,
    keep_last_user: bool = True,
    separator: str = "\n",
    truncate: bool = False,
    selector_options: Mapping[str, Any] | None = None,
    unitizer_options: Mapping[str, Any] | None = None,
    history: Literal["auto", "keep"] = "auto",
    keep_turns: int = 1,
    options: BuildOptions | None = None,
) -> FittedMessages:
    """Condense chat ``messages`` so that their prompt tokens are ``<= budget - reserve``.

    Tokens are counted by :func:`count_message_tokens` (the OpenAI cookbook's formula:
    3 per message, role and content, 1 more for a name, 3 to prime the reply). Messages that
    already fit are returned unchanged. Otherwise the messages chosen by ``compress`` are
    condensed with ONE selection over all of them (``build_context`` over a list of
    documents, one per text, no header), and each gets its own kept sentences back:

    - ``compress="auto"``: the user and tool messages other than the last user message,
      longest first, as many as needed: the rest must fit verbatim, and none of the rest may
      be longer than the average room of the condensed ones (so two long messages share the
      cut). System messages join them when ``keep_system=False``, the last user message when
      ``keep_last_user=False``. A sequence of message indices, or a callable
      ``(index, message) -> bool``, names them instead.
    - System/developer messages and the last user message stay verbatim unless
      ``keep_system``/``keep_last_user`` is False; assistant messages unless named; messages
      with ``tool_calls``/``function_call`` and image parts always.
    - ``query="auto"`` ranks sentences by relevance to the last user message (never to
      anything after it); None uses the centroid of the condensed text; a str is the query.
    - ``pin`` and ``on_pin_overflow`` are ``build_context``'s; a unit id counts the units of
      the condensed texts in message order. ``options`` (a :class:`~budgetctx.BuildOptions`)
      carries the selection's options at once; ``tokenizer``, ``query`` and ``reserve`` stay
      fit_messages' own keywords.
    - ``history="auto"``: a turn starts at a user message and holds the answer, tool calls
      and tool results after it. The last ``keep_turns`` turns and every system message are
      never dropped; older turns are dropped whole, oldest first, until the rest fits by
      condensing the kept text at most 4 times (``budgetctx.chat._history``). A tool call is never
      parted from its result, and the kept history starts on a user message.
      ``result.dropped`` lists the dropped input indices. ``history="keep"`` drops nothing.
    - A condensed text that is a JSON object or array stays valid JSON: whole array items and
      object members are kept, and what was left out is said inside it
      (``budgetctx.chat._json_units``). With the default ``unitizer="sentence"``, Markdown code
      blocks and tables are units of their own, never cut inside.

    BPE counts are not additive, so the result is recounted; if it is over, the content
    budget shrinks by the overshoot and the selection runs again (a few rounds at most, then
    the condensed texts are emptied): ``result.prompt_tokens <= budget - reserve`` always.
    When the messages that stay verbatim alone exceed it, :class:`InputError` says by how much.

    >>> msgs = [
    ...     {"role": "system", "content": "Answer from the note."},
    ...     {"role": "user", "content": "Chest pain at rest. Troponin negative twice. "
    ...      "Diet as tolerated. Follow up with cardiology in two weeks."},
    ...     {"role": "user", "content": "Was troponin negative?"},
    ... ]
    >>> fit = fit_messages(msgs, 40, model="gpt-4o")
    >>> fit.prompt_tokens <= 40, fit.messages[2] == msgs[2], fit.compressed[0].index
    (True, True, 1)
    """
    budget = check_budget("fit_messages", budget)
    opts = _check(
        "fit_messages",
        reserve=reserve,
        model=model,
        tokenizer=tokenizer,
        image_tokens=image_tokens,
        keep_system=keep_system,
        keep_last_user=keep_last_user,
        compress=compress,
        query=query,
        history=history,
        keep_turns=keep_turns,
    )
    build = _selection_options(
        options,
        selector=selector,
        unitizer=unitizer,
        representation=representation,
        separator=separator,
        truncate=truncate,
        selector_options=selector_options,
        unitizer_options=unitizer_options,
        pin=pin,
        on_pin_overflow=on_pin_overflow,
    )
    check_reserve(budget, reserve, owner="fit_messages", what="messages")
    tok = _tokenizer("fit_messages", opts["model"], opts["tokenizer"])
    parsed = _parse(messages, tok, opts["image_tokens"])
    limit = budget - reserve
    before = _total(parsed)
    common: dict[str, Any] = {
        "prompt_tokens_before": before,
        "budget": budget,
        "reserve": reserve,
        "tokenizer": tok.name,
        "exact": is_exact(tok),
    }
    if before <= limit:
        return FittedMessages(
            messages=tuple(copy.deepcopy(dict(m)) for m in messages),
            prompt_tokens=before,
            notes=(f"the messages fit ({before} <= {limit} tokens): sent unchanged",),
            **common,
        )
    if history == "auto":
        if not isinstance(compress, str) and not callable(compress):
            # Checked here too: the messages left after dropping may fit without condensing,
            # and a bad index must fail all the same.
            _check_compress(
                parsed, list(compress), keep_system=keep_system, keep_last_user=keep_last_user
            )
        plan = _plan_history(parsed, messages, tok, limit, keep_turns, keep_system, keep_last_user)
        if plan.droppable:

            def fit_kept(
                kept: list[Mapping[str, Any]], to_input: Callable[[int], int]
            ) -> FittedMessages:
                return fit_messages(
                    kept,
                    budget,
                    tokenizer=tok,
                    compress=_kept_compress(compress, to_input, len(kept), len(messages)),
                    reserve=reserve,
                    query=query,
                    selector=selector,
                    unitizer=unitizer,
                    representation=representation,
                    pin=pin,
                    on_pin_overflow=on_pin_overflow,
                    image_tokens=image_tokens,
                    keep_system=keep_system,
                    keep_last_user=keep_last_user,
                    separator=separator,
                    truncate=truncate,
                    selector_options=selector_options,
                    unitizer_options=unitizer_options,
                    history="keep",
                    options=options,
                )

            result, kept_at, drop = fit_dropping(messages, plan, fit_kept)
            if drop == 0:
                return result
            gone = set(kept_at)
            dropped = tuple(i for i in range(len(messages)) if i not in gone)
            # "the messages fit: sent unchanged" is about the kept ones: not what happened
            later = [n for n in result.notes if not n.startswith("the messages fit")]
            return replace(
                result,
                compressed=tuple(replace(c, index=kept_at[c.index]) for c in result.compressed),
                dropped=dropped,
                prompt_tokens_before=before,
                notes=(dropped_note(drop, len(dropped)), *later),
            )
    chosen = _choose(
        parsed,
        messages,
        compress,
        limit=limit,
        keep_system=keep_system,
        keep_last_user=keep_last_user,
    )
    # Whitespace-only texts have nothing to select: they stay, and count as fixed.
    targets = [(i, t) for i in chosen for t in parsed[i].texts if t.text.strip()]
    image_cost = opts["image_tokens"]

    def recount(kept: list[str]) -> tuple[list[dict[str, Any]], int]:
        out = _with_texts(messages, targets, kept)
        return out, _total(_parse(out, tok, image_cost))

    # JSON texts are condensed as JSON, so that an agent can still parse them.
    values = [parse_json_text(t.text) for _, t in targets]
    # The floor: every condensed text emptied (a JSON text to "{}" or "[]"), counted as such
    # (a tokenizer may count "" > 0).
    empty = ["" if v is None else json_floor(v) for v in values]
    out, fixed = recount(empty)
    if fixed > limit:
        kept_names = ", ".join(str(m.index) for m in parsed if m.index not in chosen)
        raise InputError(
            f"The messages that cannot be condensed need {fixed} tokens, more than the "
            f"{limit} available (budget {budget} - reserve {reserve}); they are messages "
            f"{kept_names or 'none'} plus the chat format's overhead. Raise the budget, lower "
            "the reserve, or let more be condensed (keep_system=False, keep_last_user=False, "
            "or name messages in compress=).",
            parameter="budget",
            value=budget,
        )
    for i, t in targets:
        try:
            validate_text(t.text)
        except InputError as exc:
            where = "content" if t.part is None else f"content part {t.part}"
            raise _input_error(i, f"{where}: {exc}", "fix that text.", exc.value) from exc
    q = _auto_query(parsed) if query == "auto" else query
    notes: list[str] = []
    # What the condensed texts may cost, counted as they are counted in the messages.
    content_budget = limit - (before - sum(t.tokens for _, t in targets))
    if build.unitizer == "sentence":
        build = build.replace(unitizer="blocks")  # sentences, but code blocks and tables whole
    # One document per condensed text, no header: prepared (unitized, counted, represented)
    # once, then selected again at each smaller content budget (the texts do not change).
    build = build.replace(tokenizer=tok, query=q, document_header=None, document_separator="")
    prepared: list[tuple[PreparedDocument, Any]] = []

    def select(texts: list[str], room: int) -> Context:
        if not prepared:
            chosen = _resolve_selector(build.selector, build.selector_options)
            prepared.append((_prepare(texts, **build.prepare_options()), chosen))
        doc, chosen = prepared[0]
        return doc._select(room, build, chosen)

    kept, total, ctx = empty, fixed, None
    omitted = [""] * len(targets)
    ran = False
    for _ in range(_MAX_ROUNDS):
        if content_budget < 1:
            break
        kept, ctx, omitted = _condense(
            [t for _, t in targets],
            values,
            content_budget,
            select,
            tok.count,
        )
        ran = True
        out, total = recount(kept)
        if total <= limit:
            break
        # The selection counted the condensed texts joined; apart, they can cost more.
        notes.append(
            f"recounted {total} > {limit} tokens (the condensed texts cost more apart than "
            f"joined); selected again with a content budget of "
            f"{content_budget - (total - limit)}"
        )
        content_budget -= total - limit
    if total > limit or not ran:
        kept, ctx, omitted = empty, None, [""] * len(targets)
        out, total = recount(kept)  # == fixed <= limit, as checked above
        notes.append("no room left for the condensed messages: their text was emptied")
    plain = [k for k, v in enumerate(values) if v is None]
    provenance = tuple(
        MessageProvenance(
            index=i,
            part=t.part,
            role=parsed[i].role,
            tokens_before=t.tokens,
            tokens_after=tok.count(text),
            units=(
                tuple(u for u in ctx.units if u.document == plain.index(k))
                if ctx is not None and values[k] is None
                else ()
            ),
            selector=(
                "json"
                if values[k] is not None and ran
                else ctx.selector
                if ctx is not None
                else "none"
            ),
            structure="text" if values[k] is None else "json",
            omitted=omitted[k],
        )
        for k, ((i, t), text) in enumerate(zip(targets, kept, strict=True))
    )
    if ctx is not None:
        notes.extend(ctx.notes)
        if ctx.reason:
            notes.append(ctx.reason)
        q = ctx.query
        # a fallback to the centroid is worth a note; relevance not computed (the messages
        # were sent whole, or lead chose) is not
        if q is not None and ctx.relevance_source not in ("query", NOT_ENCODED):
            notes.append(f"relevance: {ctx.relevance_source}")
    return FittedMessages(
        messages=tuple(out),
        prompt_tokens=total,
        compressed=provenance,
        notes=tuple(notes),
        query=q,
        **common,
    )
