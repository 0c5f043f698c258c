"""Pinned content: always kept, paid first, defined when it alone is over the budget."""

from __future__ import annotations

import re
import time

import pytest

from budgetctx import (
    BudgetCtxWarning,
    Document,
    InputError,
    InvalidParameterError,
    build_context,
    get_tokenizer,
    pin_regex,
)
from budgetctx.unitizers import Unit

TOK = get_tokenizer("o200k_base")
NOTE = (
    "HISTORY: Admitted with pneumonia after a week of cough and fever.\n"
    "ALLERGIES:\nPenicillin causes hives. Sulfa causes rash.\n"
    "MEDICATIONS:\nWarfarin 5 mg daily. Metoprolol 25 mg twice daily.\n"
    "HOSPITAL COURSE: Treated with ceftriaxone and azithromycin. Fever resolved on day 3. "
    "Oxygen weaned to room air. Ambulating without assistance at discharge."
)


def kept_texts(ctx: object) -> list[str]:
    return [u.text for u in ctx.units]  # type: ignore[attr-defined]


@pytest.mark.parametrize("selector", ["lead", "mmr", "rcd", "facility"])
def test_section_pins_are_kept_whatever_the_selector(selector: str) -> None:
    ctx = build_context(NOTE, profile=None, budget=40, selector=selector, pin="allergies")
    assert ctx.tokens_used <= 40
    texts = kept_texts(ctx)
    assert any("Penicillin" in t for t in texts) and any("Sulfa" in t for t in texts)
    assert [u.pinned for u in ctx.units if "Penicillin" in u.text or "Sulfa" in u.text] == [
        True,
        True,
    ]
    assert not any(u.pinned for u in ctx.units if "ALLERG" not in u.text and "Sulfa" not in u.text)


def test_regex_id_and_callable_pins() -> None:
    ctx = build_context(
        NOTE, profile=None, budget=30, selector="lead", pin=pin_regex("(?i)WARFARIN")
    )
    assert any("Warfarin" in u.text and u.pinned for u in ctx.units)
    ctx = build_context(
        NOTE, profile=None, budget=30, selector="lead", pin=re.compile("ambulating", re.I)
    )
    assert any("Ambulating" in u.text and u.pinned for u in ctx.units)
    last = build_context(NOTE, profile=None, budget=10_000).n_units - 1
    ctx = build_context(NOTE, profile=None, budget=30, selector="lead", pin=last)
    assert ctx.units[-1].id == last and ctx.units[-1].pinned

    seen: list[Unit] = []

    def oxygen(unit: Unit) -> bool:
        seen.append(unit)
        return "Oxygen" in unit.text

    docs = [Document("Cough. Fever.", id="a"), Document("Oxygen weaned. Home.", id="b")]
    ctx = build_context(docs, budget=12, selector="lead", pin=oxygen)
    assert [u.id for u in seen] == [0, 1, 2, 3], "callables see the ids of the context"
    assert seen[2].spans == ((0, 14),), "and spans into the unit's own document"
    pinned = [u for u in ctx.units if u.pinned]
    assert [(u.document_id, u.text) for u in pinned] == [("b", "Oxygen weaned.")]


def test_pins_come_off_the_budget_first() -> None:
    plain = build_context(NOTE, profile=None, budget=60, selector="lead")
    pinned = build_context(NOTE, profile=None, budget=60, selector="lead", pin="hospital course")
    assert plain.tokens_used <= 60 and pinned.tokens_used <= 60
    assert not any("Ambulating" in t for t in kept_texts(plain))
    course = [u for u in pinned.units if u.pinned]
    assert len(course) == 4 and "ceftriaxone" in course[0].text and not pinned.notes
    # Lead fills the rest from the top of the note.
    assert "HISTORY" in pinned.units[0].text


def test_pins_over_the_budget_keep_the_most_relevant_that_fit() -> None:
    ctx = build_context(NOTE, profile=None, budget=20, pin=["hospital course", "medications"])
    assert ctx.tokens_used <= 20
    assert ctx.units and all(u.pinned for u in ctx.units)
    assert any(n.startswith("pinned units need about") for n in ctx.notes)
    with pytest.raises(InputError, match="pinned units need about"):
        build_context(
            NOTE, profile=None, budget=20, pin=["hospital course"], on_pin_overflow="error"
        )


def test_pin_and_reserve_together_respect_the_budget() -> None:
    ctx = build_context(
        NOTE, profile=None, budget=60, reserve=30, pin="allergies", query="warfarin"
    )
    assert ctx.tokens_used <= 30 == ctx.budget - ctx.reserve
    assert TOK.count(ctx.text) == ctx.tokens_used


def test_a_pin_that_matches_nothing_warns() -> None:
    with pytest.warns(BudgetCtxWarning, match="section 'ALERGIES' matched no unit"):
        ctx = build_context(NOTE, profile=None, budget=30, pin="ALERGIES")
    assert ctx.tokens_used <= 30


def test_bad_pins_get_clear_errors() -> None:
    with pytest.raises(InvalidParameterError, match=r"pin regex '\(unclosed' does not compile"):
        pin_regex("(unclosed")
    with pytest.raises(InvalidParameterError, match="unit id 999 does not exist"):
        build_context(NOTE, profile=None, budget=30, pin=999)
    with pytest.raises(InvalidParameterError, match="section name, a regex, a unit id"):
        build_context(NOTE, profile=None, budget=30, pin=[2.5])  # type: ignore[list-item]
    with pytest.raises(InvalidParameterError, match="section name, a regex"):
        build_context(NOTE, profile=None, budget=30, pin=b"ALLERGIES")  # type: ignore[arg-type]


def test_a_catastrophic_regex_fails_fast_instead_of_hanging() -> None:
    # (a|aa)+$ backtracks exponentially on a run of a's that does not end the text; on the
    # standard re engine this search would not finish in a lifetime.
    note = ("a" * 60 + "b. ") * 3
    start = time.monotonic()
    with pytest.raises(InputError, match=r"ran for more than 1 s .*Simplify the pattern"):
        build_context(note, budget=5, pin=pin_regex("(a|aa)+$"))
    assert time.monotonic() - start < 30
