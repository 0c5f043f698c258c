"""``build_context``: document + budget -> budgeted context with provenance.

The pipeline validates its arguments, resolves the components once, and hands rendering to
:mod:`budgetctx.build._render`.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any, Literal, TypeGuard, cast

import numpy as np
from numpy.typing import NDArray

from budgetctx._core.results import (
    Context,
    DocumentStats,
    DocumentSummary,
    RouteDecision,
    deferred_context,
)
from budgetctx._core.validation import Boolean, check, short_repr
from budgetctx._errors import InputError, InvalidParameterError
from budgetctx.build._documents import (
    Document,
    DocumentLayout,
    combine,
    normalise_documents,
)
from budgetctx.build._fits import combined_turns, dialogue_turns, whole_text
from budgetctx.build._options import (
    DEFAULT_SELECTOR,
    BuildOptions,
    check_budget,
    check_reserve,
)
from budgetctx.build._options import RULES as _CONSTRAINTS  # noqa: F401  # the old name
from budgetctx.build._pins import Pin, pinned_units, unit_sections
from budgetctx.build._prepare import (
    Encoded,
    blas_threads,
    count_segmentations,
    separator_slack,
)
from budgetctx.build._render import Piece, fit_budget, render, selected_units
from budgetctx.profiles import ClinicalProfile, get_profile
from budgetctx.representations import (
    DENSE_LIMIT,
    DenseKernel,
    Representation,
    UnitFeatures,
    build_features,
    get_representation,
    subset_features,
)
from budgetctx.representations._features import UnreadKernel
from budgetctx.representations._salience import dialogue_filler
from budgetctx.router import Router, check_tokenizer, default_router, document_stats
from budgetctx.selectors import (
    LeadSelector,
    Selection,
    SelectionProblem,
    Selector,
    ShuffledSelector,
    get_selector,
    parse_selector_spec,
)
from budgetctx.tokenizers import Tokenizer, get_tokenizer
from budgetctx.unitizers import Segmentation, Unit, Unitizer, get_unitizer
from budgetctx.unitizers._turns import (
    TurnStatistics,
    turn_lines,
    turn_statistics,
    with_speakers,
)

__all__ = [
    "DEFAULT_SELECTOR",
    "BuildOptions",
    "PreparedDocument",
    "build_context",
    "prepare",
    "validate_text",
]

#: What build_context and prepare accept as input.
Documents = str | Document | Sequence[str | Document]

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
    # An ASCII string (a flag CPython keeps, read in O(1)) holds no surrogate, and other text
    # does when strict UTF-8 cannot encode it: that C loop is ~6x faster than the regex scan
    # (17 vs 100 us on a 2k-token report), which then runs only to find the offset.
    bad = None if text.isascii() or _encodes(text) else _SURROGATE.search(text)
    if bad is not None:
        raise InputError(
            f"text contains a lone surrogate (U+{ord(bad.group()):04X}) at offset {bad.start()}: "
            "it is not valid Unicode and cannot be counted or sent. Fix the source, or decode "
            "it with errors='replace'.",
            value=bad.start(),
        )
    return text


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # only a lone surrogate makes strict UTF-8 fail
        return False
    return True


#: ``PreparedDocument.select``'s one option that is not a :class:`BuildOptions` field.
_WHOLE_IF_FITS = Boolean()


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000.0, 3)


@dataclass(frozen=True, eq=False)
class PreparedDocument:
    """One document, or several, unitized and counted once (and represented once, on first
    use), ready for any budget and selector.

    Build it with :func:`prepare`; :meth:`select` then costs only the selection itself, which
    is what a budget sweep or a service answering several budgets wants. With several
    documents, ``text`` is the combined text (headers and separators included) that would be
    sent if everything fitted.

    >>> doc = prepare("Chest pain. Troponin negative. Discharged home.")
    >>> [doc.select(b, selector="lead").tokens_used for b in (3, 8, 100)]
    [3, 8, 12]
    """

    text: str
    segmentation: Segmentation
    segment_costs: NDArray[np.int64]
    document_tokens: int
    tokenizer: Tokenizer
    separator: str
    query: str | None
    names: dict[str, str]
    params: dict[str, Any]
    timings_ms: dict[str, float]
    #: per unit: its segments, plus its document's shared header segment with several documents
    unit_segments: tuple[tuple[int, ...], ...] = ()
    overlapping: bool = False
    #: several documents: where each sits in ``text``; None for one plain string
    layout: DocumentLayout | None = None
    #: per input document: its own token count
    documents_tokens: tuple[int, ...] = ()
    #: per input document: its own segmentation (offsets into its own text)
    document_segmentations: tuple[Segmentation, ...] = ()
    #: units a profile pins, most critical first, and what it says about them (issue 22)
    profile_pins: tuple[int, ...] = ()
    profile_note: str | None = None
    #: per input document: how it is spoken when it is a dialogue (issue 21), else None
    dialogues: tuple[TurnStatistics | None, ...] = ()
    #: encodes the units into :attr:`features`, once, on first use (issue 27)
    represent: Callable[[], UnitFeatures] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def features(self) -> UnitFeatures:
        """The units' relevance and similarities (the representation's encoding).

        Made on first use, once (a lock keeps two threads sharing the document from
        encoding it twice): a selection that reads none (``lead``, ``shuffled``, or a
        document that fits whole) never pays for it.
        """
        found: UnitFeatures | None = self.__dict__.get("_features")
        if found is None:
            with self._lock:
                found = self.__dict__.get("_features")
                if found is None:
                    if self.represent is None:
                        raise InvalidParameterError(
                            "This PreparedDocument has no representation to encode its "
                            "units with; build it with prepare().",
                            parameter="represent",
                            value=None,
                        )
                    t = time.perf_counter()
                    found = self.represent()
                    self.timings_ms["represent"] = _ms(t)
                    self.__dict__["_features"] = found
        return found

    def __reduce__(self) -> tuple[Any, ...]:
        # The encoding travels, not the function that makes it (a closure, and a lock).
        state = {f.name: getattr(self, f.name) for f in fields(self) if f.init}
        state["represent"] = None
        return (_restored, (state, self.features))

    @property
    def represented(self) -> bool:
        """Whether :attr:`features` has been computed (a selection that reads none leaves it
        undone)."""
        return "_features" in self.__dict__

    @property
    def relevance_source(self) -> str:
        """What relevance is measured against: "query", "centroid", or "centroid (query
        matched no unit)" (reading it encodes the units)."""
        return self.features.relevance_source

    @cached_property
    def unit_positions(self) -> NDArray[np.int64] | None:
        """Each unit's position in its own document; None for one document (0..n-1)."""
        if self.layout is None:
            return None
        return np.concatenate(
            [np.arange(len(s.units), dtype=np.int64) for s in self.document_segmentations]
        )

    @cached_property
    def exact_tokens(self) -> int:
        """The exact count of ``text`` (for several documents, ``document_tokens`` is the
        sum of each document's and each header's count)."""
        return self.document_tokens if self.layout is None else self.tokenizer.count(self.text)

    @cached_property
    def local_units(self) -> tuple[Unit, ...]:
        """The units as a callable pin sees them: ids as in the context, spans into their
        own document."""
        units = [u for s in self.document_segmentations for u in s.units]
        if self.layout is None:
            return tuple(units)
        return tuple(
            Unit(gid, u.segments, u.spans, u.text, u.kind, u.section, u.speaker)
            for gid, u in enumerate(units)
        )

    @cached_property
    def turn_statistics(self) -> TurnStatistics | None:
        """How the document is spoken when it is a dialogue (a route statistic), else None;
        with several documents, their dialogues' statistics weighted by length."""
        stats = self.dialogues or tuple(
            turn_statistics(s.document) for s in self.document_segmentations
        )
        return combined_turns(
            [
                (len(s.document), t)
                for s, t in zip(self.document_segmentations, stats, strict=True)
                if t is not None
            ]
        )

    @cached_property
    def unit_sections(self) -> tuple[frozenset[str], ...]:
        """Per unit: the sections it belongs to (what a section-name pin matches), computed
        per document so that a heading never runs on into the next document."""
        return tuple(labs for s in self.document_segmentations for labs in unit_sections(s))

    @cached_property
    def separator_slack(self) -> int:
        """Tokens a selection may spend beyond the budget because its last segment's cost
        counts a separator that is never rendered
        (:func:`budgetctx.build._prepare.separator_slack`).
        0 for several documents (the last piece may be followed by a document's header)."""
        if self.layout is not None:
            return 0
        return separator_slack(
            self.tokenizer, [g.text for g in self.segmentation.segments], self.separator
        )

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
        pin: Pin | Sequence[Pin] | None = None,
        reserve: int = 0,
        on_pin_overflow: Literal["rank", "error"] = "rank",
        options: BuildOptions | None = None,
    ) -> Context:
        """The context of at most ``budget - reserve`` tokens chosen by ``selector``.

        When everything fits, it is sent verbatim; ``whole_if_fits=False`` runs the selector
        anyway (the extractive oracle does, since a subset can score higher). ``pin``,
        ``reserve`` and ``on_pin_overflow`` are as in :func:`build_context`; ``options`` too
        (only its selection options are read: the document is already prepared).
        """
        owner = "PreparedDocument.select"
        budget = check_budget(owner, budget)
        opts = BuildOptions.merge(
            options,
            owner,
            order=order,
            truncate=truncate,
            selector=selector,
            selector_options=selector_options,
            pin=pin,
            reserve=reserve,
            on_pin_overflow=on_pin_overflow,
        )
        whole_if_fits = check(owner, "whole_if_fits", whole_if_fits, _WHOLE_IF_FITS)
        check_reserve(budget, opts.reserve)
        _check_order(opts.order, several=self.layout is not None)
        return self._select(
            budget,
            opts,
            _resolve_selector(opts.selector, opts.selector_options),
            whole_if_fits=whole_if_fits,
        )

    def _select(
        self,
        budget: int,
        opts: BuildOptions,
        chosen: Selector | Router,
        *,
        whole_if_fits: bool = True,
    ) -> Context:
        """:meth:`select` once its options are checked and its selector resolved."""
        return _select(
            self,
            budget,
            chosen,
            opts.order,
            opts.truncate,
            whole_if_fits,
            pin=opts.pin,
            reserve=opts.reserve,
            on_pin_overflow=opts.on_pin_overflow,
        )

    def stats(self, budget: int) -> DocumentStats:
        """Route statistics of this document at ``budget`` (what a router reads).

        >>> s = prepare("Chest pain. Chest pain again. Diet.").stats(5)
        >>> (round(s.phi, 2), s.length)
        (0.4, 9)
        """
        budget = check_budget("PreparedDocument.stats", budget)
        return _stats(self, _problem(self, budget))


