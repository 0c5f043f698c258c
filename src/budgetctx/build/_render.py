"""Rendering a selection: joining segments, repairing the budget, truncating, crediting spans.

A context is the selected segments, each once, joined by the separator, in document order or
in the selector's order. Every rendered piece is credited to exactly one unit: a segment shared
by overlapping units goes to the unit rendered first (lowest rank), and a truncated unit gets
the prefix of the segments no kept unit had rendered. So joining every unit's credited spans in
rendered order with the separator gives the context text exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from budgetctx._core.results import SelectedUnit
from budgetctx.build._documents import DocumentLayout
from budgetctx.selectors import Selection, SelectionProblem
from budgetctx.tokenizers import Tokenizer
from budgetctx.unitizers import Segmentation

__all__ = ["Piece", "Rendered", "fit_budget", "render", "selected_units"]

Order = Literal["document", "selection"]


@dataclass(frozen=True)
class Piece:
    """A character span of the document rendered for unit ``unit`` at selector rank ``rank``."""

    unit: int
    rank: int
    start: int
    end: int


@dataclass(frozen=True)
class Rendered:
    """A rendered context: its text, exact token count and pieces in rendered order.

    ``truncated`` is ``(unit id, rank)`` of the unit cut to fit, if any.
    """

    text: str
    tokens: int
    pieces: tuple[Piece, ...]
    chosen: tuple[int, ...]
    truncated: tuple[int, int] | None = None
    notes: tuple[str, ...] = ()


def render(
    seg: Segmentation,
    chosen: Sequence[int],
    separator: str,
    order: Order,
    partial: Sequence[Piece] = (),
    layout: DocumentLayout | None = None,
) -> tuple[str, tuple[Piece, ...]]:
    """Join the segments covered by ``chosen`` (each once) and ``partial`` with ``separator``
    (and, for several documents, with ``layout``'s headers and document separator)."""
    owner: dict[int, tuple[int, int]] = {}  # segment -> (unit, rank) of its first renderer
    for rank, u in enumerate(chosen):
        for s in seg.units[u].segments:
            owner.setdefault(s, (u, rank))
    pieces = [
        Piece(u, rank, seg.segments[s].start, seg.segments[s].end) for s, (u, rank) in owner.items()
    ]
    pieces += partial
    if order == "document":
        pieces.sort(key=lambda p: (p.start, p.end))
    else:
        pieces.sort(key=lambda p: (p.rank, p.start))
    doc = seg.document
    if layout is not None:
        return layout.join(doc, [(p.start, p.end) for p in pieces]), tuple(pieces)
    return separator.join(doc[p.start : p.end] for p in pieces), tuple(pieces)


def fit_budget(
    seg: Segmentation,
    selection: Selection,
    problem: SelectionProblem,
    tok: Tokenizer,
    *,
    separator: str,
    order: Order,
    truncate: bool,
    layout: DocumentLayout | None = None,
    first: Sequence[int] = (),
) -> Rendered:
    """Render the selection within ``problem.capacity`` tokens, exactly counted.

    BPE is not additive across joins, so a joined text can exceed the sum of its parts:
    the selector's lowest-priority units are dropped until it fits. With ``truncate``, the
    room left is filled with a token-boundary prefix of one more unit. ``first`` (pinned
    units) are rendered before the selection and dropped only after all of it.
    """
    budget = problem.capacity
    notes: list[str] = []
    chosen = [*first, *selection.order]
    text, pieces = render(seg, chosen, separator, order, layout=layout)
    used = tok.count(text)
    while used > budget and chosen:
        dropped = chosen.pop()
        notes.append(f"dropped unit {dropped}: the joined text exceeded the budget")
        text, pieces = render(seg, chosen, separator, order, layout=layout)
        used = tok.count(text)
    truncated: tuple[int, int] | None = None
    if truncate and used < budget:
        cand = _truncation_candidate(selection, chosen, problem.relevance)
        if cand is not None:
            cut = _truncate_into(seg, chosen, cand, separator, order, tok, budget, used, layout)
            if cut is not None:
                text, pieces, used = cut
                truncated = (cand, len(chosen))
                notes.append(f"unit {cand} truncated to fit the budget")
    return Rendered(text, used, pieces, tuple(chosen), truncated, tuple(notes))


def _truncation_candidate(
    selection: Selection, chosen: Sequence[int], relevance: NDArray[np.float64]
) -> int | None:
    if selection.overflow is not None and selection.overflow not in chosen:
        return selection.overflow
    # Otherwise the most relevant unit not kept.
    kept = set(chosen)
    rest = [int(u) for u in np.argsort(-relevance, kind="stable") if int(u) not in kept]
    return rest[0] if rest else None


def _truncate_into(
    seg: Segmentation,
    chosen: Sequence[int],
    cand: int,
    separator: str,
    order: Order,
    tok: Tokenizer,
    budget: int,
    used: int,
    layout: DocumentLayout | None,
) -> tuple[str, tuple[Piece, ...], int] | None:
    """The longest token-boundary prefix of ``cand``'s unseen segments that still fits."""
    covered = {s for u in chosen for s in seg.units[u].segments}
    own = [s for s in seg.units[cand].segments if s not in covered]
    if not own:
        return None
    unit_text = separator.join(seg.segments[s].text for s in own)
    room = budget - used - (tok.count(separator) if chosen and separator else 0)
    rank = len(chosen)
    while room > 0:
        prefix = tok.truncate(unit_text, room)
        if not prefix.strip():
            return None
        spans = _prefix_spans(seg, own, len(prefix), separator)
        partial = [Piece(cand, rank, a, b) for a, b in spans]
        text, pieces = render(seg, chosen, separator, order, partial, layout)
        n = tok.count(text)
        if n <= budget:
            return text, pieces, n
        room -= max(n - budget, 1)
    return None


def _prefix_spans(
    seg: Segmentation, segs: Sequence[int], n_chars: int, separator: str
) -> list[tuple[int, int]]:
    """Spans of the first ``n_chars`` of ``separator.join(segment texts)``; a prefix that
    ends inside a separator keeps only the segments before it."""
    spans = []
    left = n_chars
    for s in segs:
        sg = seg.segments[s]
        length = sg.end - sg.start
        if left >= length:
            spans.append((sg.start, sg.end))
            left -= length + len(separator)
            if left <= 0:
                break
        else:
            if left > 0:
                spans.append((sg.start, sg.start + left))
            break
    return spans


def _score(value: float) -> float | None:
    """A unit's relevance or gain, rounded; None when it was not computed (NaN: the units
    were not encoded, issue 27)."""
    x = float(value)
    return None if math.isnan(x) else round(x, 6)


def selected_units(
    seg: Segmentation,
    pieces: Sequence[Piece],
    unit_costs: NDArray[np.int64],
    relevance: NDArray[np.float64],
    *,
    kept: Sequence[int],
    gains: dict[int, float],
    ranks: dict[int, int],
    truncated: int | None = None,
    layout: DocumentLayout | None = None,
    pinned: frozenset[int] = frozenset(),
) -> tuple[SelectedUnit, ...]:
    """Kept units in document order, each with the spans it was credited in ``pieces``
    (offsets into its own document when ``layout`` lays out several)."""
    credited: dict[int, list[tuple[int, int]]] = {u: [] for u in kept}
    for p in pieces:
        credited[p.unit].append((p.start, p.end))
    doc = seg.document
    out = []
    for uid in sorted(kept):
        unit = seg.units[uid]
        spans = tuple(credited[uid])
        text = " ".join(doc[a:b] for a, b in spans)
        unit_spans = unit.spans
        where: dict[str, Any] = {}
        if layout is not None:
            d = layout.document_of(unit.spans[0][0])
            spans = tuple(layout.local(s) for s in spans)
            unit_spans = tuple(layout.local(s) for s in unit_spans)
            where = {"document": d, "document_id": layout.documents[d].id}
        out.append(
            SelectedUnit(
                id=uid,
                spans=spans,
                text=text,
                tokens=int(unit_costs[uid]),
                relevance=_score(relevance[uid]),
                gain=_score(gains.get(uid, 0.0)),
                rank=ranks[uid],
                section=unit.section,
                truncated=uid == truncated,
                unit_spans=unit_spans,
                pinned=uid in pinned,
                speaker=unit.speaker,
                **where,
            )
        )
    return tuple(out)
