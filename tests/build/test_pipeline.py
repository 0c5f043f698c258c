"""build_context: bad input, degenerate budgets, relevance options, results."""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pytest

from budgetctx import (
    BudgetCtxWarning,
    InputError,
    InvalidParameterError,
    UnknownComponentError,
    build_context,
    get_tokenizer,
    list_selectors,
)
from budgetctx.representations import TfidfRepresentation

NOTE = (
    "CHIEF COMPLAINT: Shortness of breath.\n"
    "HOSPITAL COURSE: She was diuresed with IV furosemide. Apixaban was continued at 5 mg.\n"
    "DISCHARGE MEDICATIONS:\n1. Torsemide 40 mg daily.\n2. Apixaban 5 mg b.i.d.\n"
)


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t \n"])
def test_empty_input_gives_empty_context_with_reason(text: str) -> None:
    ctx = build_context(text, 100)
    assert ctx.text == ""
    assert ctx.tokens_used == 0
    assert ctx.units == ()
    assert ctx.reason is not None and "empty" in ctx.reason


@pytest.mark.parametrize("budget", [0, -1, -512])
def test_non_positive_budget_is_an_error(budget: int) -> None:
    with pytest.raises(InvalidParameterError) as info:
        build_context(NOTE, budget)
    assert info.value.parameter == "budget"
    assert str(budget) in str(info.value)


@pytest.mark.parametrize("budget", [1.5, "512", True, None])
def test_non_integer_budget_is_an_error(budget: object) -> None:
    with pytest.raises(InvalidParameterError, match="budget"):
        build_context(NOTE, budget)  # type: ignore[arg-type]


def test_numpy_integer_budget_is_accepted() -> None:
    assert build_context(NOTE, np.int64(20)).tokens_used <= 20


def test_bytes_and_binary_input_are_rejected() -> None:
    with pytest.raises(InputError, match="decode"):
        build_context(NOTE.encode(), 50)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="offset 5"):
        build_context("Chest\x00pain", 50)
    with pytest.raises(InputError, match="str"):
        build_context(12345, 50)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [{"selector": "nope"}, {"unitizer": "nope"}, {"tokenizer": "nope"}, {"representation": "nope"}],
)
def test_unknown_component_lists_valid_names(kwargs: dict[str, str]) -> None:
    with pytest.raises(UnknownComponentError) as info:
        build_context(NOTE, 50, **kwargs)
    assert "nope" in str(info.value)
    assert info.value.available and all(name in str(info.value) for name in info.value.available)


def test_bad_order_and_separator() -> None:
    with pytest.raises(InvalidParameterError, match="order"):
        build_context(NOTE, 50, order="random")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="separator"):
        build_context(NOTE, 50, separator=None)  # type: ignore[arg-type]


def test_budget_larger_than_document_returns_it_whole_and_verbatim() -> None:
    ctx = build_context(NOTE, 10_000)
    assert ctx.text == NOTE
    assert ctx.tokens_used == ctx.document_tokens == get_tokenizer("o200k_base").count(NOTE)
    assert ctx.excluded == ()
    assert [u.id for u in ctx.units] == list(range(ctx.n_units))
    assert ctx.reason is not None and "fits" in ctx.reason
    assert ctx.tokens_saved == 0


LONG_UNIT = (
    "The patient is a 71 y.o. woman with heart failure with reduced ejection fraction, type 2 "
    "diabetes, chronic kidney disease and atrial fibrillation on apixaban who presented with a "
    "week of dyspnea. Discharged."
)


@pytest.mark.parametrize("selector", list_selectors())
def test_unit_longer_than_budget_is_never_silently_exceeded(selector: str) -> None:
    ctx = build_context(LONG_UNIT.replace(" Discharged.", ""), 10, selector=selector)
    assert ctx.text == ""
    assert ctx.units == ()
    assert ctx.reason is not None
    assert "truncate=True" in ctx.reason and "10" in ctx.reason


