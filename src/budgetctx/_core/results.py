"""Result objects shared by every room: the context, its units, the route (``budgetctx.build``
makes them, the router decides routes, batch/chat/serve/eval read them).

They live here, not beside the code that makes them, so that reading a result never imports
the router or the pipeline.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any

__all__ = ["Context", "DocumentStats", "DocumentSummary", "RouteDecision", "SelectedUnit"]


@dataclass(frozen=True)
class DocumentStats:
    """Route statistics of a document at one budget (paper 3.5).

    ``phi``: share of total relevance in the units that fit the budget from the start
    (front-loading); ``rho``: mean similarity of adjacent units (redundancy); ``length``:
    document tokens; ``budget_ratio``: budget / length. For a dialogue, how it is spoken
    (:class:`budgetctx.unitizers._turns.TurnStatistics`; all 0 for prose): ``backchannel_share``,
    ``hesitation_rate`` and ``mean_turn_words``.

    >>> DocumentStats(phi=0.5, rho=0.1, length=3000, budget_ratio=0.2).vector(600)
    [600.0, 3000.0, 0.2, 0.5, 0.1, 0.0, 0.0, 0.0]
    """

    phi: float
    rho: float
    length: int
    budget_ratio: float
    backchannel_share: float = 0.0
    hesitation_rate: float = 0.0
    mean_turn_words: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def vector(self, budget: int) -> list[float]:
        """Statistics in the order routers read them (``budgetctx.router.STAT_NAMES``):
        budget, length, ratio, phi, rho, then the dialogue's three."""
        return [
            float(budget),
            float(self.length),
            self.budget_ratio,
            self.phi,
            self.rho,
            self.backchannel_share,
            self.hesitation_rate,
            self.mean_turn_words,
        ]


@dataclass(frozen=True)
class RouteDecision:
    """The selector a router chose for one (document, budget), with its reason.

    ``selector`` is a selector spec (``"mmr"``, ``"mmr:lambda_=0.3"``) resolved once by the
    pipeline; ``fallback`` is true when a router was not confident and used its fallback.

    >>> stats = DocumentStats(phi=0.5, rho=0.1, length=3000, budget_ratio=0.2)
    >>> RouteDecision("lead", "budget", "budget 600 <= b1=1024: lead", stats).to_dict()["selector"]
    'lead'
    """

    selector: str
    router: str
    reason: str
    stats: DocumentStats
    confidence: float | None = None
    fallback: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["stats"] = self.stats.to_dict()
        return out