def _restored(state: dict[str, Any], features: UnitFeatures) -> PreparedDocument:
    """A pickled :class:`PreparedDocument`, with the features it was pickled with."""
    doc = PreparedDocument(**state)
    doc.__dict__["_features"] = features
    return doc


def prepare(
    documents: Documents,
    *,
    tokenizer: str | Tokenizer = "o200k_base",
    unitizer: str | Unitizer = "sentence",
    representation: str | Representation = "tfidf",
    query: str | None = None,
    separator: str = "\n",
    section_weights: Mapping[str, float] | None = None,
    unitizer_options: Mapping[str, Any] | None = None,
    dense_limit: int = DENSE_LIMIT,
    document_header: str | None = "[{id}]",
    document_separator: str = "\n",
    profile: str | ClinicalProfile | None = "auto",
    options: BuildOptions | None = None,
) -> PreparedDocument:
    """Unitize ``documents`` and count every segment with ``tokenizer``; relevance (to
    ``query``, else to the centroid of all units) and similarities are computed on the first
    selection that reads them (:attr:`PreparedDocument.features`). See :func:`build_context`;
    of ``options``, what preparing reads (the selection options are :meth:`select`'s)."""
    opts = BuildOptions.merge(
        options,
        "prepare",
        tokenizer=tokenizer,
        unitizer=unitizer,
        representation=representation,
        query=query,
        separator=separator,
        section_weights=section_weights,
        unitizer_options=unitizer_options,
        dense_limit=dense_limit,
        document_header=document_header,
        document_separator=document_separator,
        profile=profile,
    )
    return _prepare(documents, **opts.prepare_options())