@pytest.mark.parametrize("selector", list_selectors())
def test_truncate_cuts_one_unit_at_a_token_boundary(selector: str) -> None:
    text = LONG_UNIT.replace(" Discharged.", "")
    ctx = build_context(text, 10, selector=selector, truncate=True)
    tok = get_tokenizer("o200k_base")
    assert 0 < ctx.tokens_used <= 10
    assert tok.count(ctx.text) == ctx.tokens_used
    (unit,) = ctx.units
    assert unit.truncated
    ((a, b),) = unit.spans
    assert a == 0 and b < len(text)
    assert ctx.text == text[a:b]
    assert text.startswith(ctx.text)
    assert any("truncated" in note for note in ctx.notes)


def test_truncate_fills_what_is_left_after_whole_units() -> None:
    text = "Discharged home. " + LONG_UNIT
    ctx = build_context(text, 20, selector="lead", truncate=True)
    assert ctx.tokens_used <= 20
    assert [u.truncated for u in ctx.units] == [False, True]
    assert ctx.units[0].text == "Discharged home."


def test_query_drives_relevance() -> None:
    ctx = build_context(NOTE, 12, selector="rcd", query="apixaban dose")
    assert ctx.relevance_source == "query"
    assert "Apixaban" in ctx.text
    assert ctx.query == "apixaban dose"


def test_query_without_overlap_falls_back_to_centroid_with_warning() -> None:
    words_only = TfidfRepresentation(semantic=False)
    with pytest.warns(BudgetCtxWarning, match="centroid"):
        ctx = build_context(NOTE, 20, query="zebra xylophone", representation=words_only)
    assert ctx.relevance_source == "centroid (query matched no unit)"
    # by meaning (the default), a query that shares no word still has a nearest unit
    assert build_context(NOTE, 20, query="zebra xylophone").relevance_source == "query"
    with pytest.warns(BudgetCtxWarning, match="centroid"):
        ctx = build_context(NOTE, 20, query="which of them")  # stop words only, both ways
    assert ctx.relevance_source == "centroid (query matched no unit)"


def test_blank_query_means_no_query() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ctx = build_context(NOTE, 20, query="   ")
    assert ctx.relevance_source == "centroid" and ctx.query is None


def test_section_weights_steer_relevance() -> None:
    base = build_context(NOTE, 20, unitizer="section", selector="rcd")
    boosted = build_context(
        NOTE,
        20,
        unitizer="section",
        selector="rcd",
        section_weights={"discharge medications": 5.0, "hospital course": 0.0},
    )
    sections = {u.section for u in boosted.units}
    assert "DISCHARGE MEDICATIONS" in sections
    assert all(u.relevance == 0.0 for u in boosted.units if u.section == "HOSPITAL COURSE")
    assert base.units != boosted.units
    with pytest.raises(InvalidParameterError, match="section_weights"):
        build_context(NOTE, 20, unitizer="section", section_weights={"plan": -1})


def test_selection_order_rendering() -> None:
    doc_order = build_context(NOTE, 25, selector="mmr", profile=None)
    sel_order = build_context(NOTE, 25, selector="mmr", order="selection", profile=None)
    assert {u.id for u in doc_order.units} == {u.id for u in sel_order.units}
    first = min(sel_order.units, key=lambda u: u.rank)
    assert sel_order.text.startswith(first.text)


def test_provenance_and_json() -> None:
    ctx = build_context(NOTE, 25, unitizer="section", selector="mmr")
    data = json.loads(json.dumps(ctx.to_dict()))
    assert data["tokens_used"] == ctx.tokens_used <= 25
    assert data["tokens_saved"] == ctx.document_tokens - ctx.tokens_used
    assert sorted(u["id"] for u in data["units"]) == [u.id for u in ctx.units]
    for unit in data["units"]:
        for a, b in unit["spans"]:
            assert NOTE[a:b] in ctx.text
    assert set(data["timings_ms"]) >= {"unitize", "count", "represent", "select", "render", "total"}
    assert data["params"]["selector"]["lambda_"] == 0.7
    with pytest.raises(AttributeError):
        ctx.text = "changed"  # type: ignore[misc]


