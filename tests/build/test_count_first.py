"""Issue 27, session 6 part I: the count-first exit.

A document (or a set of documents) that fits the budget is counted once and sent whole; it is
neither segmented nor encoded until a field that reads its units is read (``units``,
``n_units``, ``documents``, ...). Those fields then hold what the full preparation gives, which
these tests compare with the path that prepares first (``_prepare(...)._select``).
"""

from __future__ import annotations

import dataclasses
import pickle
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budgetctx import Document, build_context
from budgetctx._core.results import Context, SelectedUnit
from budgetctx._errors import InputError
from budgetctx.build._options import BuildOptions
from budgetctx.build._pipeline import NOT_ENCODED, Documents, _prepare, _resolve_selector
from budgetctx.representations import TfidfRepresentation
from budgetctx.tokenizers import TiktokenTokenizer
from budgetctx.unitizers._sentence import SentenceUnitizer


def _prepared_first(documents: Documents, budget: int, **options: Any) -> Context:
    """The context by the path without the exit: prepare everything, then select."""
    opts = BuildOptions.merge(None, "test", **options)
    chosen = _resolve_selector(opts.selector, opts.selector_options)
    return _prepare(documents, **opts.prepare_options())._select(budget, opts, chosen)


def _without_timings(ctx: Context) -> dict[str, Any]:
    out = ctx.to_dict()
    del out["timings_ms"]
    return out


def _deferred(ctx: Context) -> bool:
    return "_pending" in ctx.__dict__


@pytest.fixture()
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """Counts the sentence unitizer's, the tokenizer's and the TF-IDF encoder's work, and
    keeps the texts the tokenizer encoded whole (``encoded``)."""
    seen: dict[str, Any] = {"unitize": 0, "count_segments": 0, "encode": 0, "encoded": []}

    def spy(cls: type, name: str, key: str) -> None:
        real = getattr(cls, name)

        def counted(self: Any, *args: Any, **kw: Any) -> Any:
            seen[key] += 1
            return real(self, *args, **kw)

        monkeypatch.setattr(cls, name, counted)

    spy(SentenceUnitizer, "unitize", "unitize")
    spy(TiktokenTokenizer, "count_segments", "count_segments")
    spy(TfidfRepresentation, "encode", "encode")
    for name in ("count", "_encode_array"):
        real = getattr(TiktokenTokenizer, name)

        def keep(self: Any, text: str, real: Any = real) -> Any:
            seen["encoded"].append(text)
            return real(self, text)

        monkeypatch.setattr(TiktokenTokenizer, name, keep)
    yield seen


@pytest.mark.parametrize("selector", ["mmr", "lead", "auto"])
def test_a_fitting_document_is_counted_once_and_segmented_only_when_units_are_read(
    sample_note: str, calls: dict[str, Any], selector: str
) -> None:
    ctx = build_context(sample_note, 100_000, selector=selector)
    assert calls == {"unitize": 0, "count_segments": 0, "encode": 0, "encoded": [sample_note]}
    assert ctx.text == sample_note
    assert ctx.reason == "document fits the budget: sent whole and verbatim"
    assert ctx.tokens_used == ctx.document_tokens == TiktokenTokenizer().count(sample_note)
    calls["encoded"].clear()
    assert ctx.timings_ms["total"] >= ctx.timings_ms["count"] >= 0
    assert ctx.excluded == ()
    if selector != "auto":
        assert ctx.relevance_source == NOT_ENCODED and ctx.route is None
        assert ctx.selector == selector and ctx.stats["length"] == ctx.document_tokens
    assert calls["unitize"] == 0 and calls["encode"] == 0  # still nothing segmented
    units = ctx.units
    assert calls["unitize"] == 1 and calls["count_segments"] == 1
    assert sample_note not in calls["encoded"]  # preparing read the first encoding
    assert calls["encode"] == (1 if selector == "auto" else 0)  # the route reads phi, rho
    assert isinstance(units, tuple) and all(isinstance(u, SelectedUnit) for u in units)
    assert ctx.n_units == len(units) and ctx.kept_ids == tuple(range(len(units)))
    assert ctx.documents[0].units_kept == len(units)
    assert ctx.units is units  # computed once
    assert calls["unitize"] == 1