def _validate_documents(documents: object) -> tuple[str | None, list[Document] | None]:
    """One plain string (today's single-document path) or a list of checked documents."""
    if isinstance(documents, str):
        return validate_text(documents), None
    if isinstance(documents, bytes | bytearray):
        validate_text(documents)  # the bytes error, with its fix
    docs = normalise_documents(documents)
    for i, d in enumerate(docs):
        try:
            validate_text(d.text)
        except InputError as exc:
            raise InputError(f"documents[{i}]: {exc}", parameter="documents", value=i) from None
    return None, docs


def _query(query: str | None) -> str | None:
    """A blank query is no query."""
    return None if query is not None and not query.strip() else query


def _components(
    tokenizer: str | Tokenizer,
    unitizer: str | Unitizer,
    representation: str | Representation,
    unitizer_options: Mapping[str, Any] | None,
) -> tuple[Tokenizer, Unitizer, Representation]:
    """The tokenizer, unitizer and representation of one call (each checks its options)."""
    return (
        get_tokenizer(tokenizer),
        get_unitizer(unitizer, **dict(unitizer_options or {})),
        get_representation(representation),
    )


@dataclass(frozen=True)
class _Checked:
    """One call's input validated and components resolved, by the count-first exit, for the
    preparation that follows when the input does not fit (or its units are read): ``text`` or
    ``docs`` as :func:`_validate_documents` gives them, and each document's count and
    encoding (:func:`~budgetctx.build._prepare.encode_texts`) when it was counted;
    ``count_ms`` and ``elapsed_ms``, what that counting and the whole exit took, which the
    preparation's ``count`` and ``prepare`` timings include (they did that work before)."""

    text: str | None
    docs: list[Document] | None
    tokenizer: Tokenizer
    unitizer: Unitizer
    representation: Representation
    encoded: list[Encoded] | None
    count_ms: float = 0.0
    elapsed_ms: float = 0.0


