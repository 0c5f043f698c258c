"""Several documents under one budget: the input type and how their units become one problem.

Each document is unitized on its own (units never cross documents); the segmentations are then
laid side by side in one *combined* segmentation whose text is exactly what would be sent if
every document fitted: ``header_0 + sep + doc_0 + sep + docsep + header_1 + sep + doc_1 ...``.
Units keep their offsets into that combined text while selecting and rendering, and are mapped
back to offsets into their own document for provenance.

A document's header costs tokens once, whichever of its units is kept first. That is what
overlapping window units already need, so each header becomes an extra *shared segment* of every
unit of its document in the selection problem: the budget tracker pays it once, and the exact
count of the rendered text settles the rest.
"""

from __future__ import annotations

import bisect
import string
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast, overload

from budgetctx._core.validation import short_repr
from budgetctx._errors import InputError, InvalidParameterError
from budgetctx.unitizers import Segment, Segmentation, Unit

__all__ = ["Document", "DocumentLayout", "combine", "normalise_documents"]


@dataclass(frozen=True)
class Document:
    """One input document: its text, an optional id (unique within a call) and metadata.

    ``metadata`` is carried to :class:`~budgetctx._core.results.DocumentSummary` untouched; nothing
    in selection reads it.

    >>> Document("Allergies: penicillin.", id="note-1").id
    'note-1'
    """

    text: str
    id: str | None = None
    metadata: Mapping[str, Any] | None = field(default=None, compare=False)


def normalise_documents(documents: object) -> list[Document]:
    """A list of :class:`Document` from a sequence of ``str`` / ``Document`` (or one of them).

    Rejects an empty list, items of other types, ids that are not strings and duplicated ids.
    """
    if isinstance(documents, str | Document):
        documents = [documents]
    if isinstance(documents, bytes | bytearray) or not isinstance(documents, Sequence):
        raise InputError(
            f"documents must be a str, a Document or a list of them, got "
            f"{type(documents).__name__}; e.g. build_context(['note one', 'note two'], 512).",
            parameter="documents",
            value=type(documents).__name__,
        )
    if len(documents) == 0:
        raise InputError(
            "documents is an empty list: there is nothing to select from; pass at least one "
            "document.",
            parameter="documents",
            value=[],
        )
    out: list[Document] = []
    seen: dict[str, int] = {}
    for i, d in enumerate(documents):
        if isinstance(d, str):
            d = Document(d)
        elif not isinstance(d, Document):
            raise InputError(
                f"documents[{i}] is {short_repr(d)} ({type(d).__name__}), not a str or a "
                "Document; pass text, or Document(text, id=..., metadata=...).",
                parameter="documents",
                value=i,
            )
        if d.id is not None and not isinstance(d.id, str):
            raise InputError(
                f"documents[{i}].id is {short_repr(d.id)}, not a str; use a string id such as "
                f"'{d.id}' or None.",
                parameter="documents",
                value=i,
            )
        if d.id is not None:
            if d.id in seen:
                raise InputError(
                    f"documents[{i}] and documents[{seen[d.id]}] share the id {d.id!r}; ids "
                    "name documents in the provenance, so each must be unique. Rename one, or "
                    "leave the ids out.",
                    parameter="documents",
                    value=d.id,
                )
            seen[d.id] = i
        out.append(d)
    return out


def header_text(template: str | None, doc: Document, index: int) -> str:
    """The header of document ``index`` (``""`` when there is none)."""
    if not template:
        return ""
    ident = doc.id if doc.id is not None else str(index + 1)
    return template.format(id=ident, index=index, number=index + 1)


