"""The budget contract and provenance, over every registered selector and unitizer."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budgetctx import Context, build_context, get_tokenizer, list_selectors, list_unitizers

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


def check_contract(ctx: Context, text: str, budget: int) -> None:
    tok = get_tokenizer(ctx.tokenizer)
    assert ctx.tokens_used == tok.count(ctx.text)
    assert ctx.tokens_used <= budget
    kept = [u.id for u in ctx.units]
    assert kept == sorted(set(kept)), "kept units are unique and in document order"
    assert set(kept).isdisjoint(ctx.excluded)
    assert set(kept) | set(ctx.excluded) == set(range(ctx.n_units))
    spans: set[tuple[int, int]] = set()
    for unit in ctx.units:
        assert unit.spans, "a kept unit has at least one span"
        for a, b in unit.spans:
            assert 0 <= a < b <= len(text)
            assert text[a:b] in ctx.text
        assert unit.text == " ".join(text[a:b] for a, b in unit.spans)
        spans.update(unit.spans)
    if ctx.reason is None:
        # The context is exactly the kept spans, each once, in document order.
        merged = sorted(spans)
        assert ctx.text == ctx.separator.join(text[a:b] for a, b in merged)
    elif ctx.reason.startswith("document fits"):
        assert ctx.text == text
    else:
        assert ctx.text == ""


COMBOS = [(s, u) for s in list_selectors() for u in list_unitizers()]


@pytest.mark.parametrize(("selector", "unitizer"), COMBOS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents(), budget=st.integers(1, 300))
def test_contract_every_selector_and_unitizer(
    selector: str, unitizer: str, text: str, budget: int
) -> None:
    ctx = build_context(text, budget, selector=selector, unitizer=unitizer)
    check_contract(ctx, text, budget)


@pytest.mark.parametrize("selector", list_selectors())
@settings(max_examples=15, deadline=None)
@given(
    text=documents(),
    budget=st.integers(1, 200),
    separator=st.sampled_from(["\n", " ", "", "\n\n---\n\n", " | "]),
    tokenizer=st.sampled_from(["o200k_base", "cl100k_base", "words"]),
    truncate=st.booleans(),
)
def test_contract_separators_tokenizers_truncation(
    selector: str, text: str, budget: int, separator: str, tokenizer: str, truncate: bool
) -> None:
    ctx = build_context(
        text,
        budget,
        selector=selector,
        separator=separator,
        tokenizer=tokenizer,
        truncate=truncate,
    )
    check_contract(ctx, text, budget)
    assert sum(u.truncated for u in ctx.units) <= (1 if truncate else 0)


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