@dataclass(frozen=True)
class SelectedUnit:
    """A kept unit and where it came from.

    ``spans`` are exact ``(start, end)`` character offsets into the input of the text this
    unit contributed to the context, one per segment: a segment shared by overlapping window
    units is credited to the unit rendered first, and a truncated unit's last span is
    shortened to what was kept. Joining every kept unit's spans in rendered order with the
    separator gives ``Context.text`` exactly. ``unit_spans`` are the unit's full spans.
    ``text`` is the text of ``spans`` joined by a space. ``tokens`` is the unit's own cost (its
    segments plus one separator each); overlapping window units share tokens. ``rank`` is the
    0-based position in the selector's order, ``gain`` the selector's score at that step.

    With several documents, ``id`` is unique across them (units are numbered in input order),
    ``document``/``document_id`` say which document the unit came from, and ``spans`` and
    ``unit_spans`` are offsets into that document's text. ``pinned`` units were kept because
    a ``pin`` matched them, before anything was selected. In a dialogue, ``speaker`` is who
    says the unit (its turn's tag as written), also for a sentence cut from the middle of a
    turn, whose text does not repeat the tag.

    ``relevance`` is None when the selection read no encoding of the units (issue 27):
    ``lead`` and ``shuffled`` (whose ``gain`` is the unit's relevance, so None too) and a
    document sent whole; ``PreparedDocument.features`` has it.
    """

    id: int
    spans: tuple[tuple[int, int], ...]
    text: str
    tokens: int
    relevance: float | None
    gain: float | None
    rank: int
    section: str | None = None
    truncated: bool = False
    unit_spans: tuple[tuple[int, int], ...] = ()
    document: int = 0
    document_id: str | None = None
    pinned: bool = False
    speaker: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (spans become lists)."""
        # what asdict gives, without its deep copy of values that cannot change (numbers,
        # strings): a context's units were most of a fitting document's to_dict (issue 27)
        out = {name: getattr(self, name) for name in _UNIT_FIELDS}
        out["spans"] = [list(s) for s in self.spans]
        out["unit_spans"] = [list(s) for s in self.unit_spans]
        return out


@dataclass(frozen=True)
class DocumentSummary:
    """What one input document gave to the context.

    ``tokens`` is the document's own token count, ``text`` its kept units joined by the
    separator (its part of the context, without its header; ``""`` when nothing was kept) and
    ``tokens_kept`` the count of ``text``. ``metadata`` is the input's, untouched.

    >>> from budgetctx import build_context
    >>> ctx = build_context(["Chest pain.", "Troponin negative."], budget=50)
    >>> [(d.index, d.text) for d in ctx.documents]
    [(0, 'Chest pain.'), (1, 'Troponin negative.')]
    """

    index: int
    id: str | None
    tokens: int
    tokens_kept: int
    units: int
    units_kept: int
    text: str
    metadata: Any = None

    def to_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in _SUMMARY_FIELDS}  # numbers and strings
        out["metadata"] = dict(self.metadata) if self.metadata is not None else None
        return out


@dataclass(frozen=True)
class Context:
    """A budgeted context with full provenance.

    ``text`` is what goes to the model; ``tokens_used`` is its exact count with
    ``tokenizer`` and is never above ``available`` (``budget - reserve``). ``units`` are the
    kept units in document order; ``excluded`` lists the ids of every unit left out;
    ``documents`` summarises each input document (one for a single text).
    ``document_tokens`` is the input's count; for several documents, the sum of each
    document's count and each header's (with its separators), each counted on its own.

    >>> from budgetctx import build_context
    >>> ctx = build_context("Chest pain. Troponin negative. Discharged home.", budget=5)
    >>> ctx.tokens_used <= ctx.available == ctx.budget - ctx.reserve
    True

    The selector is recorded once per role: ``selector`` is the name of the one that ran
    (whatever chose it), ``params["selector"]`` its parameters, and ``route`` (set only when a
    router chose) the spec it picked and why.

    A document that fits the budget is counted and sent whole without being segmented
    (issue 27): its ``units``, ``n_units`` and ``documents`` (and, when they depend on the
    units, ``params``, or with a router ``selector``, ``relevance_source``, ``stats`` and
    ``route``) are computed on first read, once, and are then what they would have been had
    they been computed at once. ``text``, ``tokens_used``, ``document_tokens`` and ``reason``
    never wait. Pickling, comparing or ``to_dict()`` read them all.
    """

    text: str
    tokens_used: int
    budget: int
    document_tokens: int
    tokenizer: str
    unitizer: str
    representation: str
    selector: str
    units: tuple[SelectedUnit, ...]
    excluded: tuple[int, ...]
    n_units: int
    separator: str = "\n"
    query: str | None = None
    #: "query", "centroid", "centroid (query matched no unit)", or "not computed" when the
    #: selection read no encoding of the units (lead, shuffled, a document sent whole)
    relevance_source: str = "centroid"
    params: dict[str, Any] = field(default_factory=dict)
    #: why the context is empty or whole, when it is ("empty input", "document fits", ...)
    reason: str | None = None
    notes: tuple[str, ...] = ()
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: router features at this budget: phi (front-loading), rho (redundancy), length, ratio;
    #: without phi and rho when the units were not encoded (``PreparedDocument.stats`` has all)
    stats: dict[str, Any] = field(default_factory=dict)
    #: set when a router chose the selector (selector="auto" or a router instance)
    route: RouteDecision | None = None
    #: tokens of the budget kept free (for an instruction or the answer)
    reserve: int = 0
    documents: tuple[DocumentSummary, ...] = ()

    @property
    def available(self) -> int:
        """The tokens the context may use: ``budget - reserve`` (``tokens_used`` is at most
        this)."""
        return self.budget - self.reserve

    @property
    def tokens_saved(self) -> int:
        """Tokens not sent compared with the whole document."""
        return max(self.document_tokens - self.tokens_used, 0)

    @property
    def kept_ids(self) -> tuple[int, ...]:
        return tuple(u.id for u in self.units)

    def __getstate__(self) -> dict[str, Any]:
        # A deferred context pickles what it defers, computed (a worker's context is read
        # in another process, which cannot run the computation's closure).
        _fill(self)
        return {k: v for k, v in self.__dict__.items() if k != _PENDING}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (spans become lists)."""
        # asdict's result, field by field: the dicts copied as asdict copies them, the units,
        # documents and route by their own to_dict (asdict converted them twice)
        out = {
            name: _plain(value) if isinstance(value, dict) else value
            for name, value in ((n, getattr(self, n)) for n in _CONTEXT_FIELDS)
        }
        out["tokens_saved"] = self.tokens_saved
        out["units"] = [u.to_dict() for u in self.units]
        out["excluded"] = list(self.excluded)
        out["notes"] = list(self.notes)
        out["route"] = self.route.to_dict() if self.route is not None else None
        out["documents"] = [d.to_dict() for d in self.documents]
        return out