def test_options_reach_components() -> None:
    ctx = build_context(
        NOTE,
        25,
        selector="mmr",
        selector_options={"lambda_": 0.2},
        unitizer="window",
        unitizer_options={"base_words": 10},
    )
    assert ctx.params["selector"]["lambda_"] == 0.2
    assert ctx.params["unitizer"]["base_words"] == 10


def test_windows_share_tokens_once() -> None:
    text = " ".join(f"Sentence number {i} talks about topic {i % 3}." for i in range(40))
    ctx = build_context(
        text, 120, unitizer="window", unitizer_options={"base_words": 20}, selector="lead"
    )
    assert len(ctx.units) >= 2
    # overlapping windows render their shared sentences once
    assert ctx.text.count("Sentence number 1 talks") == 1
    assert ctx.tokens_used <= 120


@pytest.mark.slow
def test_embeddings_representation_offline(sample_note: str) -> None:
    ctx = build_context(
        sample_note,
        128,
        representation="embeddings",
        selector="rcd",
        query="which medications changed at discharge",
    )
    assert ctx.representation == "embeddings"
    assert ctx.relevance_source == "query"
    assert 0 < ctx.tokens_used <= 128
    assert any("mg" in u.text for u in ctx.units)


def test_prepare_once_select_many_equals_build_context() -> None:
    from budgetctx import prepare

    doc = prepare(NOTE, unitizer="section", query="apixaban")
    for selector in list_selectors():
        for budget in (8, 20, 40, 10_000):
            once = build_context(
                NOTE, budget, unitizer="section", query="apixaban", selector=selector
            )
            again = doc.select(budget, selector=selector)
            assert again.text == once.text
            assert again.units == once.units
            assert again.excluded == once.excluded
            assert again.reason == once.reason


def test_prepared_select_validates() -> None:
    from budgetctx import prepare

    doc = prepare(NOTE)
    with pytest.raises(InvalidParameterError, match="budget"):
        doc.select(0)
    with pytest.raises(UnknownComponentError):
        doc.select(10, selector="nope")
    assert prepare("   ").select(10).reason is not None


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"truncate": "yes"}, "truncate"),
        ({"truncate": 1}, "truncate"),
        ({"section_weights": {"PLAN": float("nan")}}, "section_weights"),
        ({"section_weights": {"PLAN": float("inf")}}, "section_weights"),
        ({"section_weights": [1, 2]}, "section_weights"),
        ({"dense_limit": "x"}, "dense_limit"),
        ({"dense_limit": -1}, "dense_limit"),
        ({"selector": None}, "selector"),
        ({"selector": 3}, "selector"),
        ({"tokenizer": None}, "tokenizer"),
        ({"unitizer": None}, "unitizer"),
        ({"representation": None}, "representation"),
        ({"query": 5}, "query"),
        ({"selector_options": [("lambda_", 0.5)]}, "selector_options"),
        ({"unitizer_options": "max_words=5"}, "unitizer_options"),
        ({"order": None}, "order"),
    ],
)
def test_bad_options_raise_one_clear_error(kwargs: dict[str, object], parameter: str) -> None:
    """F13: option types are checked at the boundary, with the one message template."""
    with pytest.raises(InvalidParameterError) as info:
        build_context(NOTE, 20, **kwargs)  # type: ignore[arg-type]
    assert info.value.parameter == parameter
    message = str(info.value)
    assert message.startswith(f"The '{parameter}' parameter of build_context must be ")
    assert "Got " in message


def test_prepared_document_checks_its_options_too() -> None:
    from budgetctx import prepare

    with pytest.raises(InvalidParameterError, match="'section_weights' parameter of prepare"):
        prepare(NOTE, section_weights={"PLAN": float("nan")})
    doc = prepare(NOTE)
    for kwargs in ({"truncate": "yes"}, {"whole_if_fits": None}, {"selector": None}):
        with pytest.raises(InvalidParameterError, match=r"of PreparedDocument\.select"):
            doc.select(20, **kwargs)  # type: ignore[arg-type]


def test_lone_surrogate_is_an_input_error_naming_the_offset() -> None:
    """F5: not a UnicodeEncodeError from deep inside the tokenizer."""
    with pytest.raises(InputError, match="offset 6") as info:
        build_context("Pain. \ud800 More text here.", 50)
    assert info.value.value == 6


