"""Pinned content: units that are always kept, whatever the selector thinks of them.

A pin is a section name (``"ALLERGIES"``, matched case-insensitively against the section each
unit's segments belong to), a regular expression over unit text (:func:`pin_regex`, or an
``re.Pattern``), a unit id (``SelectedUnit.id``), or a callable ``(unit) -> bool``.

Regular expressions run on the ``regex`` engine with a time limit: a pattern that backtracks
catastrophically on some note (``(a+)+$``) fails with a clear error instead of hanging a service.
"""

from __future__ import annotations

import re
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Union

from budgetctx._core.validation import short_repr
from budgetctx._errors import BudgetCtxWarning, InputError, InvalidParameterError
from budgetctx.unitizers import Segmentation, Unit
from budgetctx.unitizers._segment import _normalise_heading
from budgetctx.unitizers._sentence import section_labels

if TYPE_CHECKING:
    import regex

__all__ = [
    "PIN_REGEX_TIMEOUT",
    "Pin",
    "check_pins",
    "is_pin",
    "pin_regex",
    "pinned_units",
    "unit_sections",
]

#: Seconds one pin regex may spend over all the units of a call.
PIN_REGEX_TIMEOUT = 1.0

Pin = Union[str, int, "re.Pattern[str]", "regex.Pattern[str]", Callable[[Unit], bool]]

# Flags that mean the same in re and regex.
_FLAGS = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE | re.ASCII


def _is_regex_pattern(value: object) -> bool:
    """Whether ``value`` is a compiled pattern of the ``regex`` module, which is imported only
    by :func:`pin_regex` (~15 ms of a cold start): if it was never imported, nothing can be one
    of its patterns."""
    mod = sys.modules.get("regex")
    return mod is not None and isinstance(value, mod.Pattern)


def pin_regex(pattern: str, *, flags: int = 0) -> regex.Pattern[str]:
    """Compile ``pattern`` for ``pin=``; a pattern that does not compile is named in the error.

    >>> bool(pin_regex("(?i)warfarin").search("On WARFARIN 5 mg"))
    True
    """
    if not isinstance(pattern, str):
        raise InvalidParameterError(
            f"A pin regex must be a str, got {short_repr(pattern)}; "
            "e.g. pin_regex('(?i)warfarin').",
            parameter="pin",
            value=short_repr(pattern),
        )
    import regex

    try:
        return regex.compile(pattern, flags | regex.VERSION0)
    except regex.error as exc:
        raise InvalidParameterError(
            f"The pin regex {pattern!r} does not compile: {exc}. Fix the pattern (escape "
            "special characters with a backslash, e.g. r'\\(INR\\)').",
            parameter="pin",
            value=pattern,
        ) from None


def _as_pins(pin: object) -> list[Any]:
    if pin is None:
        return []
    if isinstance(pin, str | int | re.Pattern) or _is_regex_pattern(pin) or callable(pin):
        return [pin]
    if isinstance(pin, Sequence) and not isinstance(pin, bytes | bytearray):
        return list(pin)
    raise InvalidParameterError(
        f"The 'pin' parameter must be a section name, a regex, a unit id, a callable or a list "
        f"of them. Got {short_repr(pin)} instead; e.g. pin=['ALLERGIES', "
        "pin_regex('(?i)warfarin')].",
        parameter="pin",
        value=short_repr(pin),
    )


def is_pin(value: object) -> bool:
    """Whether ``value`` is one pin: a section name, a regex, a unit id or a callable."""
    if isinstance(value, bool) or value is None:
        return False
    return isinstance(value, str | int | re.Pattern) or _is_regex_pattern(value) or callable(value)