#: Field names in order, read by the to_dict methods (``dataclasses.fields`` on each call was
#: a fifth of their time).
_UNIT_FIELDS = tuple(f.name for f in fields(SelectedUnit))
_SUMMARY_FIELDS = tuple(f.name for f in fields(DocumentSummary))
_CONTEXT_FIELDS = tuple(f.name for f in fields(Context))


def _plain(obj: Any) -> Any:
    """What :func:`dataclasses.asdict` makes of a value inside a dataclass: dataclasses as
    dicts, lists, tuples and dicts rebuilt, anything else deep-copied."""
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*[_plain(v) for v in obj])
    if isinstance(obj, list | tuple):
        return type(obj)(_plain(v) for v in obj)
    if isinstance(obj, dict):
        return type(obj)((_plain(k), _plain(v)) for k, v in obj.items())
    return copy.deepcopy(obj)


#: The fields a context may compute on first read (issue 27: a document sent whole is not
#: segmented unless its units are read); see :func:`deferred_context`.
DEFERRABLE = (
    "units",
    "excluded",
    "n_units",
    "documents",
    "params",
    "selector",
    "relevance_source",
    "stats",
    "route",
)
#: Where a deferred context keeps what computes its deferred fields, until it has run.
_PENDING = "_pending"


class _Pending:
    """The computation of a deferred context's fields: run once, under a lock, so that two
    threads reading ``units`` at once get the same tuple. ``alone`` computes some fields on
    their own, more cheaply than the whole context (the route statistics of a fixed
    selector read the text only)."""

    __slots__ = ("alone", "compute", "lock", "names")

    def __init__(
        self,
        compute: Callable[[], Context],
        names: tuple[str, ...],
        alone: Mapping[str, Callable[[], Any]],
    ) -> None:
        self.compute: Callable[[], Context] | None = compute
        self.names = names
        self.alone = dict(alone)
        self.lock = threading.Lock()

    def fill(self, ctx: Context, name: str | None = None) -> None:
        """Compute ``name`` (every deferred field when None) unless it is there already."""
        found = ctx.__dict__
        with self.lock:
            if name is not None and name in found:
                return
            one = self.alone.pop(name, None) if name is not None else None
            if one is not None:
                found[name] = one()  # type: ignore[index]  # name is not None here
                return
            compute = self.compute
            if compute is None:
                return
            full = compute()
            # What was known at once must be what the computation says (same code path).
            assert (full.text, full.tokens_used, full.reason) == (
                ctx.text,
                ctx.tokens_used,
                ctx.reason,
            ), "a deferred context's computation disagrees with its text"
            for n in self.names:
                # a field computed alone keeps the object its first reader got
                found.setdefault(n, full.__dict__[n])
            self.compute = None  # done: let the documents and options it held go
            self.alone.clear()


def _fill(ctx: Context, name: str | None = None) -> None:
    pending: _Pending | None = ctx.__dict__.get(_PENDING)
    if pending is not None:
        pending.fill(ctx, name)
        if pending.compute is None:
            ctx.__dict__.pop(_PENDING, None)


def _deferrable(name: str) -> property:
    """A field read from the instance, computed first if it was deferred."""

    def get(self: Context) -> Any:
        found = self.__dict__
        if name not in found:
            _fill(self, name)
            if name not in found:
                raise AttributeError(name)
        return found[name]

    def put(self: Context, value: Any) -> None:
        # only the dataclass's __init__ (object.__setattr__) gets here: the frozen class's
        # own __setattr__ refuses assignment before any descriptor is asked
        self.__dict__[name] = value

    return property(get, put, doc=f"``{name}`` (computed on first read when deferred).")


for _name in DEFERRABLE:
    setattr(Context, _name, _deferrable(_name))


def deferred_context(
    compute: Callable[[], Context],
    deferred: Collection[str],
    /,
    alone: Mapping[str, Callable[[], Any]] | None = None,
    **known: Any,
) -> Context:
    """A :class:`Context` whose ``deferred`` fields (of :data:`DEFERRABLE`) are computed on
    first read, by ``compute()`` (which returns the whole context: the same code that would
    have made it at once, so the values are the same), or for a field in ``alone`` by its own
    function; ``known`` are the other fields."""
    names = tuple(n for n in DEFERRABLE if n in deferred or n in (alone or {}))
    placeholders: dict[str, Any] = dict.fromkeys(names)
    ctx = Context(**placeholders, **known)
    for n in names:
        del ctx.__dict__[n]
    ctx.__dict__[_PENDING] = _Pending(compute, names, alone or {})
    return ctx
