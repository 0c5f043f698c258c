"""The Anthropic Messages API (``POST /v1/messages``) seen as chat messages, and back.

``fit_messages`` works on OpenAI-style chat messages, so a Messages body is viewed as one:
the top-level ``system`` (a string or text blocks) is a system message; each message's text
blocks are text parts of a message with its role; an assistant's ``tool_use`` blocks are its
``tool_calls`` (their ``input`` as JSON arguments, counted, never condensed); each
``tool_result`` block of a user message is a tool message (its text condensed, JSON as JSON).
An image block counts :data:`IMAGE_TOKENS` (Anthropic's figure for the largest image it takes
without resizing: an upper bound); any other block (documents, thinking) is counted as its
JSON and never condensed. Anthropic publishes no offline tokenizer: the count is an estimate.

The fitted texts are written back into a copy of the body, block by block; the blocks of
messages the history strategy dropped are removed (a message left without blocks goes), and
everything else, ``cache_control`` included, is passed through unchanged.

>>> view = to_chat({"system": "Be brief.", "messages": [{"role": "user", "content": "Hi"}]})
>>> [m["role"] for m in view.messages]
['system', 'user']
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from budgetctx import FittedMessages
from budgetctx.serve._problems import bad_parameter

__all__ = ["IMAGE_TOKENS", "ChatView", "apply_fitted", "place_breakpoint", "to_chat"]

#: What one image block is counted as: Anthropic's tokens for a 1092x1092 image (w*h/750),
#: the largest it takes without resizing, so an upper bound for any image it accepts.
IMAGE_TOKENS = 1590

#: Where a chat message's texts came from: ("system", None) or (message index, None) for a
#: string; a list of block indices (None for a non-text part) for content parts;
#: ("tool", message index, block index) for a tool result.
Origin = tuple[Any, ...]


@dataclass(frozen=True)
class ChatView:
    """Chat messages for counting and fitting, the origin of each, and the blocks each one
    stands for (to remove them when it is dropped)."""

    messages: list[dict[str, Any]]
    origin: list[Origin]
    blocks: list[list[tuple[int | None, int | None]]]


def _text_parts(
    where: str, blocks: list[Any]
) -> tuple[list[dict[str, Any]], list[int | None], list[Any]]:
    """Chat content parts for text and image blocks; the other blocks are returned apart."""
    parts: list[dict[str, Any]] = []
    index: list[int | None] = []
    other: list[Any] = []
    for j, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind is None:
            raise bad_parameter(f"{where}[{j}]", block, "a content block", '{"type": "text", ...}.')
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append({"type": "text", "text": block["text"]})
            index.append(j)
        elif kind == "image":
            parts.append({"type": "image_url", "image_url": {"url": "", "detail": "high"}})
            index.append(None)
        else:
            other.append((j, block))
    return parts, index, other


def to_chat(body: Mapping[str, Any]) -> ChatView:
    """The chat view of a Messages request body (its ``system`` and ``messages``)."""
    messages: list[dict[str, Any]] = []
    origin: list[Origin] = []
    blocks: list[list[tuple[int | None, int | None]]] = []
    system = body.get("system")
    if isinstance(system, str):
        messages.append({"role": "system", "content": system})
        origin.append(("system", None))
        blocks.append([])
    elif isinstance(system, list):
        parts, index, other = _text_parts("system", system)
        if other:
            raise bad_parameter("system", other[0][1].get("type"), "text blocks", "or a string.")
        messages.append({"role": "system", "content": parts})
        origin.append(("system", index))
        blocks.append([])
    elif system is not None:
        raise bad_parameter("system", system, "a string or a list of text blocks", "")
    items = body.get("messages")
    if not isinstance(items, list) or not items:
        raise bad_parameter(
            "messages", items, "a non-empty list of messages", 'e.g. [{"role": "user", ...}].'
        )
    for i, msg in enumerate(items):
        role = msg.get("role") if isinstance(msg, Mapping) else None
        if role not in ("user", "assistant"):
            raise bad_parameter(f"messages[{i}].role", role, "'user' or 'assistant'", "")
        content = msg.get("content")
        if isinstance(content, str):
            messages.append({"role": role, "content": content})
            origin.append((i, None))
            blocks.append([(i, None)])
            continue
        if not isinstance(content, list):
            raise bad_parameter(
                f"messages[{i}].content", content, "a string or a list of blocks", ""
            )
        parts, index, other = _text_parts(f"messages[{i}].content", content)
        calls: list[dict[str, Any]] = []
        fixed: list[Any] = []
        for j, block in other:
            kind = block["type"]
            if kind == "tool_result":
                _tool_message(i, j, block, messages, origin, blocks)
            elif kind == "tool_use" and role == "assistant":
                arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
                function = {"name": str(block.get("name", "")), "arguments": arguments}
                calls.append(
                    {"id": str(block.get("id", "")), "type": "function", "function": function}
                )
            else:  # documents, thinking, server tools: counted as JSON, never condensed
                fixed.append(block)
        # what this message stands for: its blocks but the tool results (their own messages)
        mine: list[tuple[int | None, int | None]] = [
            (i, j) for j in range(len(content)) if _kind(content[j]) != "tool_result"
        ]
        if not parts and not calls and not fixed:
            continue
        out: dict[str, Any] = {"role": role, "content": parts if parts else None}
        if calls:
            out["tool_calls"] = calls
        if fixed:
            out["blocks"] = fixed  # counted as its JSON text, as tool_calls are
        if out["content"] is None and not calls:
            out["content"] = ""
        messages.append(out)
        origin.append((i, index))
        blocks.append(mine)
    return ChatView(messages, origin, blocks)


def _kind(block: Any) -> Any:
    return block.get("type") if isinstance(block, Mapping) else None


def _tool_message(
    i: int,
    j: int,
    block: Mapping[str, Any],
    messages: list[dict[str, Any]],
    origin: list[Origin],
    blocks: list[list[tuple[int | None, int | None]]],
) -> None:
    result = block.get("content", "")
    tool_id = str(block.get("tool_use_id", ""))
    if isinstance(result, str):
        messages.append({"role": "tool", "tool_call_id": tool_id, "content": result})
        origin.append(("tool", i, j, None))
    elif isinstance(result, list):
        parts, index, other = _text_parts(f"messages[{i}].content[{j}].content", result)
        if other:
            raise bad_parameter(
                f"messages[{i}].content[{j}].content",
                _kind(other[0][1]),
                "text or image blocks",
                "the proxy cannot count other blocks inside a tool result.",
            )
        messages.append({"role": "tool", "tool_call_id": tool_id, "content": parts or ""})
        origin.append(("tool", i, j, index))
    else:
        raise bad_parameter(
            f"messages[{i}].content[{j}].content", result, "a string or text blocks", ""
        )
    blocks.append([(i, j)])


def apply_fitted(body: Mapping[str, Any], view: ChatView, fitted: FittedMessages) -> dict[str, Any]:
    """A copy of ``body`` with the fitted texts written back and dropped blocks removed."""
    out = dict(body)
    items: list[Any] = copy.deepcopy(list(body["messages"]))
    system: Any = copy.deepcopy(body.get("system"))
    new = dict(zip(fitted.sources, fitted.messages, strict=True))
    for prov in fitted.compressed:
        where = view.origin[prov.index]
        content = new[prov.index]["content"]
        text = content if prov.part is None else content[prov.part]["text"]
        if where[0] == "system":
            if where[1] is None:
                system = text
            else:
                system[where[1][prov.part]]["text"] = text
        elif where[0] == "tool":
            _, i, j, index = where
            block = items[i]["content"][j]
            if index is None:
                block["content"] = text
            else:
                block["content"][index[prov.part]]["text"] = text
        else:
            i, index = where
            if index is None:
                items[i]["content"] = text
            else:
                items[i]["content"][index[prov.part]]["text"] = text
    gone = {b for k in fitted.dropped for b in view.blocks[k]}
    kept: list[Any] = []
    for i, msg in enumerate(items):
        content = msg.get("content")
        if (i, None) in gone or content == "":
            continue  # dropped by the history, or condensed to nothing
        if isinstance(content, list):
            # The API refuses empty text blocks: a text condensed to nothing goes.
            left = [
                b
                for j, b in enumerate(content)
                if (i, j) not in gone and not (_kind(b) == "text" and b.get("text") == "")
            ]
            if not left:
                continue
            msg = {**msg, "content": left}
        kept.append(msg)
    out["messages"] = kept
    if system is not None:
        out["system"] = system
    return out


def _has_cache_control(value: Any) -> bool:
    if isinstance(value, Mapping):
        return "cache_control" in value or any(_has_cache_control(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_cache_control(v) for v in value)
    return False


def place_breakpoint(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` with an ephemeral ``cache_control`` breakpoint on the last block of its last
    message, when the client placed none: the next request of the conversation starts with
    this one (the proxy reuses its condensed prefix byte for byte), so Anthropic serves that
    prefix from its cache. A body that has a breakpoint anywhere is returned unchanged.

    >>> out = place_breakpoint({"messages": [{"role": "user", "content": "Hi"}]})
    >>> out["messages"][0]["content"][0]["cache_control"]
    {'type': 'ephemeral'}
    """
    out = dict(body)
    items = body.get("messages")
    if not isinstance(items, list) or not items or _has_cache_control(body):
        return out
    last = dict(items[-1])
    content = last.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list) or not blocks or not isinstance(blocks[-1], Mapping):
        return out
    blocks = [*blocks[:-1], {**blocks[-1], "cache_control": {"type": "ephemeral"}}]
    out["messages"] = [*items[:-1], {**last, "content": blocks}]
    return out