def test_what_does_not_fit_is_prepared_at_once(sample_note: str, calls: dict[str, Any]) -> None:
    ctx = build_context(sample_note, 200, selector="lead")
    assert not _deferred(ctx) and calls["unitize"] == 1
    # what does not fit is encoded once: the count-first encoding is what preparing reads
    assert calls["count_segments"] == 1 and calls["encoded"].count(sample_note) == 1
    several = ["Chest pain. " * 80, "No fever. " * 80]
    ctx = build_context(several, 100)
    assert not _deferred(ctx) and [calls["encoded"].count(t) for t in several] == [1, 1]


def test_the_count_first_encoding_is_timed_as_counting(
    sample_note: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A document that does not fit: its first encoding, made before preparing, is part of
    # the context's "count" and of its totals (it was, when preparing made it).
    import time

    from budgetctx.build import _pipeline

    real = _pipeline.whole_text

    def slow(*args: Any, **kw: Any) -> Any:
        time.sleep(0.05)
        return real(*args, **kw)

    monkeypatch.setattr(_pipeline, "whole_text", slow)
    ctx = build_context(sample_note, 200, selector="lead")
    assert not _deferred(ctx)
    assert ctx.timings_ms["count"] >= 50
    assert ctx.timings_ms["total"] >= ctx.timings_ms["count"] + ctx.timings_ms["unitize"]


def test_pins_and_blank_input_take_the_full_path(sample_note: str) -> None:
    ctx = build_context(sample_note, 100_000, pin="allergies")
    assert not _deferred(ctx) and any(u.pinned for u in ctx.units)
    empty = build_context("  \n ", 10)
    assert not _deferred(empty) and empty.reason is not None and "empty" in empty.reason


def test_bad_input_fails_at_once_not_on_first_read() -> None:
    with pytest.raises(InputError, match="NUL"):
        build_context("Chest pain.\x00", 100)
    with pytest.raises(InputError, match=r"documents\[1\]"):
        build_context(["Chest pain.", "No\x00 fever."], 100)


_WORDS = st.sampled_from(
    ["Chest", "pain", "fever", "Allergies:", "penicillin", "ok", "Dr.", "3.5mg", "é", "—"]
)
_SENTENCE = st.lists(_WORDS, min_size=1, max_size=6).map(lambda w: " ".join(w) + ".")
_TEXT = st.lists(_SENTENCE, min_size=0, max_size=8).flatmap(
    lambda s: st.sampled_from(["\n", " ", "\n\n", "  "]).map(lambda sep: sep.join(s))
)
_HEADINGS = st.sampled_from(["", "ALLERGIES: penicillin.\n", "A: Hi there.\nB: Yeah.\n"])
_INPUT = st.one_of(
    st.tuples(_HEADINGS, _TEXT).map("".join),
    st.lists(
        st.one_of(_TEXT, st.tuples(_HEADINGS, _TEXT).map("".join), st.just("  ")),
        min_size=1,
        max_size=3,
    ),
)
_OPTIONS = st.fixed_dictionaries(
    {
        "selector": st.sampled_from(["mmr", "lead", "auto", "facility"]),
        "reserve": st.sampled_from([0, 3]),
        "profile": st.sampled_from(["auto", None, "clinical"]),
        "query": st.sampled_from([None, "chest pain", "  "]),
        "document_header": st.sampled_from(["[{id}]", None]),
        "separator": st.sampled_from(["\n", " "]),
    }
)


@pytest.mark.filterwarnings("ignore::budgetctx._errors.BudgetCtxWarning")  # pins, queries
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents=_INPUT, budget=st.integers(4, 160), options=_OPTIONS)
def test_deferred_fields_equal_what_the_full_preparation_gives(
    documents: str | list[str], budget: int, options: dict[str, Any]
) -> None:
    if isinstance(documents, str) and options["document_header"] is None:
        options = {**options, "pin": "allergies"}  # pins: the full path, the same context
    ctx = build_context(documents, budget, **options)
    full = _prepared_first(documents, budget, **options)
    assert _without_timings(ctx) == _without_timings(full)
    assert dataclasses.replace(ctx, timings_ms=full.timings_ms) == full
    assert type(ctx.units) is tuple and ctx.tokens_used <= ctx.available