@pytest.mark.parametrize(
    "text",
    ["é \udfff then \ud800", "\U0001f600\udc00", "日本\ud83d", "\ud83d\ude00 a pair", "Ünïcode"],
)
def test_non_ascii_text_is_refused_exactly_where_it_holds_a_lone_surrogate(text: str) -> None:
    # session 6, part K: strict UTF-8 decides whether to look for one (a C loop), the regex
    # finds the first (two surrogates in a row are two lone ones in a str; U+1F600 is none)
    from budgetctx.build._pipeline import _SURROGATE, validate_text

    first = _SURROGATE.search(text)
    if first is None:
        assert validate_text(text) is text
        return
    with pytest.raises(InputError, match=f"offset {first.start()}:") as info:
        validate_text(text)
    assert info.value.value == first.start()


def test_empty_context_reason_is_true_to_the_options() -> None:
    """F14: with truncate=True the reason must not advise passing truncate=True."""
    flags = "\U0001f1fa\U0001f1f8\U0001f1ec\U0001f1e7 \U0001f1eb\U0001f1f7\U0001f1e9\U0001f1ea"
    # Every regional-indicator letter takes 2 tokens: truncation cannot fit one in 1.
    cut = build_context(flags, 1, truncate=True)
    assert cut.text == "" and cut.reason is not None
    assert "pass truncate=True" not in cut.reason and "truncate=True kept no part" in cut.reason
    plain = build_context(flags, 1)
    assert plain.reason is not None and "pass truncate=True" in plain.reason


def test_selector_is_resolved_once_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    import budgetctx.build._pipeline as pipeline

    calls: list[object] = []
    real = pipeline.get_selector

    def counting(spec: object, /, **options: object) -> object:
        calls.append(spec)
        return real(spec, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "get_selector", counting)
    build_context(NOTE, 20, selector="mmr")
    assert calls == ["mmr"]
    calls.clear()
    build_context(NOTE, 20, selector="auto")
    assert len(calls) == 1 and isinstance(calls[0], str)


def test_a_custom_router_plugs_in() -> None:
    from budgetctx import DocumentStats, RouteDecision, Router

    seen: list[tuple[DocumentStats, int]] = []

    class Shortest:
        tokenizer = None

        def route(self, stats: DocumentStats, budget: int) -> RouteDecision:
            seen.append((stats, budget))
            return RouteDecision("mmr:lambda_=0.2", "shortest", "always MMR", stats)

    router = Shortest()
    assert isinstance(router, Router)
    ctx = build_context(NOTE, 20, selector=router, tokenizer="cl100k_base")
    assert ctx.selector == "mmr" and ctx.params["selector"]["lambda_"] == 0.2
    assert ctx.route is not None and ctx.route.router == "shortest"
    assert len(seen) == 1 and seen[0][1] == 20 and seen[0][0].to_dict() == ctx.stats
    with pytest.raises(InvalidParameterError, match="selector_options"):
        build_context(NOTE, 20, selector=router, selector_options={"lambda_": 0.5})


def test_whole_document_units_are_credited_once() -> None:
    from budgetctx.unitizers import WindowUnitizer

    ctx = build_context(NOTE, 10_000, unitizer=WindowUnitizer(base_words=8))
    assert ctx.reason is not None and ctx.reason.startswith("document fits")
    spans = sorted(s for u in ctx.units for s in u.spans)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    assert all(u.unit_spans for u in ctx.units)


def test_an_empty_context_says_whether_a_unit_would_have_fitted() -> None:
    note = "CHIEF COMPLAINT: Chest pain. Troponin negative x2. PLAN: aspirin."
    lead = build_context(note, 8, selector="lead")
    assert lead.units == () and lead.reason is not None
    assert lead.reason.startswith("the lead selector kept no unit")
    assert "no unit fits" not in lead.reason
    tiny = build_context(note, 2)
    assert tiny.reason is not None and tiny.reason.startswith("no unit fits the budget")