def check_header_template(template: str | None) -> None:
    """Fail early on a header template that is not text with ``{id}``, ``{index}`` and
    ``{number}`` fields only: no format spec (``{id:>300000000}`` would allocate 300 MB), no
    conversion, no attribute or item access (``{id.__class__}``), since a template may come
    from a request."""
    if template is None:
        return
    problem = None
    try:
        for _, name, spec, conversion in string.Formatter().parse(template):
            if name is None:
                continue
            if name not in _HEADER_FIELDS:
                problem = f"the field {{{short_repr(name)[1:-1]}}} is not one of them"
            elif spec or conversion:
                problem = f"the field {{{name}}} has a format spec or conversion"
            if problem is not None:
                break
    except ValueError as exc:
        problem = str(exc)
    if problem is not None:
        raise InvalidParameterError(
            f"The 'document_header' parameter of build_context must be text with only the "
            f"fields {{id}}, {{index}} and {{number}}, as is. Got {short_repr(template)} "
            f"instead ({problem}); e.g. '[{{id}}]', or None for no header.",
            parameter="document_header",
            value=short_repr(template),
        )


_HEADER_FIELDS = frozenset({"id", "index", "number"})


@dataclass(frozen=True)
class DocumentLayout:
    """Where each document sits in the combined text, and how to join pieces across them.

    ``starts[i]``/``ends[i]`` bound document ``i``'s text in the combined text; ``headers[i]``
    is its header. ``header_segments[i]`` is the index of its shared header segment in the
    selection problem (``None`` when the header and document separator are both empty).
    """

    documents: tuple[Document, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    headers: tuple[str, ...]
    separator: str
    document_separator: str
    header_segments: tuple[int | None, ...]

    def document_of(self, offset: int) -> int:
        """The index of the document holding combined-text offset ``offset``."""
        return bisect.bisect_right(self.starts, offset) - 1

    def join(self, text: str, spans: Sequence[tuple[int, int]]) -> str:
        """Join combined-text ``spans`` (in rendered order) into the context text: a header
        before each document's first piece, the document separator between documents."""
        parts: list[str] = []
        current = -1
        for a, b in spans:
            d = self.document_of(a)
            if d != current:
                if current != -1:
                    parts.append(self.separator + self.document_separator)
                elif parts:
                    parts.append(self.separator)
                if self.headers[d]:
                    parts.append(self.headers[d] + self.separator)
                current = d
            else:
                parts.append(self.separator)
            parts.append(text[a:b])
        return "".join(parts)

    def local(self, span: tuple[int, int]) -> tuple[int, int]:
        """A combined-text span as offsets into its own document."""
        off = self.starts[self.document_of(span[0])]
        return span[0] - off, span[1] - off


@dataclass(frozen=True)
class Combined:
    """Several segmentations as one, with the extra header segments of the selection problem."""

    segmentation: Segmentation
    layout: DocumentLayout
    #: per unit: its segments plus its document's header segment (if any)
    unit_segments: tuple[tuple[int, ...], ...]
    #: the header segments' texts, counted like segments (index len(segments) + k)
    header_texts: tuple[str, ...]
    #: per unit: the index of its document
    unit_documents: tuple[int, ...]
    #: per document: the ids of its units
    document_units: tuple[tuple[int, ...], ...]
    #: the text before each rendered document (separators and header), in order
    leads: tuple[str, ...] = ()


def combine(
    documents: Sequence[Document],
    segmentations: Sequence[Segmentation],
    *,
    separator: str,
    header: str | None,
    document_separator: str,
    unitizer: str,
) -> Combined:
    """Lay ``segmentations`` (one per document, in order) side by side.

    Documents with no units (empty or whitespace) take no room: no header, no separator.
    """
    text_parts: list[str] = []
    pos = 0
    n_seen = 0
    seg_parts: list[tuple[int, int, Segmentation]] = []
    unit_parts: list[tuple[int, int, int, Segmentation]] = []
    unit_segments: list[tuple[int, ...]] = []
    unit_documents: list[int] = []
    document_units: list[tuple[int, ...]] = []
    starts: list[int] = []
    ends: list[int] = []
    headers: list[str] = []
    header_ids: list[int | None] = []
    header_texts: list[str] = []
    leads: list[str] = []
    overlapping = any(s.overlapping for s in segmentations)
    n_segments = sum(len(s.segments) for s in segmentations)
    first = True
    for i, (doc, seg) in enumerate(zip(documents, segmentations, strict=True)):
        head = header_text(header, doc, i)
        headers.append(head)
        if not seg.units:
            starts.append(pos)
            ends.append(pos)
            header_ids.append(None)
            document_units.append(())
            continue
        lead = ("" if first else separator + document_separator) + (
            head + separator if head else ""
        )
        first = False
        leads.append(lead)
        text_parts.append(lead)
        pos += len(lead)
        starts.append(pos)
        text_parts.append(seg.document)
        # The header's cost: what it adds when this document appears after another one.
        shared = document_separator + (head + separator if head else "")
        hid: int | None = None
        if shared:
            hid = n_segments + len(header_texts)
            header_texts.append(shared)
        header_ids.append(hid)
        base = n_seen
        n_seen += len(seg.segments)
        seg_parts.append((base, pos, seg))
        unit_parts.append((len(unit_segments), base, pos, seg))
        ids = range(len(unit_segments), len(unit_segments) + len(seg.units))
        for u in seg.units:
            segs = tuple(map(base.__add__, u.segments))
            unit_segments.append(segs if hid is None else (*segs, hid))
        unit_documents.extend([i] * len(seg.units))
        document_units.append(tuple(ids))
        pos += len(seg.document)
        ends.append(pos)
    layout = DocumentLayout(
        documents=tuple(documents),
        starts=tuple(starts),
        ends=tuple(ends),
        headers=tuple(headers),
        separator=separator,
        document_separator=document_separator,
        header_segments=tuple(header_ids),
    )
    # Views, not copies: shifted segments and units are made only for what is read (the
    # rendered units), which keeps a list of documents as cheap as their concatenation.
    combined = Segmentation(
        "".join(text_parts),
        cast("tuple[Segment, ...]", _ShiftedSegments(seg_parts)),
        cast("tuple[Unit, ...]", _ShiftedUnits(unit_parts)),
        unitizer,
        overlapping=overlapping,
    )
    return Combined(
        segmentation=combined,
        layout=layout,
        unit_segments=tuple(unit_segments),
        header_texts=tuple(header_texts),
        unit_documents=tuple(unit_documents),
        document_units=tuple(document_units),
        leads=tuple(leads),
    )


class _Shifted(Sequence[Any]):
    """A read-only sequence over several documents' items, each shifted into the combined
    text when it is read (and kept, so that it is made once)."""

    def __init__(self, firsts: list[int], total: int) -> None:
        self._firsts = firsts
        self._total = total
        self._made: dict[int, Any] = {}

    def __len__(self) -> int:
        return self._total

    def _make(self, part: int, i: int) -> Any:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return tuple(self[k] for k in range(*i.indices(self._total)))
        if i < 0:
            i += self._total
        if not 0 <= i < self._total:
            raise IndexError(i)
        item = self._made.get(i)
        if item is None:
            part = bisect.bisect_right(self._firsts, i) - 1
            item = self._made[i] = self._make(part, i - self._firsts[part])
        return item

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(self._total))


class _ShiftedSegments(_Shifted):
    def __init__(self, parts: list[tuple[int, int, Segmentation]]) -> None:
        self._parts = parts
        total = parts[-1][0] + len(parts[-1][2].segments) if parts else 0
        super().__init__([p[0] for p in parts], total)

    def _make(self, part: int, i: int) -> Segment:
        _, off, seg = self._parts[part]
        g = seg.segments[i]
        return Segment(g.start + off, g.end + off, g.text, g.kind, g.heading)


class _ShiftedUnits(_Shifted):
    def __init__(self, parts: list[tuple[int, int, int, Segmentation]]) -> None:
        self._parts = parts
        total = parts[-1][0] + len(parts[-1][3].units) if parts else 0
        super().__init__([p[0] for p in parts], total)

    def _make(self, part: int, i: int) -> Unit:
        first, base, off, seg = self._parts[part]
        u = seg.units[i]
        return Unit(
            first + i,
            tuple(map(base.__add__, u.segments)),
            tuple((a + off, b + off) for a, b in u.spans),
            u.text,
            u.kind,
            u.section,
            u.speaker,
        )
