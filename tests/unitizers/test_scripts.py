"""Scripts written without spaces after a sentence end (issue 10, F8): CJK, Arabic/Urdu and
Devanagari terminators split; numbers, quotative particles and combining marks do not."""

from __future__ import annotations

import pytest

from budgetctx import build_context
from budgetctx.unitizers import SentenceUnitizer, segment_text
from tests.unitizers._invariants import assert_segments_exact


def texts(text: str, *, max_words: int | None = 150) -> list[str]:
    segments = segment_text(text, max_words=max_words)
    assert_segments_exact(text, segments)
    return [s.text for s in segments]


JAPANESE_NOTE = "".join(f"患者の状態は安定しており、検査{i}は正常であった。" for i in range(60))


def test_sixty_japanese_sentences_are_sixty_units() -> None:
    seg = SentenceUnitizer().unitize(JAPANESE_NOTE)
    assert len(seg.units) == 60
    assert all(u.text.endswith("。") for u in seg.units)


def test_japanese_note_gives_a_context_within_a_small_budget() -> None:
    ctx = build_context(JAPANESE_NOTE, 50)
    assert ctx.text
    assert 0 < ctx.tokens_used <= 50
    for unit in ctx.units:
        for a, b in unit.spans:
            assert JAPANESE_NOTE[a:b] in ctx.text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "病人胸痛。心电图正常！肌钙蛋白阴性？出院。",
            ["病人胸痛。", "心电图正常！", "肌钙蛋白阴性？", "出院。"],
            id="chinese",
        ),
        pytest.param("ｱｲｳ｡ｴｵ｡", ["ｱｲｳ｡", "ｴｵ｡"], id="halfwidth-stop"),
        pytest.param(
            "患者は元気です．血圧は正常です．体温３．５度",
            ["患者は元気です．", "血圧は正常です．", "体温３．５度"],
            id="fullwidth-stop-not-in-numbers",
        ),
        pytest.param("痛い!次に進む?はい", ["痛い!", "次に進む?", "はい"], id="ascii-before-cjk"),
        pytest.param(
            "「痛い。」「はい。」次へ。", ["「痛い。」", "「はい。」", "次へ。"], id="closing-quote"
        ),
        pytest.param(
            "「はい。」と言った。次に進む。",
            ["「はい。」と言った。", "次に進む。"],
            id="quotative-particle",
        ),
        pytest.param("هل يوجد ألم؟نعم۔لا", ["هل يوجد ألم؟", "نعم۔", "لا"], id="arabic-urdu"),
        pytest.param(
            "हृदय ठीक है।रक्तचाप सामान्य है॥ ठीक",
            ["हृदय ठीक है।", "रक्तचाप सामान्य है॥", "ठीक"],
            id="devanagari-danda",
        ),
    ],
)
def test_script_sentence_ends(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Seen by Dr. Lee. Na 135, K 4.1. Follow up in 2 wks.",
        "Version 3.5.1 of e.g.the tool; see fig.2 and www.example.org/a.b?c=d!",
    ],
)
def test_ascii_text_without_spaces_after_periods_is_not_split_further(text: str) -> None:
    before = texts(text)
    assert "".join(before).replace(" ", "") == text.replace(" ", "")
    assert not any(s.endswith(("!", "?")) and i < len(before) - 1 for i, s in enumerate(before))


def test_a_run_without_spaces_is_cut_by_max_words() -> None:
    run = "患者の状態は安定している" * 50  # 600 characters, no sentence end, no space
    pieces = texts(run, max_words=150)
    assert len(pieces) == 2
    assert all(len(p) <= 300 for p in pieces)
    assert texts(run, max_words=None) == [run]


def test_cutting_a_run_keeps_combining_marks_with_their_letter() -> None:
    run = "e\u0301" * 400  # é as e + combining acute accent
    pieces = texts(run, max_words=10)
    assert len(pieces) > 1
    assert all(p[0] != "\u0301" for p in pieces)
