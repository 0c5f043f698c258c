"""``build_context``: document + budget -> budgeted context with provenance."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np
from numpy.typing import NDArray

from budgetctx._errors import InputError, InvalidParameterError
from budgetctx.context import Context, SelectedUnit
from budgetctx.representations import (
    DENSE_LIMIT,
    DenseKernel,
    Representation,
    UnitFeatures,
    build_features,
    get_representation,
)
from budgetctx.router import (
    BudgetRouter,
    FeatureRouter,
    RouteDecision,
    Router,
    check_tokenizer,
    default_router,
    document_stats,
)
from budgetctx.selectors import (
    Selection,
    SelectionProblem,
    Selector,
    get_selector,
    parse_selector_spec,
)
from budgetctx.tokenizers import Tokenizer, get_tokenizer
from budgetctx.unitizers import Segmentation, Unitizer, get_unitizer

__all__ = ["DEFAULT_SELECTOR", "PreparedDocument", "build_context", "prepare", "validate_text"]

DEFAULT_SELECTOR = "mmr"


def validate_text(text: object) -> str:
    """Reject what is not text: bytes, NUL characters (binary data)."""
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
    return text


def _validate_budget(budget: object) -> int:
    if isinstance(budget, bool) or not isinstance(budget, int | np.integer):
        raise InvalidParameterError(
            f"budget must be an integer number of tokens, got {budget!r}; e.g. budget=512.",
            parameter="budget",
            value=budget,
        )
    if budget <= 0:
        raise InvalidParameterError(
            f"budget must be > 0 tokens, got {budget}; e.g. budget=512.",
            parameter="budget",
            value=int(budget),
        )
    return int(budget)


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
        return _select(self, budget, selector, selector_options, order, truncate, whole_if_fits)


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
    t_start = time.perf_counter()
    text = validate_text(text)
    if not isinstance(separator, str):
        raise InvalidParameterError(
            f"separator must be a str, got {type(separator).__name__}; e.g. separator='\\n'.",
            parameter="separator",
            value=repr(separator),
        )
    if query is not None and not isinstance(query, str):
        raise InvalidParameterError(
            f"query must be a str or None, got {type(query).__name__}.",
            parameter="query",
            value=type(query).__name__,
        )
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
    # Validate the cheap arguments before the expensive preparation.
    _validate_budget(budget)
    _validate_order(order)
    sel: str | Selector | Router = selector
    if _as_router(selector) is None:
        sel = get_selector(cast("str | Selector", selector), **dict(selector_options or {}))
        selector_options = None
    doc = prepare(
        text,
        tokenizer=tokenizer,
        unitizer=unitizer,
        representation=representation,
        query=query,
        separator=separator,
        section_weights=section_weights,
        unitizer_options=unitizer_options,
        dense_limit=dense_limit,
    )
    return doc.select(
        budget, selector=sel, selector_options=selector_options, order=order, truncate=truncate
    )


def _as_router(selector: object) -> Router | None:
    """``"auto"`` is the bundled router; a router instance is used as given."""
    if isinstance(selector, str) and selector.lower() == "auto":
        return default_router()
    if isinstance(selector, BudgetRouter | FeatureRouter):
        return selector
    return None


def _validate_order(order: object) -> None:
    if order not in ("document", "selection"):
        raise InvalidParameterError(
            f"order must be 'document' or 'selection', got {order!r}.",
            parameter="order",
            value=order,
        )


def _select(
    doc: PreparedDocument,
    budget: int,
    selector: str | Selector | Router,
    selector_options: Mapping[str, Any] | None,
    order: Literal["document", "selection"],
    truncate: bool,
    whole_if_fits: bool = True,
) -> Context:
    t_start = time.perf_counter()
    budget = _validate_budget(budget)
    _validate_order(order)
    stats = document_stats(doc, budget)
    route: RouteDecision | None = None
    router = _as_router(selector)
    if router is not None:
        if selector_options:
            raise InvalidParameterError(
                "selector_options cannot be combined with a router; the router picks the "
                "selector and its options.",
                parameter="selector_options",
                value=sorted(selector_options),
            )
        check_tokenizer(router, doc.tokenizer.name)
        route = router.route(stats, budget)
        name, options = parse_selector_spec(route.selector)
        sel = get_selector(name, **options)
    else:
        sel = get_selector(cast("str | Selector", selector), **dict(selector_options or {}))
    seg, tok, separator = doc.segmentation, doc.tokenizer, doc.separator
    seg_costs, features = doc.segment_costs, doc.features
    relevance = features.relevance
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
        **doc.names,
    }

    def total() -> float:
        return round(doc.timings_ms["prepare"] + _ms(t_start), 3)

    if not seg.units:
        timings["total"] = total()
        return Context(
            text="",
            tokens_used=0,
            document_tokens=doc.document_tokens,
            units=(),
            excluded=(),
            n_units=0,
            reason="empty input: the document has no non-whitespace text",
            timings_ms=timings,
            **common,
        )

    if whole_if_fits and doc.document_tokens <= budget:
        # Nothing to cut: send the document verbatim, every unit kept.
        kept = [_selected(seg, u.id, seg_costs, relevance, 0.0, rank=u.id) for u in seg.units]
        timings["total"] = total()
        return Context(
            text=doc.text,
            tokens_used=doc.document_tokens,
            document_tokens=doc.document_tokens,
            units=tuple(kept),
            excluded=(),
            n_units=len(seg.units),
            reason="document fits the budget: sent whole and verbatim",
            timings_ms=timings,
            **common,
        )

    problem = SelectionProblem(
        unit_segments=tuple(u.segments for u in seg.units),
        segment_costs=seg_costs,
        features=features,
        # Costs include one separator per segment, the last one too: it is not rendered, but
        # ".\n" is often a single token, so counting it is what keeps repairs rare.
        capacity=budget,
        overlapping=seg.overlapping,
    )
    t = time.perf_counter()
    selection = sel.select(problem)
    timings["select"] = _ms(t)
    t = time.perf_counter()
    notes: list[str] = []
    chosen = list(selection.order)
    rendered, _ = _render(seg, chosen, None, separator, order)
    used = tok.count(rendered)
    while used > budget and chosen:
        # BPE is not additive across joins: drop the selector's lowest-priority unit.
        dropped = chosen.pop()
        notes.append(f"dropped unit {dropped}: the joined text exceeded the budget")
        rendered, _pieces = _render(seg, chosen, None, separator, order)
        used = tok.count(rendered)

    truncated: tuple[int, int] | None = None  # (unit id, characters kept)
    if truncate and used < budget:
        cand = _truncation_candidate(selection, chosen, problem)
        if cand is not None:
            truncated, rendered, used = _truncate_into(
                seg, chosen, cand, separator, order, tok, budget, rendered, used
            )
            if truncated is not None:
                notes.append(f"unit {cand} truncated to fit the budget")
    timings["render"] = _ms(t)

    gain_of = dict(zip(selection.order, selection.gains, strict=True))
    rank_of = {u: k for k, u in enumerate(selection.order)}
    kept_ids = sorted(set(chosen) | ({truncated[0]} if truncated else set()))
    kept = []
    for uid in kept_ids:
        if truncated is not None and uid == truncated[0]:
            kept.append(
                _selected(
                    seg,
                    uid,
                    seg_costs,
                    relevance,
                    0.0,
                    rank=len(chosen),
                    keep_chars=truncated[1],
                    separator=separator,
                )
            )
        else:
            kept.append(_selected(seg, uid, seg_costs, relevance, gain_of[uid], rank=rank_of[uid]))
    kept_set = set(kept_ids)
    reason = None
    if not kept:
        smallest = min(tok.count(u.text) for u in seg.units)
        reason = (
            f"no unit fits the budget: the smallest unit needs {smallest} tokens and the budget "
            f"is {budget}; raise the budget, use a finer unitizer, or pass truncate=True to "
            "cut a unit at a token boundary"
        )
    if selection.note:
        notes.insert(0, selection.note)
    timings["total"] = total()
    return Context(
        text=rendered,
        tokens_used=used,
        document_tokens=doc.document_tokens,
        units=tuple(kept),
        excluded=tuple(u.id for u in seg.units if u.id not in kept_set),
        n_units=len(seg.units),
        reason=reason,
        notes=tuple(notes),
        timings_ms=timings,
        **common,
    )


def _render(
    seg: Segmentation,
    chosen: Sequence[int],
    partial: tuple[int, list[tuple[int, int]]] | None,
    separator: str,
    order: str,
) -> tuple[str, list[tuple[int, int]]]:
    """Join the segments covered by ``chosen`` (each once) with ``separator``.

    ``partial`` adds the pieces of a truncated unit: (rank, spans).
    """
    first_rank: dict[int, int] = {}
    for rank, u in enumerate(chosen):
        for s in seg.units[u].segments:
            first_rank.setdefault(s, rank)
    pieces = [(first_rank[s], seg.segments[s].start, seg.segments[s].end) for s in first_rank]
    if partial is not None:
        rank, spans = partial
        pieces += [(rank, a, b) for a, b in spans]
    if order == "document":
        pieces.sort(key=lambda p: (p[1], p[2]))
    else:
        pieces.sort(key=lambda p: (p[0], p[1]))
    doc = seg.document
    spans = [(a, b) for _, a, b in pieces]
    return separator.join(doc[a:b] for a, b in spans), spans


def _truncation_candidate(
    selection: Selection, chosen: list[int], problem: SelectionProblem
) -> int | None:
    if selection.overflow is not None and selection.overflow not in chosen:
        return selection.overflow
    # Otherwise the most relevant unit not kept.
    rest = [u for u in np.argsort(-problem.relevance, kind="stable") if int(u) not in chosen]
    return int(rest[0]) if rest else None


def _truncate_into(
    seg: Segmentation,
    chosen: list[int],
    cand: int,
    separator: str,
    order: str,
    tok: Tokenizer,
    budget: int,
    rendered: str,
    used: int,
) -> tuple[tuple[int, int] | None, str, int]:
    covered = {s for u in chosen for s in seg.units[u].segments}
    own = [s for s in seg.units[cand].segments if s not in covered]
    if not own:
        return None, rendered, used
    unit_text = separator.join(seg.segments[s].text for s in own)
    room = budget - used - (tok.count(separator) if chosen and separator else 0)
    while room > 0:
        prefix = tok.truncate(unit_text, room)
        if not prefix.strip():
            return None, rendered, used
        spans = _prefix_spans(seg, own, len(prefix), len(separator))
        text, _ = _render(seg, chosen, (len(chosen), spans), separator, order)
        n = tok.count(text)
        if n <= budget:
            return (cand, len(prefix)), text, n
        room -= max(n - budget, 1)
    return None, rendered, used


def _prefix_spans(
    seg: Segmentation, segs: list[int], n_chars: int, sep_len: int
) -> list[tuple[int, int]]:
    spans = []
    left = n_chars
    for s in segs:
        sg = seg.segments[s]
        length = sg.end - sg.start
        if left >= length:
            spans.append((sg.start, sg.end))
            left -= length + sep_len
            if left <= 0:
                break
        else:
            if left > 0:
                spans.append((sg.start, sg.start + left))
            break
    return spans


def _selected(
    seg: Segmentation,
    uid: int,
    seg_costs: np.ndarray,
    relevance: np.ndarray,
    gain: float,
    *,
    rank: int,
    keep_chars: int | None = None,
    separator: str = "\n",
) -> SelectedUnit:
    unit = seg.units[uid]
    spans = list(unit.spans)
    truncated = keep_chars is not None
    if keep_chars is not None:
        spans = _prefix_spans(seg, list(unit.segments), keep_chars, len(separator))
    doc = seg.document
    return SelectedUnit(
        id=uid,
        spans=tuple(spans),
        text=" ".join(doc[a:b] for a, b in spans),
        tokens=int(seg_costs[list(unit.segments)].sum()),
        relevance=round(float(relevance[uid]), 6),
        gain=round(float(gain), 6),
        rank=rank,
        section=unit.section,
        truncated=truncated,
    )
