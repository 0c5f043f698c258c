"""``build_context``: document + budget -> budgeted context with provenance.

The pipeline validates its arguments, resolves the components once, and hands rendering to
:mod:`budgetctx._render`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from budgetctx._errors import InputError, InvalidParameterError
from budgetctx._render import fit_budget, render, selected_units
from budgetctx._validation import (
    Boolean,
    Constraint,
    FloatMapping,
    InstanceOf,
    Interval,
    NoneOr,
    OneOf,
    Predicate,
    check,
    short_repr,
)
from budgetctx.context import Context, DocumentStats, RouteDecision
from budgetctx.representations import (
    DENSE_LIMIT,
    DenseKernel,
    Representation,
    UnitFeatures,
    build_features,
    get_representation,
)
from budgetctx.router import Router, check_tokenizer, default_router, document_stats
from budgetctx.selectors import SelectionProblem, Selector, get_selector, parse_selector_spec
from budgetctx.tokenizers import Tokenizer, get_tokenizer
from budgetctx.unitizers import Segmentation, Unitizer, get_unitizer

__all__ = ["DEFAULT_SELECTOR", "PreparedDocument", "build_context", "prepare", "validate_text"]

DEFAULT_SELECTOR = "mmr"


_SURROGATE = re.compile("[\ud800-\udfff]")


def validate_text(text: object) -> str:
    """Reject what is not text: bytes, NUL characters (binary data), lone surrogates (text
    that no encoding can write, e.g. from ``json.loads`` of a broken ``\\ud800`` escape)."""
    if isinstance(text, bytes | bytearray):
        raise InputError(
            "text is bytes, not str; decode it first, e.g. data.decode('utf-8'), or use the "
            "CLI, which reports the offset of any undecodable byte.",
            value=type(text).__name__,
        )
    if not isinstance(text, str):
        raise InputError(
            f"text must be a str, got {type(text).__name__}; pass the document's text.",
            value=type(text).__name__,
        )
    nul = text.find("\x00")
    if nul != -1:
        raise InputError(
            f"text contains a NUL character at offset {nul}: it looks like binary data, not a "
            "document. Extract the text first (for a PDF, use a PDF-to-text tool).",
            value=nul,
        )
    bad = _SURROGATE.search(text)
    if bad is not None:
        raise InputError(
            f"text contains a lone surrogate (U+{ord(bad.group()):04X}) at offset {bad.start()}: "
            "it is not valid Unicode and cannot be counted or sent. Fix the source, or decode "
            "it with errors='replace'.",
            value=bad.start(),
        )
    return text


def _name_or(protocol: type) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, str | protocol)


_OPTIONS = {"fix": "pass a mapping of option names to values, e.g. {'lambda_': 0.5}."}
#: The pipeline's parameters, checked at the public boundary with one message template.
_CONSTRAINTS: dict[str, Constraint] = {
    "budget": Interval(int, 1, None, fix="e.g. budget=512."),
    "order": OneOf(("document", "selection"), fix="'document' keeps the input's order."),
    "separator": InstanceOf(str, "a str", fix="e.g. separator='\\n'."),
    "query": NoneOr(InstanceOf(str, "a str")),
    "truncate": Boolean(fix="pass truncate=True to cut one unit at a token boundary."),
    "whole_if_fits": Boolean(),
    "section_weights": Predicate(
        lambda v: v is None or FloatMapping(low=0).accepts(v),
        "None or a mapping of section names to finite floats >= 0",
        fix="e.g. {'PLAN': 2.0}; use 0 to ignore a section.",
    ),
    "dense_limit": Interval(int, 0, None, fix=f"the default is {DENSE_LIMIT}."),
    "selector_options": NoneOr(InstanceOf(Mapping, "a mapping", **_OPTIONS)),
    "unitizer_options": NoneOr(InstanceOf(Mapping, "a mapping", **_OPTIONS)),
    "tokenizer": Predicate(
        _name_or(Tokenizer), "a tokenizer name or a Tokenizer", fix="see list_tokenizers()."
    ),
    "unitizer": Predicate(
        _name_or(Unitizer), "a unitizer name or a Unitizer", fix="see list_unitizers()."
    ),
    "representation": Predicate(
        _name_or(Representation),
        "a representation name or a Representation",
        fix="see list_representations().",
    ),
    "selector": Predicate(
        lambda v: isinstance(v, str | Selector | Router),
        "a selector name, a Selector or a Router",
        fix="e.g. selector='mmr', or 'auto' for the bundled router.",
    ),
}


def _check(owner: str, **values: Any) -> dict[str, Any]:
    return {name: check(owner, name, value, _CONSTRAINTS[name]) for name, value in values.items()}


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000.0, 3)


@dataclass(frozen=True, eq=False)
class PreparedDocument:
    """A document unitized, counted and represented once, ready for any budget and selector.

    Build it with :func:`prepare`; :meth:`select` then costs only the selection itself, which
    is what a budget sweep or a service answering several budgets wants.

    >>> doc = prepare("Chest pain. Troponin negative. Discharged home.")
    >>> [doc.select(b, selector="lead").tokens_used for b in (3, 8, 100)]
    [3, 8, 12]
    """

    text: str
    segmentation: Segmentation
    segment_costs: NDArray[np.int64]
    features: UnitFeatures
    document_tokens: int
    tokenizer: Tokenizer
    separator: str
    query: str | None
    relevance_source: str
    names: dict[str, str]
    params: dict[str, Any]
    timings_ms: dict[str, float]

    @property
    def n_units(self) -> int:
        return len(self.segmentation.units)

    def select(
        self,
        budget: int,
        *,
        selector: str | Selector | Router = DEFAULT_SELECTOR,
        selector_options: Mapping[str, Any] | None = None,
        order: Literal["document", "selection"] = "document",
        truncate: bool = False,
        whole_if_fits: bool = True,
    ) -> Context:
        """The context of at most ``budget`` tokens chosen by ``selector``.

        When the whole document fits, it is sent verbatim; ``whole_if_fits=False`` runs the
        selector anyway (the extractive oracle does, since a subset can score higher).
        """
        opts = _check(
            "PreparedDocument.select",
            budget=budget,
            order=order,
            truncate=truncate,
            whole_if_fits=whole_if_fits,
            selector=selector,
            selector_options=selector_options,
        )
        chosen = _resolve_selector(selector, opts["selector_options"])
        return _select(self, opts["budget"], chosen, order, truncate, whole_if_fits)

    def stats(self, budget: int) -> DocumentStats:
        """Route statistics of this document at ``budget`` (what a router reads).

        >>> s = prepare("Chest pain. Chest pain again. Diet.").stats(5)
        >>> (round(s.phi, 2), s.length)
        (0.4, 9)
        """
        budget = check("PreparedDocument.stats", "budget", budget, _CONSTRAINTS["budget"])
        return _stats(self, _problem(self, budget))


def prepare(
    text: str,
    *,
    tokenizer: str | Tokenizer = "o200k_base",
    unitizer: str | Unitizer = "sentence",
    representation: str | Representation = "tfidf",
    query: str | None = None,
    separator: str = "\n",
    section_weights: Mapping[str, float] | None = None,
    unitizer_options: Mapping[str, Any] | None = None,
    dense_limit: int = DENSE_LIMIT,
) -> PreparedDocument:
    """Unitize ``text``, count every segment with ``tokenizer`` and compute relevance (to
    ``query``, else to the document centroid) and similarities. See :func:`build_context`."""
    opts = _check(
        "prepare",
        tokenizer=tokenizer,
        unitizer=unitizer,
        representation=representation,
        query=query,
        separator=separator,
        section_weights=section_weights,
        unitizer_options=unitizer_options,
        dense_limit=dense_limit,
    )
    return _prepare(text, **opts)


def _prepare(
    text: str,
    *,
    tokenizer: str | Tokenizer,
    unitizer: str | Unitizer,
    representation: str | Representation,
    query: str | None,
    separator: str,
    section_weights: Mapping[str, float] | None,
    unitizer_options: Mapping[str, Any] | None,
    dense_limit: int,
) -> PreparedDocument:
    """:func:`prepare` once its options are checked."""
    t_start = time.perf_counter()
    text = validate_text(text)
    if query is not None and not query.strip():
        query = None
    tok = get_tokenizer(tokenizer)
    unit = get_unitizer(unitizer, **dict(unitizer_options or {}))
    rep = get_representation(representation)
    names = {"tokenizer": tok.name, "unitizer": unit.name, "representation": rep.name}
    params = {"unitizer": unit.params(), "representation": rep.params()}
    timings: dict[str, float] = {}

    t = time.perf_counter()
    seg = unit.unitize(text) if text.strip() else Segmentation(text, (), (), unit.name)
    timings["unitize"] = _ms(t)
    t = time.perf_counter()
    seg_costs = np.asarray(
        tok.count_batch([s.text + separator for s in seg.segments]), dtype=np.int64
    )
    doc_tokens = tok.count(text)
    timings["count"] = _ms(t)
    t = time.perf_counter()
    if seg.units:
        encoded = rep.encode([u.text for u in seg.units], query=query)
        features = build_features(
            encoded,
            sections=[u.section for u in seg.units],
            section_weights=section_weights,
            dense_limit=dense_limit,
        )
    else:
        features = UnitFeatures(
            relevance=np.zeros(0),
            kernel=DenseKernel(np.zeros((0, 0))),
            relevance_source="centroid",
        )
    timings["represent"] = _ms(t)
    timings["prepare"] = _ms(t_start)
    return PreparedDocument(
        text=text,
        segmentation=seg,
        segment_costs=seg_costs,
        features=features,
        document_tokens=doc_tokens,
        tokenizer=tok,
        separator=separator,
        query=query,
        relevance_source=features.relevance_source,
        names=names,
        params=params,
        timings_ms=timings,
    )


def build_context(
    text: str,
    budget: int,
    *,
    tokenizer: str | Tokenizer = "o200k_base",
    unitizer: str | Unitizer = "sentence",
    representation: str | Representation = "tfidf",
    selector: str | Selector | Router = DEFAULT_SELECTOR,
    query: str | None = None,
    separator: str = "\n",
    order: Literal["document", "selection"] = "document",
    truncate: bool = False,
    section_weights: Mapping[str, float] | None = None,
    selector_options: Mapping[str, Any] | None = None,
    unitizer_options: Mapping[str, Any] | None = None,
    dense_limit: int = DENSE_LIMIT,
) -> Context:
    """Select the units of ``text`` that best fit ``budget`` tokens and render them.

    The rendered context, separators included, counted with ``tokenizer``, is never above
    ``budget``. Relevance is measured against ``query`` when given, else the document
    centroid; nothing here ever sees a reference summary. ``selector="auto"`` lets the
    bundled router choose from the budget and the document's statistics (``Context.route``
    says what it chose and why); a router instance (``load_router(path)``) works the same.

    >>> ctx = build_context("CHIEF COMPLAINT: Chest pain. Troponin negative x2.", budget=9,
    ...                     selector="lead")
    >>> ctx.text
    'CHIEF COMPLAINT: Chest pain.'
    >>> ctx.units[0].spans
    ((0, 28),)
    """
    # Validate every argument and resolve the selector before the expensive preparation.
    opts = _check(
        "build_context",
        budget=budget,
        order=order,
        truncate=truncate,
        selector=selector,
        selector_options=selector_options,
        tokenizer=tokenizer,
        unitizer=unitizer,
        representation=representation,
        query=query,
        separator=separator,
        section_weights=section_weights,
        unitizer_options=unitizer_options,
        dense_limit=dense_limit,
    )
    chosen = _resolve_selector(selector, opts.pop("selector_options"))
    budget = opts.pop("budget")
    for name in ("order", "truncate", "selector"):
        del opts[name]
    doc = _prepare(text, **opts)
    return _select(doc, budget, chosen, order, truncate, whole_if_fits=True)


def _resolve_selector(
    selector: str | Selector | Router, options: Mapping[str, Any] | None
) -> Selector | Router:
    """The selector or router of one call: ``"auto"`` is the bundled router (read once per
    process); a router instance is used as given; anything else builds a selector."""
    router: Router | None = None
    if isinstance(selector, str) and selector.strip().lower() == "auto":
        router = default_router()
    elif isinstance(selector, Router):
        router = selector
    if router is None:
        return get_selector(selector, **dict(options or {}))  # type: ignore[arg-type]
    if options:
        raise InvalidParameterError(
            f"selector_options {sorted(options)} cannot be combined with a router; the router "
            "picks the selector and its options. Drop selector_options, or name a selector.",
            parameter="selector_options",
            value=sorted(options),
        )
    return router


def _problem(doc: PreparedDocument, budget: int) -> SelectionProblem:
    return SelectionProblem(
        unit_segments=tuple(u.segments for u in doc.segmentation.units),
        segment_costs=doc.segment_costs,
        features=doc.features,
        # Costs include one separator per segment, the last one too: it is not rendered, but
        # ".\n" is often a single token, so counting it is what keeps repairs rare.
        capacity=budget,
        overlapping=doc.segmentation.overlapping,
    )


def _stats(doc: PreparedDocument, problem: SelectionProblem) -> DocumentStats:
    kernel = doc.features.kernel
    return document_stats(
        relevance=doc.features.relevance,
        unit_costs=problem.unit_costs,
        adjacency=kernel.adjacent() if problem.n > 1 else np.zeros(0),
        document_tokens=doc.document_tokens,
        budget=problem.capacity,
    )


def _route(
    router: Router, doc: PreparedDocument, stats: DocumentStats, budget: int
) -> tuple[Selector, RouteDecision]:
    check_tokenizer(router, doc.tokenizer.name)
    route = router.route(stats, budget)
    if not isinstance(route, RouteDecision) or not isinstance(route.selector, str):
        raise InvalidParameterError(
            f"The router {type(router).__name__} returned {short_repr(route)}, not a "
            "RouteDecision with a selector spec; return RouteDecision('mmr', ...) from route().",
            parameter="selector",
            value=type(router).__name__,
        )
    name, options = parse_selector_spec(route.selector)
    return get_selector(name, **options), route


def _select(
    doc: PreparedDocument,
    budget: int,
    chosen: Selector | Router,
    order: Literal["document", "selection"],
    truncate: bool,
    whole_if_fits: bool,
) -> Context:
    t_start = time.perf_counter()
    problem = _problem(doc, budget)
    stats = _stats(doc, problem)
    route: RouteDecision | None = None
    if isinstance(chosen, Router):
        sel, route = _route(chosen, doc, stats, budget)
    else:
        sel = chosen
    seg, tok, separator = doc.segmentation, doc.tokenizer, doc.separator
    relevance = doc.features.relevance
    timings = {k: v for k, v in doc.timings_ms.items() if k != "prepare"}
    common: dict[str, Any] = {
        "budget": budget,
        "separator": separator,
        "query": doc.query,
        "params": {"selector": sel.params(), **doc.params},
        "relevance_source": doc.relevance_source,
        "stats": stats.to_dict(),
        "route": route,
        "selector": sel.name,
        "document_tokens": doc.document_tokens,
        "n_units": len(seg.units),
        **doc.names,
    }

    def total() -> float:
        return round(doc.timings_ms["prepare"] + _ms(t_start), 3)

    if not seg.units:
        timings["total"] = total()
        return Context(
            text="",
            tokens_used=0,
            units=(),
            excluded=(),
            reason="empty input: the document has no non-whitespace text",
            timings_ms=timings,
            **common,
        )

    if whole_if_fits and doc.document_tokens <= budget:
        # Nothing to cut: send the document verbatim, every unit kept (and credited with
        # the segments it holds first).
        ids = [u.id for u in seg.units]
        _, pieces = render(seg, ids, separator, "document")
        kept = selected_units(
            seg,
            pieces,
            problem.unit_costs,
            relevance,
            kept=ids,
            gains={},
            ranks={u: u for u in ids},
        )
        timings["total"] = total()
        return Context(
            text=doc.text,
            tokens_used=doc.document_tokens,
            units=kept,
            excluded=(),
            reason="document fits the budget: sent whole and verbatim",
            timings_ms=timings,
            **common,
        )

    t = time.perf_counter()
    selection = sel.select(problem)
    timings["select"] = _ms(t)
    t = time.perf_counter()
    out = fit_budget(
        seg, selection, problem, tok, separator=separator, order=order, truncate=truncate
    )
    timings["render"] = _ms(t)
    ranks = {u: k for k, u in enumerate(selection.order)}
    kept_ids = list(out.chosen)
    if out.truncated is not None:
        kept_ids.append(out.truncated[0])
        ranks[out.truncated[0]] = out.truncated[1]
    units = selected_units(
        seg,
        out.pieces,
        problem.unit_costs,
        relevance,
        kept=kept_ids,
        gains=dict(zip(selection.order, selection.gains, strict=True)),
        ranks=ranks,
        truncated=out.truncated[0] if out.truncated is not None else None,
    )
    kept_set = set(kept_ids)
    notes = ([selection.note] if selection.note else []) + list(out.notes)
    timings["total"] = total()
    return Context(
        text=out.text,
        tokens_used=out.tokens,
        units=units,
        excluded=tuple(u.id for u in seg.units if u.id not in kept_set),
        reason=None if units else _empty_reason(seg, tok, budget, truncate),
        notes=tuple(notes),
        timings_ms=timings,
        **common,
    )


def _empty_reason(seg: Segmentation, tok: Tokenizer, budget: int, truncate: bool) -> str:
    smallest = min(tok.count(u.text) for u in seg.units)
    why = (
        f"no unit fits the budget: the smallest unit needs {smallest} tokens and the budget "
        f"is {budget}; "
    )
    if truncate:
        # Said only when it is true: truncation was asked for and could not help.
        return why + (
            "truncate=True kept no part of a unit either (its first characters already need "
            "more tokens than the budget); raise the budget or use a finer unitizer"
        )
    return why + (
        "raise the budget, use a finer unitizer, or pass truncate=True to cut a unit at a "
        "token boundary"
    )
