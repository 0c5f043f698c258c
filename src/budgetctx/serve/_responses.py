"""The Responses API's ``instructions`` and ``input`` seen as chat messages, and back.

``fit_messages`` works on chat messages, so a ``POST /v1/responses`` body is viewed as one:
``instructions`` is a system message, a string ``input`` a user message, a message item keeps
its role (``input_text``/``output_text`` parts become text parts, ``input_image`` parts image
parts), a ``function_call_output`` is a tool message, and any other item (a function call, a
reasoning item) is an assistant message holding its JSON, counted and never condensed.
OpenAI publishes no token rule for the Responses API: the count is the chat formula's, an
estimate. The condensed texts are written back into a copy of the body, everything else in it
unchanged.

>>> view = to_messages({"instructions": "Be brief.", "input": "Chest pain. Troponin negative."})
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

__all__ = ["ResponsesView", "apply_fitted", "to_messages"]

_TEXT_PARTS = ("input_text", "output_text")


@dataclass(frozen=True)
class ResponsesView:
    """Chat messages for counting and fitting, and where each one's text came from:
    ``(item index or None, field)`` with field ``instructions``, ``input``, ``content``,
    ``parts``, ``output`` or ``fixed``."""

    messages: list[dict[str, Any]]
    origin: list[tuple[int | None, str]]


def to_messages(body: Mapping[str, Any]) -> ResponsesView:
    """The chat view of a Responses request body (its ``instructions`` and ``input``)."""
    messages: list[dict[str, Any]] = []
    origin: list[tuple[int | None, str]] = []
    instructions = body.get("instructions")
    if instructions is not None:
        if not isinstance(instructions, str):
            raise bad_parameter("instructions", instructions, "a string", "or leave it out.")
        messages.append({"role": "system", "content": instructions})
        origin.append((None, "instructions"))
    items = body.get("input")
    if isinstance(items, str):
        messages.append({"role": "user", "content": items})
        origin.append((None, "input"))
        return ResponsesView(messages, origin)
    if not isinstance(items, list):
        raise bad_parameter(
            "input", items, "a string or a list of input items", 'e.g. "input": "Summarise ...".'
        )
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise bad_parameter(f"input[{i}]", item, "an object", 'e.g. {"role": "user", ...}.')
        kind = item.get("type", "message")
        if kind == "message" and "role" in item:
            content = item.get("content")
            if isinstance(content, list):
                parts = [_part(i, j, p) for j, p in enumerate(content)]
                messages.append({"role": item["role"], "content": parts})
                origin.append((i, "parts"))
            else:
                messages.append({"role": item["role"], "content": content})
                origin.append((i, "content"))
        elif kind == "function_call_output" and isinstance(item.get("output"), str):
            messages.append({"role": "tool", "content": item["output"]})
            origin.append((i, "output"))
        else:
            text = json.dumps(item, ensure_ascii=False, separators=(",", ":"))
            messages.append({"role": "assistant", "content": text})
            origin.append((i, "fixed"))
    return ResponsesView(messages, origin)


def _part(i: int, j: int, part: Any) -> dict[str, Any]:
    kind = part.get("type") if isinstance(part, Mapping) else None
    if kind in _TEXT_PARTS:
        return {"type": "text", "text": part.get("text")}
    if kind == "input_image":
        image = {"url": part.get("image_url") or part.get("file_id") or ""}
        if "detail" in part:
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    raise bad_parameter(
        f"input[{i}].content[{j}]",
        kind,
        "an input_text, output_text or input_image part",
        "the proxy cannot count other parts (files, audio); send them to the model directly.",
    )


def apply_fitted(
    body: Mapping[str, Any], view: ResponsesView, fitted: FittedMessages
) -> dict[str, Any]:
    """A copy of ``body`` whose condensed texts are the fitted messages'."""
    out = dict(body)
    items = copy.deepcopy(body.get("input"))
    fitted_at = dict(zip(fitted.sources, fitted.messages, strict=True))
    for prov in fitted.compressed:
        index, where = view.origin[prov.index]
        new = fitted_at[prov.index]["content"]
        if where == "input":
            items = new
        elif where == "instructions":
            out["instructions"] = new
        elif where in ("content", "output") and isinstance(items, list) and index is not None:
            items[index] = {**items[index], where: new}
        elif where == "parts" and isinstance(items, list) and index is not None:
            if prov.part is None:  # a parts message is condensed part by part
                continue
            parts = list(items[index]["content"])
            parts[prov.part] = {**parts[prov.part], "text": new[prov.part]["text"]}
            items[index] = {**items[index], "content": parts}
    if isinstance(items, list) and fitted.dropped:
        # whole turns the history strategy dropped (never the instructions)
        gone = {view.origin[k][0] for k in fitted.dropped}
        items = [item for i, item in enumerate(items) if i not in gone]
    out["input"] = items
    return out