def _prepare(
    documents: Documents,
    *,
    tokenizer: str | Tokenizer,
    unitizer: str | Unitizer,
    representation: str | Representation,
    query: str | None,
    separator: str,
    section_weights: Mapping[str, float] | None,
    unitizer_options: Mapping[str, Any] | None,
    dense_limit: int,
    document_header: str | None = "[{id}]",
    document_separator: str = "\n",
    profile: str | ClinicalProfile | None = None,
    checked: _Checked | None = None,
) -> PreparedDocument:
    """:func:`prepare` once its options are checked; ``checked``: ``documents`` validated,
    the components resolved and the documents encoded by the count-first exit
    (:func:`_whole_if_fits`), which are not done again (``documents`` is then not read)."""
    t_start = time.perf_counter()
    if checked is None:
        text, docs = _validate_documents(documents)
        tok, unit, rep = _components(tokenizer, unitizer, representation, unitizer_options)
        encoded = None
    else:
        text, docs, encoded = checked.text, checked.docs, checked.encoded
        tok, unit, rep = checked.tokenizer, checked.unitizer, checked.representation
    query = _query(query)
    names = {"tokenizer": tok.name, "unitizer": unit.name, "representation": rep.name}
    params = {"unitizer": unit.params(), "representation": rep.params()}
    timings: dict[str, float] = {}

    dialogues: list[TurnStatistics | None] = []  # per document, in input order

    def unitize(t: str) -> Segmentation:
        if not t.strip():
            dialogues.append(None)
            return Segmentation(t, (), (), unit.name)
        # Read the turns once: the no-query salience, the route statistics and every unit's
        # speaker (issue 21) all come from them.
        lines = turn_lines(t)
        dialogues.append(turn_statistics(t, lines=lines))
        return with_speakers(unit.unitize(t), lines=lines)

    t = time.perf_counter()
    layout: DocumentLayout | None = None
    header_texts: tuple[str, ...] = ()
    leads: tuple[str, ...] = ()
    if docs is None:
        assert text is not None
        seg = unitize(text)
        unit_segments = tuple(u.segments for u in seg.units)
        overlapping = seg.overlapping
        document_segmentations: tuple[Segmentation, ...] = (seg,)
    else:
        segs = [unitize(d.text) for d in docs]
        comb = combine(
            docs,
            segs,
            separator=separator,
            header=document_header,
            document_separator=document_separator,
            unitizer=unit.name,
        )
        seg, layout, header_texts = comb.segmentation, comb.layout, comb.header_texts
        leads = comb.leads
        text = seg.document
        unit_segments = comb.unit_segments
        overlapping = seg.overlapping or bool(header_texts)
        document_segmentations = tuple(segs)
    timings["unitize"] = _ms(t)
    t = time.perf_counter()
    # One encoding per document gives its count and its segments' counts (see _prepare).
    own_costs, own_totals = count_segmentations(tok, document_segmentations, separator, encoded)
    seg_costs = np.asarray(own_costs + tok.count_batch(list(header_texts)), dtype=np.int64)
    if docs is None:
        doc_tokens = own_totals[0]
        documents_tokens: tuple[int, ...] = (doc_tokens,)
    else:
        # Each document and each header counted on its own: counting the combined text too
        # would tokenize everything twice. Whether everything fits is settled by an exact
        # count of the combined text, made only when the parts say it might (see _fits).
        documents_tokens = tuple(own_totals)
        doc_tokens = sum(documents_tokens) + sum(tok.count_batch(list(leads)))
    # the documents' first encoding, made by the count-first exit, is part of counting
    timings["count"] = _ms(t) + (checked.count_ms if checked is not None else 0.0)
    # The units are encoded (TF-IDF rows, relevance, kernel) on first use, not here: lead,
    # shuffled and a document that fits whole read none of it (issue 27).
    own_units = [u for d in document_segmentations for u in d.units]
    pins: tuple[int, ...] = ()
    identifiers: tuple[int, ...] = ()
    profile_note: str | None = None
    if profile is not None and seg.units:
        pins, identifiers, profile_note = _profile_plan(profile, document_segmentations, params)

    def represent() -> UnitFeatures:
        if not own_units:
            return UnitFeatures(
                relevance=np.zeros(0),
                kernel=DenseKernel(np.zeros((0, 0))),
                relevance_source="centroid",
            )
        # Read from each document's own segmentation: the combined one is a lazy view.
        encoded = rep.encode([u.text for u in own_units], query=query)
        features = build_features(
            encoded,
            sections=[u.section for u in own_units],
            section_weights=section_weights,
            dense_limit=dense_limit,
            filler=None
            if query is not None
            else dialogue_filler(document_segmentations, dialogues),
        )
        if identifiers:
            # the profile's identifier units (names, dates) carry no relevance (issue 22)
            r = features.relevance.copy()
            r[list(identifiers)] = 0.0
            features = UnitFeatures(r, features.kernel, features.relevance_source, features.X)
        return features

    timings["prepare"] = _ms(t_start) + (checked.elapsed_ms if checked is not None else 0.0)
    return PreparedDocument(
        text=text,
        segmentation=seg,
        segment_costs=seg_costs,
        document_tokens=doc_tokens,
        tokenizer=tok,
        separator=separator,
        query=query,
        names=names,
        params=params,
        timings_ms=timings,
        unit_segments=unit_segments,
        overlapping=overlapping,
        layout=layout,
        documents_tokens=documents_tokens,
        document_segmentations=document_segmentations,
        dialogues=tuple(dialogues),
        profile_pins=pins,
        profile_note=profile_note,
        represent=represent,
    )


#: The share of the budget a profile may pin (issue 22): the rest stays for the query and the
#: selector, so that a long record with many medication lists still answers the question.
PROFILE_SHARE = 0.9
#: ... and with a query, which is what the reader asked about: half of it.
PROFILE_SHARE_WITH_QUERY = 0.5


def _profile_share(
    pins: Sequence[int], problem: SelectionProblem, capacity: int, share: float
) -> tuple[list[int], list[int]]:
    """The profile's pins, in its order, while they cost at most ``share`` of ``capacity``;
    and those left to the selector."""
    kept: list[int] = []
    left: list[int] = []
    spent = 0
    for u in pins:
        cost = int(problem.unit_costs[u])
        if spent + cost <= share * capacity:
            kept.append(u)
            spent += cost
        else:
            left.append(u)
    return kept, left


def _profile_plan(
    profile: str | ClinicalProfile,
    segmentations: Sequence[Segmentation],
    params: dict[str, Any],
) -> tuple[tuple[int, ...], tuple[int, ...], str | None]:
    """Issue 22: the profile's pins, the identifier units whose relevance is set to 0, and
    its note. ``"auto"`` applies the clinical profile only when one of its pinned sections is
    present. Reads only the units' sections and texts, not their encoding."""
    chosen = get_profile("clinical" if profile == "auto" else profile)
    sections = [labs for s in segmentations for labs in unit_sections(s)]
    texts = [u.text for s in segmentations for u in s.units]
    pins, names, ids = chosen.plan(sections, texts)
    if profile == "auto" and not pins:
        return (), (), None
    params["profile"] = chosen.params()
    what = ", ".join(names) if names else "nothing (no such section)"
    note = f"{chosen.name} profile: pinned {what}" + (
        f"; {len(ids)} identifier units (names, dates) carry no relevance" if ids else ""
    )
    return tuple(pins), tuple(ids), note


