"""What the three adapters share: one configuration, many texts in, each text's kept part and
its provenance out. Imports no framework.

The adapters render no document header and join two documents' parts with
``separator + document_separator`` (``"\\n\\n"`` by default): that is how LangChain's
stuff chain, LlamaIndex's response synthesizers and a ``join("\\n\\n")`` Jinja template put
documents into a prompt, so what the framework hands to the LLM is exactly the context that
was counted against the budget.

>>> condenser = Condenser("Example", 9, selector="lead")
>>> kept = condenser(["Chest pain. Troponin negative.", "Discharged home."])
>>> [(k.text, k.provenance["spans"]) for k in kept]
[('Chest pain.\\nTroponin negative.', [[0, 11], [12, 30]]), ('', [])]
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from budgetctx._core.validation import Boolean, Predicate, check, short_repr
from budgetctx._errors import InputError, InvalidParameterError
from budgetctx.batch._build import ContextBuilder
from budgetctx.build._documents import Document
from budgetctx.build._options import DEFAULT_SELECTOR, BuildOptions, check_budget
from budgetctx.build._pins import _FLAGS as _PIN_FLAGS
from budgetctx.build._pins import _as_pins, is_pin, pin_regex

__all__ = [
    "DEFAULT_SELECTOR",
    "OPTIONS",
    "PROVENANCE_KEY",
    "Condenser",
    "Kept",
    "pins_from_data",
    "pins_to_data",
]

#: the metadata key under which every adapter stores a document's provenance
PROVENANCE_KEY = "budgetctx"

#: the keyword options of :class:`Condenser`, which every adapter takes as well
OPTIONS = frozenset(
    {
        "tokenizer",
        "selector",
        "unitizer",
        "pins",
        "reserve",
        "drop_empty",
        "separator",
        "document_separator",
    }
)

_DROP_EMPTY = Boolean(fix="False keeps a document with nothing kept, with empty text.")


@dataclass(frozen=True)
class Kept:
    """One input document's part of the context.

    ``text`` is what was counted (``""`` when nothing was kept); ``whole`` says it equals the
    input text; ``span`` is the one ``(start, end)`` slice of the input it equals, if any.
    ``provenance`` is JSON-ready: it goes into the output document's metadata.
    """

    index: int
    text: str
    whole: bool
    span: tuple[int, int] | None
    provenance: dict[str, Any]


class Condenser:
    """One budgetctx configuration, set up once and checked at once, called per request.

    ``owner`` names the adapter in error messages. The components are resolved and a probe
    document condensed here, so that a bad option fails when the adapter is built.
    """

    def __init__(
        self,
        owner: str,
        budget: Any,
        *,
        tokenizer: Any = "o200k_base",
        selector: Any = DEFAULT_SELECTOR,
        unitizer: Any = "sentence",
        pins: Any = None,
        reserve: int = 0,
        drop_empty: bool = True,
        separator: str = "\n",
        document_separator: str = "\n",
    ) -> None:
        self.owner = owner
        self.budget = check_budget(owner, budget)
        self.drop_empty: bool = check(owner, "drop_empty", drop_empty, _DROP_EMPTY)
        self.pins = _check_pins(owner, pins)
        options = BuildOptions(
            tokenizer=tokenizer,
            selector=selector,
            unitizer=unitizer,
            reserve=reserve,
            separator=separator,
            document_separator=document_separator,
            document_header=None,
            owner=owner,
        )
        # Checked and set up once; the probe document cannot hold the pins' sections or ids,
        # so pins join each call.
        self._builder = ContextBuilder(self.budget, options=options)

    def __call__(
        self, texts: Sequence[str | None], *, query: str | None = None, budget: int | None = None
    ) -> list[Kept]:
        """Each text's part of one context of at most ``budget`` tokens, in input order.

        ``None`` stands for a document without text (an image, a blob) and is refused.
        """
        budget = self.budget if budget is None else check_budget(self.owner, budget)
        if not texts:
            return []
        strings: list[str] = []
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise InputError(
                    f"Document {index} has no text (its content is {type(text).__name__}); "
                    f"{self.owner} condenses text only: filter other documents out before it.",
                    value=type(text).__name__,
                )
            strings.append(text)
        # A blank query carries no relevance signal: rank against the documents' centroid.
        if query is not None and not query.strip():
            query = None
        docs = [Document(text=t) for t in strings]
        ctx = self._builder._call(docs, budget, query=query, pin=self.pins)
        kept_units: list[list[Any]] = [[] for _ in strings]
        for unit in ctx.units:
            kept_units[unit.document].append(unit)
        out = []
        for summary in ctx.documents:
            units = kept_units[summary.index]
            spans = [[start, end] for u in units for start, end in u.spans]
            source = strings[summary.index]
            span = None
            if len(spans) == 1 and source[spans[0][0] : spans[0][1]] == summary.text:
                span = (spans[0][0], spans[0][1])
            provenance = {
                "document": summary.index,
                "spans": spans,
                "unit_ids": [u.id for u in units],
                "pinned": [u.id for u in units if u.pinned],
                "tokens": summary.tokens,
                "tokens_kept": summary.tokens_kept,
                "budget": budget,
                "tokenizer": ctx.tokenizer,
                "selector": ctx.selector,
            }
            out.append(
                Kept(
                    index=summary.index,
                    text=summary.text,
                    whole=summary.text == source,
                    span=span,
                    provenance=provenance,
                )
            )
        return out


_PIN = Predicate(
    is_pin,
    "a section name, a regex, a unit id, a callable, or a list of them",
    fix="e.g. pins=['ALLERGIES', pin_regex('(?i)warfarin')].",
)


def _check_pins(owner: str, pins: Any) -> Any:
    """``pins`` unchanged, once each of them is a pin."""
    try:
        items = _as_pins(pins)
    except InvalidParameterError:  # not a pin nor a list: named in our own words below
        items = [pins]
    for item in items:
        check(owner, "pins", item, _PIN)
    return pins


# What a saved regex pin keeps: the flags with the same meaning (and value) in re and regex.
_FLAGS = int(_PIN_FLAGS)


def pins_to_data(owner: str, pins: Any) -> Any:
    """Pins as JSON-ready data: section names and unit ids as they are, a regex (``re`` or
    :func:`~budgetctx.pin_regex`) as ``{"regex": pattern, "flags": flags}``. A callable pin
    cannot be written down."""
    if pins is None:
        return None
    many = isinstance(pins, Sequence) and not isinstance(pins, str)
    items = list(pins) if many else [pins]
    out: list[Any] = []
    for item in items:
        if isinstance(item, re.Pattern | regex.Pattern):
            out.append({"regex": item.pattern, "flags": int(item.flags) & _FLAGS})
        elif isinstance(item, str | int) and not isinstance(item, bool):
            out.append(item)
        else:
            raise InvalidParameterError(
                f"The 'pins' parameter of {owner} cannot be serialised: {_describe(item)} is "
                "not a section name, a unit id or a regex; pin with pin_regex(...) or a "
                "section name to save the component.",
                parameter="pins",
                value=_describe(item),
            )
    return out if many else out[0]


def pins_from_data(data: Any) -> Any:
    """The inverse of :func:`pins_to_data`; a regex comes back from :func:`~budgetctx.pin_regex`
    (the engine with a time limit)."""
    if data is None:
        return None
    many = isinstance(data, list)
    items = data if many else [data]
    out = [
        pin_regex(item["regex"], flags=item.get("flags", 0)) if isinstance(item, Mapping) else item
        for item in items
    ]
    return out if many else out[0]


def _describe(item: Any) -> str:
    if callable(item):
        return f"the callable {getattr(item, '__qualname__', type(item).__name__)}"
    return short_repr(item)


def require_items(owner: str, items: Any, kind: type, example: str) -> None:
    """Refuse, with the fix, items that are not ``kind`` (a plain str where a framework's
    Document is expected would otherwise fail deep inside with an AttributeError)."""
    if isinstance(items, str) or not isinstance(items, Sequence):
        raise InputError(
            f"{owner} takes a list of {kind.__name__} objects, got a "
            f"{type(items).__name__}; pass e.g. [{example}].",
            parameter="documents",
            value=type(items).__name__,
        )
    for index, item in enumerate(items):
        if not isinstance(item, kind):
            raise InputError(
                f"Document {index} is a {type(item).__name__}, not a {kind.__name__}; "
                f"{owner} takes the framework's documents: wrap the text, e.g. {example}.",
                parameter="documents",
                value=type(item).__name__,
            )