def test_the_documents_deferred_fields_equal_the_full_preparations() -> None:
    docs = [
        Document("Allergies: penicillin. Chest pain.", id="gp", metadata={"k": 1}),
        Document("   "),
        "Troponin negative. Discharged home.",
    ]
    ctx = build_context(docs, 500)
    assert _deferred(ctx) and ctx.reason == "documents fit the budget: sent whole and verbatim"
    full = _prepared_first(docs, 500)
    docs.append("A later note.")  # the caller's list changes: the context does not
    assert ctx.documents == full.documents and ctx.units == full.units
    assert [d.units for d in ctx.documents] == [2, 0, 2]


def test_pickling_before_and_after_reading_units(sample_note: str) -> None:
    full = _prepared_first(sample_note, 100_000, selector="auto")
    before = build_context(sample_note, 100_000, selector="auto")
    restored = pickle.loads(pickle.dumps(before))  # pickling computes what was deferred
    assert not _deferred(restored) and not _deferred(before)
    assert _without_timings(restored) == _without_timings(full)
    after = build_context(sample_note, 100_000)
    assert after.units
    assert pickle.loads(pickle.dumps(after)) == after


def test_threads_reading_units_at_once_compute_them_once(
    sample_note: str, calls: dict[str, Any]
) -> None:
    ctx = build_context(sample_note, 100_000)
    start = threading.Barrier(4)
    got: list[tuple[SelectedUnit, ...]] = []

    def read() -> None:
        start.wait()
        got.append(ctx.units)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and all(g is got[0] for g in got)
    assert calls["unitize"] == 1


def test_a_deferred_context_stays_frozen_and_replaceable(sample_note: str) -> None:
    ctx = build_context(sample_note, 100_000)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.units = ()  # type: ignore[misc]
    other = dataclasses.replace(ctx, budget=200_000)
    assert other.units == ctx.units and other.budget == 200_000
    assert repr(ctx).startswith("Context(text=")


class _MaybeRouter:
    """A caller's class whose instances are routers only when given a ``route``."""

    tokenizer = None

    def __init__(self, *, routes: bool) -> None:
        if routes:
            self.route = lambda stats, budget: _always_lead(stats)


def _always_lead(stats: Any) -> Any:
    from budgetctx import RouteDecision

    return RouteDecision("lead", "always", "always lead", stats)


@pytest.mark.parametrize("budget", [4, 400])
def test_a_callers_router_is_recognised_per_instance(budget: int) -> None:
    # session 6, part K: whether an object is a Router is remembered per class only for
    # budgetctx's own classes; a caller's instance is checked each time
    from budgetctx import InvalidParameterError
    from budgetctx.build._pipeline import _ROUTER_CLASSES, _is_router
    from budgetctx.selectors import MMRSelector

    text = "Chest pain. Troponin negative. Discharged home."
    assert build_context(text, budget, selector=_MaybeRouter(routes=True)).selector == "lead"
    with pytest.raises(InvalidParameterError, match="'selector' parameter"):
        build_context(text, budget, selector=_MaybeRouter(routes=False))  # type: ignore[arg-type]
    assert _MaybeRouter not in _ROUTER_CLASSES
    assert not _is_router(MMRSelector()) and _ROUTER_CLASSES[MMRSelector] is False
    assert not _is_router("auto")