def build_context(
    documents: Documents,
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
    pin: Pin | Sequence[Pin] | None = None,
    reserve: int = 0,
    on_pin_overflow: Literal["rank", "error"] = "rank",
    document_header: str | None = "[{id}]",
    document_separator: str = "\n",
    profile: str | ClinicalProfile | None = "auto",
    options: BuildOptions | None = None,
) -> Context:
    """Select the units of ``documents`` that best fit ``budget`` tokens and render them.

    The rendered context, separators included, counted with ``tokenizer``, is never above
    ``budget - reserve``. Relevance is measured against ``query`` when given, else the
    centroid of all units; nothing here ever sees a reference summary. ``selector="auto"``
    lets the bundled router choose from the budget and the statistics of the units
    (``Context.route`` says what it chose and why); a router instance works the same.

    ``documents`` is one text, or a list of texts / :class:`Document`. Units never cross
    documents; selection is one knapsack over all units; the context renders the documents
    that kept something in input order, each as ``header + separator + its units joined by
    separator``, two documents joined by ``separator + document_separator``. ``document_header``
    is a format string with ``{id}`` (the document's id, else its 1-based number), ``{index}``
    and ``{number}``; None for none. Headers and separators count against the budget.

    ``pin`` keeps units whatever the selector thinks: section names (case-insensitive),
    regexes over unit text (:func:`pin_regex`), unit ids, or a callable ``(unit) -> bool``.
    Their tokens come off the budget first; the selector fills what is left (its redundancy
    terms do not see the pinned units). When the pinned units alone exceed the budget,
    ``on_pin_overflow="rank"`` keeps the most relevant ones that fit and says so in
    ``Context.notes``; ``"error"`` raises. ``reserve`` keeps that many tokens of the budget free.

    ``options`` is a :class:`BuildOptions` holding all of the above at once (checked when it
    was built); keyword arguments that differ from their defaults override it.

    >>> ctx = build_context("CHIEF COMPLAINT: Chest pain. Troponin negative x2.", budget=9,
    ...                     selector="lead")
    >>> ctx.text
    'CHIEF COMPLAINT: Chest pain.'
    >>> ctx.units[0].spans
    ((0, 28),)
    >>> notes = [Document("ALLERGIES: penicillin.\\nHISTORY: Knee pain for a week.", id="gp"),
    ...          Document("Admitted with chest pain. Troponin negative.", id="ed")]
    >>> print(build_context(notes, budget=22, pin="allergies", query="chest pain").text)
    [gp]
    ALLERGIES: penicillin.
    <BLANKLINE>
    [ed]
    Admitted with chest pain.
    """
    # Validate every argument and resolve the selector before the expensive preparation.
    budget = check_budget("build_context", budget)
    opts = BuildOptions.merge(
        options,
        "build_context",
        tokenizer=tokenizer,
        unitizer=unitizer,
        representation=representation,
        selector=selector,
        query=query,
        separator=separator,
        order=order,
        truncate=truncate,
        section_weights=section_weights,
        selector_options=selector_options,
        unitizer_options=unitizer_options,
        dense_limit=dense_limit,
        pin=pin,
        reserve=reserve,
        on_pin_overflow=on_pin_overflow,
        document_header=document_header,
        document_separator=document_separator,
        profile=profile,
    )
    check_reserve(budget, opts.reserve)
    return _build(documents, budget, opts, _resolve_selector(opts.selector, opts.selector_options))


def _build(
    documents: Documents, budget: int, opts: BuildOptions, chosen: Selector | Router
) -> Context:
    """:func:`build_context` once its options are checked and its selector resolved: what
    :class:`~budgetctx.batch.ContextBuilder` calls for each document."""
    _check_order(opts.order, several=not isinstance(documents, str))
    whole, checked = _whole_if_fits(documents, budget, opts, chosen)
    if whole is not None:
        return whole
    return _prepare(documents, **opts.prepare_options(), checked=checked)._select(
        budget, opts, chosen
    )


def _whole_if_fits(
    documents: Documents, budget: int, opts: BuildOptions, chosen: Selector | Router
) -> tuple[Context | None, _Checked | None]:
    """The count-first exit (issue 27): when the input fits, its context from one count of
    the text, with the fields that read the units (``units``, ``n_units``, ``documents``;
    ``params`` when the profile decides on the sections; with a router, what it routes on)
    computed on first read, by the full preparation; else None. Either way, what it checked,
    resolved and encoded, which the preparation reads instead of doing it again.

    Checks what :func:`_prepare` checks, in its order, so that bad input fails here as it
    would there. Caller pins take the full path: a pin is checked against the units.
    """
    if opts.pin is not None:
        return None, None
    t_start = time.perf_counter()
    text, docs = _validate_documents(documents)
    query = _query(opts.query)
    tok, unit, rep = _components(
        opts.tokenizer, opts.unitizer, opts.representation, opts.unitizer_options
    )
    if not type(unit).__module__.startswith("budgetctx."):
        # the exit takes "blank text" for "no units", which budgetctx's unitizers guarantee
        return None, None
    capacity = budget - opts.reserve
    t = time.perf_counter()
    whole, encoded = whole_text(
        tok,
        text,
        docs,
        capacity,
        separator=opts.separator,
        header=opts.document_header,
        document_separator=opts.document_separator,
    )
    count_ms = _ms(t)
    checked = _Checked(text, docs, tok, unit, rep, encoded, count_ms, _ms(t_start))
    if whole is None:
        return None, checked
    router = chosen if _is_router(chosen) else None
    if router is not None:
        check_tokenizer(router, tok.name)
    known: dict[str, Any] = {
        "text": whole.text,
        "tokens_used": whole.tokens,
        "budget": budget,
        "reserve": opts.reserve,
        "document_tokens": whole.document_tokens,
        "tokenizer": tok.name,
        "unitizer": unit.name,
        "representation": rep.name,
        "separator": opts.separator,
        "query": query,
        "excluded": (),
        "reason": ("document fits" if docs is None else "documents fit")
        + " the budget: sent whole and verbatim",
    }
    deferred = {"units", "n_units", "documents"}
    alone: dict[str, Callable[[], Any]] = {}
    if router is not None:
        # the route reads phi and rho, which read the units' encoding
        deferred |= {"selector", "relevance_source", "params", "stats", "route"}
    else:
        sel = cast(Selector, chosen)
        known["selector"] = sel.name
        known["relevance_source"] = NOT_ENCODED
        # the dialogue statistics read the text's lines (0.3-0.5x the count at 2k tokens):
        # made when read, on their own
        texts = [whole.text] if docs is None else [d.text for d in docs]
        alone["stats"] = lambda: _cheap_stats(
            whole.document_tokens, capacity, dialogue_turns(texts)
        )
        known["route"] = None
        if opts.profile == "auto":
            deferred.add("params")  # the clinical profile applies if the units have its sections
        else:
            params = {"unitizer": unit.params(), "representation": rep.params()}
            if opts.profile is not None:
                params["profile"] = get_profile(opts.profile).params()
            known["params"] = {"selector": sel.params(), **params}
    # what the full preparation reads: the validated input (docs is a copy of the caller's
    # list, which may change later) and the checked options
    known["timings_ms"] = {"count": count_ms, "total": _ms(t_start)}
    return deferred_context(
        lambda: _prepare(documents, **opts.prepare_options(), checked=checked)._select(
            budget, opts, chosen
        ),
        deferred,
        alone,
        **known,
    ), None


_check_reserve = check_reserve  # the old name


def _check_order(order: str, *, several: bool) -> None:
    if order != "document" and several:
        raise InvalidParameterError(
            f"order={order!r} is not supported with several documents: the context is grouped "
            "by document, in input order. Use order='document'.",
            parameter="order",
            value=order,
        )


#: whether each of budgetctx's own classes is a Router (see _is_router)
_ROUTER_CLASSES: dict[type, bool] = {}


def _is_router(obj: object) -> TypeGuard[Router]:
    """``isinstance(obj, Router)``, remembered per class for budgetctx's own classes: Router
    is a runtime protocol, whose check looks up its attributes on every call (~10 us), and
    the instances of budgetctx's classes have no attributes their class does not give them
    (a caller's class is checked every time: its instances may)."""
    cls = type(obj)
    known = _ROUTER_CLASSES.get(cls)
    if known is None:
        known = isinstance(obj, Router)
        if cls.__module__.startswith("budgetctx."):
            _ROUTER_CLASSES[cls] = known
    return known


def _resolve_selector(
    selector: str | Selector | Router, options: Mapping[str, Any] | None
) -> Selector | Router:
    """The selector or router of one call: ``"auto"`` is the bundled router (read once per
    process); a router instance is used as given; anything else (a name, a spec such as
    ``"mmr:lambda_=0.5"``, an instance) builds a selector."""
    router: Router | None = None
    if isinstance(selector, str) and selector.strip().lower() == "auto":
        router = default_router()
    elif not isinstance(selector, str) and _is_router(selector):
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


def _problem(
    doc: PreparedDocument, budget: int, features: UnitFeatures | None = None
) -> SelectionProblem:
    return SelectionProblem(
        unit_segments=doc.unit_segments,
        segment_costs=doc.segment_costs,
        features=doc.features if features is None else features,
        # Costs include one separator per segment, the last one too: it is not rendered, but
        # ".\n" is often a single token, so counting it is what keeps repairs rare.
        capacity=budget,
        overlapping=doc.overlapping,
        positions=doc.unit_positions,
    )


def _stats(doc: PreparedDocument, problem: SelectionProblem) -> DocumentStats:
    kernel = doc.features.kernel
    return document_stats(
        relevance=doc.features.relevance,
        unit_costs=problem.unit_costs,
        adjacency=kernel.adjacent() if problem.n > 1 else np.zeros(0),
        document_tokens=doc.document_tokens,
        budget=problem.capacity,
        turns=doc.turn_statistics,
    )


#: ``Context.relevance_source`` when the units were not encoded: their relevance (and a lead
#: or shuffled selection's gains) are NaN, and the route statistics hold no phi and rho.
NOT_ENCODED = "not computed"

#: Selectors that read the features only to report them: each unit's relevance becomes its
#: gain, and nothing else (exact types: a subclass may read more).
_READS_NO_FEATURES = (LeadSelector, ShuffledSelector)


def _unread_features(n: int) -> UnitFeatures:
    """Features for a selection that reads none: NaN relevance, and a kernel that raises if
    anything asks it for a similarity."""
    return UnitFeatures(
        relevance=np.full(n, np.nan), kernel=UnreadKernel(n), relevance_source=NOT_ENCODED
    )


def _needs_features(
    doc: PreparedDocument,
    chosen: Selector | Router,
    capacity: int,
    *,
    whole_if_fits: bool,
    truncate: bool,
    pinned: bool,
) -> bool:
    """Whether this selection reads the units' encoding: a router reads the route
    statistics; a document sent whole reads nothing; lead and shuffled read nothing unless
    the caller's pins are ranked by relevance or a unit may be truncated (the most relevant
    one is). A profile's pins are kept in the profile's own order, which reads none."""
    if _is_router(chosen) or not doc.segmentation.units:
        return True
    if whole_if_fits and _fits(doc, capacity):
        return False
    if type(chosen) in _READS_NO_FEATURES:
        return pinned or truncate
    return True


def _cheap_stats(
    document_tokens: int, capacity: int, turns: TurnStatistics | None
) -> dict[str, Any]:
    """The route statistics that need no encoding: length, budget ratio and the dialogue's;
    phi and rho (relevance and adjacent similarity) are left out."""
    out = document_stats(
        relevance=np.zeros(0),
        unit_costs=np.zeros(0, dtype=np.int64),
        adjacency=np.zeros(0),
        document_tokens=document_tokens,
        budget=capacity,
        turns=turns,
    ).to_dict()
    del out["phi"], out["rho"]
    return out


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


