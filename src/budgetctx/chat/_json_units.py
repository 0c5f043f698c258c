"""JSON texts condensed as JSON: array items and object members are the units, never cut.

A tool result is usually JSON, and an agent parses it: sentence selection would turn it into
text that no longer parses. So a text that is a JSON object or array is condensed
structurally, to a value that is still valid JSON with the same shape:

1. every array keeps its first ``k`` items (the largest ``k`` that fits; APIs put the best
   results first), then, if that is not enough,
2. every string longer than ``n`` characters is cut to ``n`` and ends with an ellipsis, then
3. every object keeps its first ``m`` members.

What was dropped is said in the JSON itself, where a model reads it: a member
``"_budgetctx_omitted"`` of a top-level object, or a last string item of a top-level array,
e.g. ``"budgetctx omitted: 37 of 42 items of $.results"``. When not even the empty skeleton
fits, the text becomes ``{}`` or ``[]``, still JSON.

>>> from budgetctx.tokenizers import get_tokenizer
>>> tok = get_tokenizer("o200k_base")
>>> items = ", ".join(f'{{"id": {i}, "name": "item {i}"}}' for i in range(40))
>>> text = '{"results": [' + items + "]}"
>>> out, note = condense_json(text, 60, tok.count)
>>> import json; data = json.loads(out)
>>> len(data["results"]) < 40, data["_budgetctx_omitted"].startswith("budgetctx omitted")
(True, True)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["NOTE_KEY", "condense_json", "json_floor", "parse_json_text"]

#: The member that tells a model what was left out of a condensed top-level object.
NOTE_KEY = "_budgetctx_omitted"
_ELLIPSIS = "…"
_SEPARATORS = (", ", ": ")


def parse_json_text(text: str) -> Any | None:
    """The JSON object or array ``text`` holds, or None (a scalar or not JSON)."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict | list) else None


def json_floor(value: Any) -> str:
    """The smallest valid text of the same kind: ``{}`` or ``[]``."""
    return "{}" if isinstance(value, dict) else "[]"


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=_SEPARATORS)


class _Shrink:
    """One shrinking of a value by the three limits, recording what it left out."""

    def __init__(self, items: int | None, chars: int | None, members: int | None) -> None:
        self.items, self.chars, self.members = items, chars, members
        self.omitted_items: list[str] = []
        self.cut_strings = 0
        self.omitted_members = 0

    def apply(self, value: Any, path: str) -> Any:
        if isinstance(value, list):
            keep = value if self.items is None else value[: self.items]
            if len(keep) < len(value):
                self.omitted_items.append(
                    f"{len(value) - len(keep)} of {len(value)} items of {path}"
                )
            return [self.apply(v, f"{path}[{i}]") for i, v in enumerate(keep)]
        if isinstance(value, dict):
            members = list(value.items())
            keep_m = members if self.members is None else members[: self.members]
            self.omitted_members += len(members) - len(keep_m)
            return {k: self.apply(v, f"{path}.{k}") for k, v in keep_m}
        if isinstance(value, str) and self.chars is not None and len(value) > self.chars:
            self.cut_strings += 1
            return value[: self.chars] + _ELLIPSIS
        return value

    def note(self) -> str:
        parts = list(self.omitted_items[:5])
        if len(self.omitted_items) > 5:
            parts.append(f"items of {len(self.omitted_items) - 5} more arrays")
        if self.cut_strings:
            parts.append(f"the end of {self.cut_strings} long strings")
        if self.omitted_members:
            parts.append(f"{self.omitted_members} object members")
        return "budgetctx omitted: " + "; ".join(parts) if parts else ""


def _render(value: Any, shrink: _Shrink) -> tuple[str, str]:
    out = shrink.apply(value, "$")
    note = shrink.note()
    if note:
        out = {**out, NOTE_KEY: note} if isinstance(out, dict) else [*out, note]
    return _dump(out), note


def _max_depth_len(value: Any, kind: str) -> int:
    """The longest array (``items``), string (``chars``) or object (``members``) in value."""
    best = 0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            best = max(best, len(v)) if kind == "items" else best
            stack.extend(v)
        elif isinstance(v, dict):
            best = max(best, len(v)) if kind == "members" else best
            stack.extend(v.values())
        elif isinstance(v, str) and kind == "chars":
            best = max(best, len(v))
    return best


def _largest(fits: Callable[[int], bool], high: int) -> int | None:
    """The largest ``x`` in ``[0, high]`` with ``fits(x)`` (counts grow with ``x``), or None."""
    if not fits(0):
        return None
    lo, hi = 0, high
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def condense_json(text: str, budget: int, count: Callable[[str], int]) -> tuple[str, str]:
    """``text`` (a JSON object or array) shrunk to at most ``budget`` tokens by ``count``,
    still valid JSON, and a note of what was left out ("" when it was kept whole)."""
    value = parse_json_text(text)
    if value is None:
        raise ValueError("condense_json needs a JSON object or array")
    if count(text) <= budget:
        return text, ""
    # Each stage searches one limit with the earlier ones at their tightest, so the kept
    # value is the most of it the budget allows in this order: items, strings, members.
    stages: list[tuple[str, Callable[[int], _Shrink]]] = [
        ("items", lambda x: _Shrink(x, None, None)),
        ("chars", lambda x: _Shrink(0, x, None)),
        ("members", lambda x: _Shrink(0, 0, x)),
    ]
    for kind, make in stages:
        high = _max_depth_len(value, kind)

        def fits(x: int, make: Callable[[int], _Shrink] = make) -> bool:
            return count(_render(value, make(x))[0]) <= budget

        best = _largest(fits, high)
        if best is not None:
            return _render(value, make(best))
    floor = json_floor(value)
    return floor, f"budgetctx omitted: everything ({len(text)} characters)"
