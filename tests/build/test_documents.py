"""Several documents under one budget: layout, provenance, summaries and bad input."""

from __future__ import annotations

import pytest

from budgetctx import (
    Document,
    InputError,
    InvalidParameterError,
    build_context,
    get_tokenizer,
    prepare,
)

TOK = get_tokenizer("o200k_base")
NOTES = [
    Document("Chest pain at rest. Troponin negative twice.", id="ed"),
    Document("Echo shows EF 55%. No wall motion abnormality.", id="echo", metadata={"k": 1}),
    Document("Discharged home on aspirin. Follow up in clinic.", id="dc"),
]


def test_layout_is_exactly_as_documented() -> None:
    ctx = prepare(NOTES).select(1000, whole_if_fits=False, selector="lead")
    assert ctx.text == (
        "[ed]\nChest pain at rest.\nTroponin negative twice.\n\n"
        "[echo]\nEcho shows EF 55%.\nNo wall motion abnormality.\n\n"
        "[dc]\nDischarged home on aspirin.\nFollow up in clinic."
    )
    assert ctx.tokens_used == TOK.count(ctx.text)


def test_whole_documents_are_sent_verbatim_with_headers() -> None:
    ctx = build_context(NOTES, budget=1000)
    assert ctx.reason == "documents fit the budget: sent whole and verbatim"
    assert ctx.text == "\n\n".join(f"[{d.id}]\n{d.text}" for d in NOTES)
    assert ctx.tokens_used == TOK.count(ctx.text)
    heads = ["[ed]\n", "\n\n[echo]\n", "\n\n[dc]\n"]
    assert ctx.document_tokens == sum(TOK.count(d.text) for d in NOTES) + sum(
        TOK.count(h) for h in heads
    )
    assert [d.text for d in ctx.documents] == [d.text for d in NOTES]
    assert [d.tokens for d in ctx.documents] == [TOK.count(d.text) for d in NOTES]


def test_provenance_points_into_each_document() -> None:
    ctx = build_context(NOTES, budget=30, query="troponin echo aspirin")
    assert ctx.tokens_used <= 30
    assert {u.document for u in ctx.units} == {0, 1, 2}, "selection is global"
    for u in ctx.units:
        doc = NOTES[u.document]
        assert u.document_id == doc.id
        assert u.text == " ".join(doc.text[a:b] for a, b in u.spans)
    ids = [u.id for u in ctx.units] + list(ctx.excluded)
    assert sorted(ids) == list(range(6)), "unit ids are unique across documents"
    echo = ctx.documents[1]
    assert echo.metadata == {"k": 1}
    assert echo.units == 2
    assert echo.tokens_kept == TOK.count(echo.text)


def test_documents_with_nothing_kept_get_no_header() -> None:
    ctx = prepare(NOTES).select(12, selector="lead")
    assert ctx.text == "[ed]\nChest pain at rest."
    assert [d.units_kept for d in ctx.documents] == [1, 0, 0]
    assert ctx.documents[2].text == "" and ctx.documents[2].tokens_kept == 0


def test_header_template_fields_and_no_header() -> None:
    docs = ["Alpha beta.", "Gamma delta."]
    ctx = prepare(docs, document_header="## {number}/{index} {id}").select(100, whole_if_fits=False)
    assert ctx.text == "## 1/0 1\nAlpha beta.\n\n## 2/1 2\nGamma delta."
    bare = prepare(docs, document_header=None, document_separator="").select(
        100, whole_if_fits=False
    )
    assert bare.text == "Alpha beta.\nGamma delta."
    assert bare.units[1].spans == ((0, 12),)


def test_a_single_string_is_unchanged() -> None:
    ctx = build_context("Chest pain. Troponin negative.", budget=100)
    assert ctx.text == "Chest pain. Troponin negative."
    assert ctx.documents[0].id is None and ctx.documents[0].text == ctx.text
    assert all(u.document == 0 and u.document_id is None for u in ctx.units)


def test_empty_documents_take_no_room() -> None:
    ctx = prepare(["", "Chest pain.", "   \n"]).select(100, whole_if_fits=False)
    assert ctx.text == "[2]\nChest pain."
    assert ctx.units[0].document == 1 and ctx.units[0].spans == ((0, 11),)
    empty = build_context(["", "  "], budget=10)
    assert empty.text == "" and empty.reason is not None and "empty input" in empty.reason
    assert len(empty.documents) == 2


def test_the_list_costs_no_more_than_the_budget_with_a_reserve() -> None:
    ctx = build_context(NOTES, budget=40, reserve=15)
    assert ctx.reserve == 15
    assert ctx.tokens_used <= 25
    with pytest.raises(InvalidParameterError, match="reserve"):
        build_context(NOTES, budget=40, reserve=40)
    with pytest.raises(InvalidParameterError, match="reserve"):
        build_context(NOTES, budget=40, reserve=-1)


@pytest.mark.parametrize(
    ("documents", "match"),
    [
        ([], "empty list"),
        ([Document("a.", id="x"), Document("b.", id="x")], "share the id 'x'"),
        (["a.", 3], r"documents\[1\] is 3"),
        ([Document("a.", id=7)], r"documents\[0\]\.id is 7"),  # type: ignore[arg-type]
        (["fine.", "bad\x00text"], r"documents\[1\]: text contains a NUL"),
        (b"bytes", "bytes"),
        (42, "must be a str, a Document or a list"),
    ],
)
def test_bad_lists_get_clear_errors(documents: object, match: str) -> None:
    with pytest.raises(InputError, match=match):
        build_context(documents, budget=10)  # type: ignore[arg-type]


def test_bad_header_and_order() -> None:
    with pytest.raises(InvalidParameterError, match=r"\{id\}, \{index\} and \{number\}"):
        build_context(NOTES, budget=10, document_header="[{name}]")
    with pytest.raises(InvalidParameterError, match="grouped by document"):
        build_context(NOTES, budget=10, order="selection")


def test_a_position_prior_counts_positions_within_each_document() -> None:
    # With a steep lead prior, numbering units across the concatenation would leave the
    # second document's opening with weight exp(-6); within each document it weighs 1.
    a = " ".join(f"Cardiac finding number {i} was noted." for i in range(6))
    b = " ".join(f"Renal finding number {i} was noted." for i in range(6))
    spec = {"position_decay": 1.0}
    ctx = build_context([a, b], 30, selector="mmr", selector_options=spec)
    assert [(u.document, u.spans[0][0]) for u in ctx.units] == [(0, 0), (1, 0)]