def _fits(doc: PreparedDocument, capacity: int) -> bool:
    """Whether everything fits ``capacity``, exactly counted. For several documents the sum of
    the parts can exceed the whole by the merges across each join (a token or two), so the
    combined text is counted only when the parts are that close."""
    slack = 0 if doc.layout is None else 2 * len(doc.layout.documents)
    return doc.document_tokens <= capacity + slack and doc.exact_tokens <= capacity


def _select_pinned(
    sel: Selector,
    problem: SelectionProblem,
    pinned: Sequence[int],
    on_pin_overflow: str,
    priority: Sequence[int] = (),
    slack: int = 0,
) -> tuple[list[int], Selection, list[str]]:
    """Keep the pinned units first (most relevant first while they fit), then let ``sel``
    choose among the other units in the budget they leave, and ``slack`` tokens more (the
    last separator's, counted in the costs but never rendered; :func:`fit_budget` checks).

    Returns the kept pinned units, the selector's choice in the problem's unit ids, and notes.
    """
    if not pinned:
        wider = replace(problem, capacity=problem.capacity + slack) if slack else problem
        return [], sel.select(wider), []
    tracker = problem.tracker()
    relevance = problem.relevance
    # a profile's pins come first, in its order (allergies before follow-up); then the rest
    rank = {u: k for k, u in enumerate(priority)}
    ranked = sorted(pinned, key=lambda u: (rank.get(u, len(rank)), -relevance[u], u))
    kept: list[int] = []
    left_out: list[int] = []
    for u in ranked:
        if tracker.fits(u):
            tracker.add(u)
            kept.append(u)
        else:
            left_out.append(u)
    notes: list[str] = []
    if left_out:
        need = int(sum(problem.unit_costs[u] for u in pinned))
        if on_pin_overflow == "error":
            raise InputError(
                f"The pinned units need about {need} tokens but the budget leaves "
                f"{problem.capacity}: {len(pinned)} units are pinned. Raise the budget, lower "
                "reserve, pin less, or pass on_pin_overflow='rank' to keep the most relevant "
                "pinned units that fit.",
                parameter="pin",
                value=need,
            )
        notes.append(
            f"pinned units need about {need} tokens, more than the {problem.capacity} "
            f"available: kept {len(kept)} of {len(pinned)} pinned units, "
            + ("in the profile's order " if priority else "most relevant first ")
            + f"(left out: {sorted(left_out)})"
        )
    pinned_set = set(pinned)
    rest = [
        u
        for u in range(problem.n)
        if u not in pinned_set and not tracker.is_selected[u] and tracker.marginal[u] > 0
    ]
    if not rest or tracker.remaining <= 0:
        return kept, Selection((), ()), notes
    covered = sorted({s for u in kept for s in problem.unit_segments[u]})
    costs = problem.segment_costs.copy()
    costs[covered] = 0  # already paid by the pinned units (shared headers, window overlaps)
    sub = SelectionProblem(
        unit_segments=tuple(problem.unit_segments[u] for u in rest),
        segment_costs=costs,
        features=subset_features(problem.features, rest),
        capacity=int(tracker.remaining) + slack,
        overlapping=problem.overlapping,
        positions=problem.unit_positions()[rest],
    )
    chosen = sel.select(sub)
    mapped = Selection(
        order=tuple(rest[i] for i in chosen.order),
        gains=chosen.gains,
        overflow=rest[chosen.overflow] if chosen.overflow is not None else None,
        objective=chosen.objective,
        note=chosen.note,
    )
    return kept, mapped, notes


def _summaries(
    doc: PreparedDocument,
    pieces: Sequence[Piece],
    kept: Sequence[int],
    *,
    whole: bool,
    context: tuple[str, int],
) -> tuple[DocumentSummary, ...]:
    """Per input document: what it had and what it gave to the context (``context``: the
    context's text and exact count, which are one document's part when there is one)."""
    layout = doc.layout
    seg = doc.segmentation
    if layout is None:
        return (
            DocumentSummary(
                index=0,
                id=None,
                tokens=doc.document_tokens,
                tokens_kept=context[1],
                units=len(seg.units),
                units_kept=len(kept),
                text=context[0],
            ),
        )
    n_docs = len(layout.documents)
    parts: list[list[str]] = [[] for _ in range(n_docs)]
    for p in pieces:
        parts[layout.document_of(p.start)].append(seg.document[p.start : p.end])
    n_units = [len(s.units) for s in doc.document_segmentations]
    firsts = np.cumsum([0, *n_units])
    n_kept = [0] * n_docs
    for uid in kept:
        n_kept[int(np.searchsorted(firsts, uid, side="right")) - 1] += 1
    if whole:
        texts = [d.text if n_units[i] else "" for i, d in enumerate(layout.documents)]
        counts = [doc.documents_tokens[i] if n_units[i] else 0 for i in range(n_docs)]
    else:
        texts = [doc.separator.join(p) for p in parts]
        counts = doc.tokenizer.count_batch(texts)
    return tuple(
        DocumentSummary(
            index=i,
            id=d.id,
            tokens=doc.documents_tokens[i],
            tokens_kept=int(counts[i]),
            units=n_units[i],
            units_kept=n_kept[i],
            text=texts[i],
            metadata=d.metadata,
        )
        for i, d in enumerate(layout.documents)
    )


