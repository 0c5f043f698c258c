"""The budget contract and provenance for lists of documents, pins and reserves, over every
registered selector and unitizer."""

from __future__ import annotations

import warnings

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budgetctx import Context, Document, build_context, get_tokenizer, pin_regex
from tests.contracts.test_budget_contract import COMBOS, HEADERS, WORDS, documents

HEADER_TEMPLATES = ["[{id}]", None, "### Note {number} ({index})", ""]
DOC_SEPARATORS = ["\n", "", "\n---\n"]


def expected_text(ctx: Context, docs: list[Document], header: str | None, docsep: str) -> str:
    """The documented layout, rebuilt from the provenance alone."""
    blocks = []
    for i, d in enumerate(docs):
        spans = sorted(s for u in ctx.units if u.document == i for s in u.spans)
        if not spans:
            continue
        body = ctx.separator.join(d.text[a:b] for a, b in spans)
        head = header.format(id=d.id or str(i + 1), index=i, number=i + 1) if header else ""
        blocks.append((head + ctx.separator if head else "") + body)
    return (ctx.separator + docsep).join(blocks)


def check_documents_contract(
    ctx: Context,
    docs: list[Document],
    budget: int,
    reserve: int,
    header: str | None,
    docsep: str,
) -> None:
    assert ctx.tokens_used == get_tokenizer(ctx.tokenizer).count(ctx.text)
    assert ctx.tokens_used <= budget - reserve
    kept = [u.id for u in ctx.units]
    assert kept == sorted(set(kept))
    assert set(kept).isdisjoint(ctx.excluded)
    assert set(kept) | set(ctx.excluded) == set(range(ctx.n_units))
    assert [u.document for u in ctx.units] == sorted(u.document for u in ctx.units)
    assert len(ctx.documents) == len(docs)
    for unit in ctx.units:
        doc = docs[unit.document]
        assert unit.document_id == doc.id
        assert unit.text == " ".join(doc.text[a:b] for a, b in unit.spans)
        for a, b in unit.spans:
            assert 0 <= a < b <= len(doc.text)
            assert any(c <= a and b <= d for c, d in unit.unit_spans)
    for summary, doc in zip(ctx.documents, docs, strict=True):
        mine = [u for u in ctx.units if u.document == summary.index]
        assert summary.units_kept == len(mine)
        assert summary.id == doc.id
        if ctx.reason is None:
            spans = sorted(s for u in mine for s in u.spans)
            assert summary.text == ctx.separator.join(doc.text[a:b] for a, b in spans)
    if ctx.reason is None:
        assert ctx.text == expected_text(ctx, docs, header, docsep)
    elif ctx.reason.startswith("documents fit"):
        assert len(ctx.units) == ctx.n_units
        assert all(
            s.text == d.text or not d.text.strip() for s, d in zip(ctx.documents, docs, strict=True)
        )
    else:
        assert ctx.text == "" and not ctx.units


@pytest.mark.parametrize(("selector", "unitizer"), COMBOS)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(documents(), min_size=1, max_size=4),
    ids=st.booleans(),
    budget=st.integers(1, 300),
    reserve_share=st.floats(0, 0.9),
    separator=st.sampled_from(["\n", " ", "", " | "]),
    header=st.sampled_from(HEADER_TEMPLATES),
    docsep=st.sampled_from(DOC_SEPARATORS),
    truncate=st.booleans(),
    pins=st.lists(
        st.one_of(
            st.sampled_from([h.strip(":# ") for h in HEADERS]),
            st.sampled_from(WORDS).map(lambda w: pin_regex(regex.escape(w))),
        ),
        max_size=2,
    ),
)
def test_lists_of_documents_pins_and_reserves(
    selector: str,
    unitizer: str,
    texts: list[str],
    ids: bool,
    budget: int,
    reserve_share: float,
    separator: str,
    header: str | None,
    docsep: str,
    truncate: bool,
    pins: list[object],
) -> None:
    docs = [Document(t, id=f"note-{i}" if ids else None) for i, t in enumerate(texts)]
    reserve = min(int(budget * reserve_share), budget - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pins that match nothing warn, by design
        ctx = build_context(
            docs,
            budget,
            selector=selector,
            unitizer=unitizer,
            separator=separator,
            truncate=truncate,
            reserve=reserve,
            pin=pins,
            document_header=header,
            document_separator=docsep,
        )
    check_documents_contract(ctx, docs, budget, reserve, header, docsep)
    assert sum(u.truncated for u in ctx.units) <= (1 if truncate else 0)
    for unit in ctx.units:
        if unit.pinned:
            whole = " ".join(docs[unit.document].text[a:b] for a, b in unit.unit_spans)
            # pinned by a pin given, or by the clinical profile (a "Discharge Medications" note)
            by_profile = "profile" in ctx.params
            assert by_profile or any(isinstance(p, str) or p.search(whole) for p in pins)  # type: ignore[attr-defined]