def check_pins(pin: object) -> None:
    """Refuse what cannot be a pin, before any document is seen (what a batch or a service
    checks once at start; whether a pin matches is a per-document question)."""
    for p in _as_pins(pin):
        if not is_pin(p):
            raise InvalidParameterError(
                f"A pin must be a section name, a regex, a unit id or a callable; got "
                f"{short_repr(p)} ({type(p).__name__}). e.g. pin=['ALLERGIES', 3].",
                parameter="pin",
                value=short_repr(p),
            )
        if isinstance(p, re.Pattern):
            pin_regex(p.pattern, flags=p.flags & _FLAGS)


def _search_all(pattern: regex.Pattern[str], units: Sequence[Unit], timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    hits = []
    for u in units:
        left = deadline - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            found = pattern.search(u.text, timeout=left)
        except TimeoutError:
            raise InputError(
                f"The pin regex {pattern.pattern!r} ran for more than {timeout:g} s over "
                f"{len(units)} units (catastrophic backtracking, e.g. nested quantifiers like "
                "'(a+)+'). Simplify the pattern, or pin by section name.",
                parameter="pin",
                value=pattern.pattern,
            ) from None
        if found is not None:
            hits.append(u.id)
    return hits


def unit_sections(seg: Segmentation) -> list[frozenset[str]]:
    """Per unit of one document: the (normalised) sections its segments belong to."""
    seg_labels = section_labels(seg.segments)
    heading: dict[str, str] = {}  # a section names many units: normalise each name once
    out = []
    for u in seg.units:
        if len(u.segments) == 1 and not u.section:  # most units: one sentence, no own section
            lab = seg_labels[u.segments[0]]
            out.append(frozenset((lab,)) if lab else frozenset())
            continue
        labs = {lab for s in u.segments if (lab := seg_labels[s])}
        if u.section:
            name = heading.get(u.section)
            if name is None:
                name = heading[u.section] = _normalise_heading(u.section)
            labs.add(name)
        out.append(frozenset(labs))
    return out


def pinned_units(
    pin: object,
    units: Sequence[Unit],
    *,
    sections: Sequence[frozenset[str]],
    local_units: Sequence[Unit] | None = None,
    timeout: float = PIN_REGEX_TIMEOUT,
) -> list[int]:
    """Ids of the ``units`` that ``pin`` matches, in order.

    ``sections`` are each unit's sections (:func:`unit_sections`, per document: a heading
    never runs on into the next document). ``local_units`` (same order and ids, spans into
    their own documents) are what a callable pin receives. A pin that matches nothing warns
    (a typo in a section name must not pass silently) but is not an error: a note may simply
    lack that section.
    """
    check_pins(pin)
    pins = _as_pins(pin)
    chosen: set[int] = set()
    for p in pins:
        hits: list[int]
        if isinstance(p, int):
            if not 0 <= p < len(units):
                raise InvalidParameterError(
                    f"The pinned unit id {p} does not exist: the documents have "
                    f"{len(units)} units (ids 0 to {len(units) - 1}). Pin an existing id, or "
                    "pin by section or regex.",
                    parameter="pin",
                    value=p,
                )
            hits = [p]
            what = f"unit id {p}"
        elif isinstance(p, str):
            name = _normalise_heading(p)
            hits = [u.id for u, labs in zip(units, sections, strict=True) if name in labs]
            what = f"section {p!r}"
        elif isinstance(p, re.Pattern) or _is_regex_pattern(p):
            pattern = p if _is_regex_pattern(p) else pin_regex(p.pattern, flags=p.flags & _FLAGS)
            hits = _search_all(pattern, units, timeout)
            what = f"regex {p.pattern!r}"
        else:  # a callable: check_pins refused anything else
            view = local_units if local_units is not None else units
            hits = [u.id for u in view if p(u)]
            what = f"callable {getattr(p, '__name__', type(p).__name__)}"
        if not hits:
            warnings.warn(
                f"The pin {what} matched no unit; nothing is pinned for it. Check the "
                "spelling (section names are matched case-insensitively, without the colon).",
                BudgetCtxWarning,
                stacklevel=4,
            )
        chosen.update(hits)
    return sorted(chosen)