def _select(
    doc: PreparedDocument,
    budget: int,
    chosen: Selector | Router,
    order: Literal["document", "selection"],
    truncate: bool,
    whole_if_fits: bool,
    *,
    pin: Pin | Sequence[Pin] | None = None,
    reserve: int = 0,
    on_pin_overflow: str = "rank",
) -> Context:
    t_start = time.perf_counter()
    capacity = budget - reserve
    pinned = (
        pinned_units(pin, doc.local_units, sections=doc.unit_sections, local_units=doc.local_units)
        if pin is not None
        else []
    )
    encode = _needs_features(
        doc,
        chosen,
        capacity,
        whole_if_fits=whole_if_fits,
        truncate=truncate,
        pinned=bool(pinned),
    )
    problem = _problem(doc, capacity, None if encode else _unread_features(doc.n_units))
    full_stats = _stats(doc, problem) if encode else None
    route: RouteDecision | None = None
    if _is_router(chosen):
        assert full_stats is not None  # a router always encodes (_needs_features)
        sel, route = _route(chosen, doc, full_stats, capacity)
    else:
        sel = cast(Selector, chosen)
    seg, tok, separator, layout = doc.segmentation, doc.tokenizer, doc.separator, doc.layout
    relevance = problem.relevance
    timings = {k: v for k, v in doc.timings_ms.items() if k != "prepare"}
    share = PROFILE_SHARE if doc.query is None else PROFILE_SHARE_WITH_QUERY
    profile_pins, profile_left = _profile_share(doc.profile_pins, problem, capacity, share)
    if profile_pins:
        pinned = sorted({*pinned, *profile_pins})
    common: dict[str, Any] = {
        "budget": budget,
        "reserve": reserve,
        "separator": separator,
        "query": doc.query,
        "params": {"selector": sel.params(), **doc.params},
        "relevance_source": problem.features.relevance_source,
        "stats": full_stats.to_dict()
        if full_stats is not None
        else _cheap_stats(doc.document_tokens, capacity, doc.turn_statistics),
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
            reason="empty input: "
            + ("the document has" if layout is None else "the documents have")
            + " no non-whitespace text",
            timings_ms=timings,
            documents=_summaries(doc, (), (), whole=False, context=("", 0)),
            **common,
        )

    if whole_if_fits and _fits(doc, capacity):
        # Nothing to cut: send everything verbatim, every unit kept (and credited with
        # the segments it holds first).
        ids = list(range(len(seg.units)))
        _, pieces = render(seg, ids, separator, "document", layout=layout)
        kept = selected_units(
            seg,
            pieces,
            problem.unit_costs,
            relevance,
            kept=ids,
            gains={},
            ranks={u: u for u in ids},
            layout=layout,
            pinned=frozenset(pinned),
        )
        timings["total"] = total()
        what = "document fits" if layout is None else "documents fit"
        return Context(
            text=doc.text,
            tokens_used=doc.exact_tokens,
            units=kept,
            excluded=(),
            reason=f"{what} the budget: sent whole and verbatim",
            timings_ms=timings,
            documents=_summaries(
                doc, pieces, ids, whole=True, context=(doc.text, doc.exact_tokens)
            ),
            **common,
        )

    t = time.perf_counter()
    with blas_threads(sel.name):
        first, selection, pin_notes = _select_pinned(
            sel,
            problem,
            pinned,
            on_pin_overflow,
            priority=profile_pins,
            slack=doc.separator_slack,
        )
    if doc.profile_note is not None:
        pin_notes.insert(0, doc.profile_note)
        if profile_left:
            pin_notes.insert(
                1,
                f"the profile's pins past {share:.0%} of the budget were left to the "
                f"selector (units {sorted(profile_left)})",
            )
    timings["select"] = _ms(t)
    t = time.perf_counter()
    out = fit_budget(
        seg,
        selection,
        problem,
        tok,
        separator=separator,
        order=order,
        truncate=truncate,
        layout=layout,
        first=first,
    )
    timings["render"] = _ms(t)
    ranks = {u: k for k, u in enumerate([*first, *selection.order])}
    kept_ids = list(out.chosen)
    if out.truncated is not None:
        kept_ids.append(out.truncated[0])
        ranks[out.truncated[0]] = out.truncated[1]
    kept_set = set(kept_ids)
    units = selected_units(
        seg,
        out.pieces,
        problem.unit_costs,
        relevance,
        kept=kept_ids,
        gains=dict(zip(selection.order, selection.gains, strict=True)),
        ranks=ranks,
        truncated=out.truncated[0] if out.truncated is not None else None,
        layout=layout,
        pinned=frozenset(u for u in first if u in kept_set),
    )
    notes = pin_notes + ([selection.note] if selection.note else []) + list(out.notes)
    timings["total"] = total()
    return Context(
        text=out.text,
        tokens_used=out.tokens,
        units=units,
        excluded=tuple(u for u in range(len(seg.units)) if u not in kept_set),
        reason=None
        if units
        else _empty_reason(
            seg, tok, capacity, truncate, selector=sel.name, unit_costs=problem.unit_costs
        ),
        notes=tuple(notes),
        timings_ms=timings,
        documents=_summaries(
            doc, out.pieces, kept_ids, whole=False, context=(out.text, out.tokens)
        ),
        **common,
    )


def _empty_reason(
    seg: Segmentation,
    tok: Tokenizer,
    budget: int,
    truncate: bool,
    *,
    selector: str,
    unit_costs: NDArray[np.int64],
) -> str:
    smallest = min(tok.count(u.text) for u in seg.units)
    cheapest = int(unit_costs.min()) if len(unit_costs) else smallest
    if cheapest <= budget:
        # Some unit would have fitted: the selector's own order ruled it out (lead takes a
        # prefix, sliding a window), so "no unit fits" would be wrong.
        return (
            f"the {selector} selector kept no unit: the units it takes first need more than "
            f"the budget of {budget} tokens, although the cheapest unit needs {cheapest} "
            "(with its separator); use a selector that chooses by value (e.g. 'mmr'), raise "
            "the budget, or pass truncate=True"
        )
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
