"""Request bodies of ``/v1/context`` and ``/v1/contexts`` -> ``build_context`` arguments.

JSON has no regex type, so a pin is written ``"PLAN"`` (a section name), ``{"regex": "..."}``
or ``{"section": "PLAN"}``, or an int (a unit id); ``pin_sections`` (names) and ``pin_regex``
(patterns) are lists of one kind, as the viewer page sends them. Everything else is passed to
the library unchanged, which checks it and answers in its own words. A request may not name a
tokenizer file: only registered names and the names the configuration maps to files. Nor may it
set ``dense_limit``, which sizes the selection's memory: that is the server's to choose.

>>> req = parse_context_request({"text": "Chest pain.", "budget": 5, "selector": "lead"},
...                             max_documents=4)
>>> req.budget, req.options["selector"], req.n_documents
(5, 'lead', 1)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from budgetctx import Document, pin_regex
from budgetctx.serve._problems import ApiError, bad_parameter

__all__ = ["ContextRequest", "parse_context_request"]

#: ``build_context`` keyword options a request may set (besides text/documents and budget).
OPTIONS = (
    "tokenizer",
    "unitizer",
    "representation",
    "selector",
    "query",
    "separator",
    "order",
    "truncate",
    "section_weights",
    "selector_options",
    "unitizer_options",
    "pin",
    "on_pin_overflow",
    "reserve",
    "document_header",
    "document_separator",
    "profile",
)
_PIN_LISTS = ("pin_sections", "pin_regex")
_FIELDS = ("text", "documents", "budget", *OPTIONS, *_PIN_LISTS)


@dataclass(frozen=True)
class ContextRequest:
    """One parsed request: the documents (a str or Documents), the budget, the options."""

    documents: Any
    budget: Any
    options: dict[str, Any]
    n_documents: int


def parse_context_request(body: Any, *, max_documents: int) -> ContextRequest:
    """Check the body's shape; values are left for ``build_context`` to check."""
    if not isinstance(body, Mapping):
        raise ApiError(
            400,
            f"The request body must be a JSON object, got a JSON {_json_type(body)}; send "
            '{"text": "...", "budget": 512}.',
            kind="not_object",
        )
    unknown = [k for k in body if k not in _FIELDS]
    if unknown:
        raise bad_parameter(
            str(unknown[0])[:40],
            unknown[0],
            "a known field",
            "valid fields are " + ", ".join(_FIELDS) + ".",
        )
    if "budget" not in body:
        raise bad_parameter("budget", None, "an int > 0", 'add e.g. "budget": 512.')
    has_text, has_docs = "text" in body, "documents" in body
    if has_text == has_docs:
        raise bad_parameter(
            "text",
            None,
            "given, or 'documents', but not both",
            'send {"text": "..."} for one document or {"documents": [...]} for several.',
        )
    options = {k: body[k] for k in OPTIONS if k in body}
    pins = _pins(body["pin"]) if "pin" in body else []
    for name in _PIN_LISTS:
        if name in body:
            items = body[name]
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise bad_parameter(name, items, "a list of strings", 'e.g. ["PLAN"].')
            key = "section" if name == "pin_sections" else "regex"
            pins += _pins([{key: item} for item in items])
    if pins:
        options["pin"] = pins
    if has_text:
        return ContextRequest(body["text"], body["budget"], options, 1)
    docs = body["documents"]
    if not isinstance(docs, list):
        raise bad_parameter(
            "documents",
            docs,
            "a list of strings or {text, id, metadata} objects",
            'e.g. [{"text": "...", "id": "note-1"}].',
        )
    if len(docs) > max_documents:
        raise ApiError(
            422,
            f"The request has {len(docs)} documents; this server takes at most {max_documents} "
            "per request. Split it into several requests, or raise limits.max_documents.",
            parameter="documents",
            value=len(docs),
            kind="too_many_documents",
        )
    return ContextRequest(_documents(docs), body["budget"], options, len(docs))


def _documents(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            out.append(item)
            continue
        if (
            not isinstance(item, Mapping)
            or "text" not in item
            or set(item)
            - {
                "text",
                "id",
                "metadata",
            }
        ):
            raise bad_parameter(
                f"documents[{i}]",
                item,
                "a string or an object with 'text' and optional 'id' and 'metadata'",
                'e.g. {"text": "...", "id": "note-1"}.',
            )
        out.append(Document(text=item["text"], id=item.get("id"), metadata=item.get("metadata")))
    return out


def _pins(value: Any) -> list[Any]:
    items = value if isinstance(value, list) else [value]
    pins: list[Any] = []
    for item in items:
        if isinstance(item, Mapping) and set(item) == {"regex"}:
            pins.append(pin_regex(item["regex"]))
        elif isinstance(item, Mapping) and set(item) == {"section"}:
            pins.append(item["section"])
        elif isinstance(item, Mapping):
            raise bad_parameter(
                "pin",
                item,
                'a section name, a unit id, {"regex": "..."} or {"section": "..."}',
                'e.g. ["PLAN", {"regex": "troponin"}].',
            )
        else:
            pins.append(item)  # a str or an int; the library checks the rest
    return pins


def _json_type(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )
