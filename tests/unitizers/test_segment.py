"""Clinical-aware sentence segmentation: small hand-written cases with stated expectations."""

from __future__ import annotations

import pytest

from budgetctx.unitizers import Segment, SentenceUnitizer, segment_text
from tests.unitizers._invariants import assert_segments_exact


def seg(text: str, *, max_words: int | None = 150) -> list[Segment]:
    """Segments of ``text``, checked for exact spans and full coverage."""
    segments = segment_text(text, max_words=max_words)
    assert_segments_exact(text, segments)
    return segments


def texts(text: str, *, max_words: int | None = 150) -> list[str]:
    return [s.text for s in seg(text, max_words=max_words)]


# --- abbreviations ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "Seen by Dr. Lee today. He is stable.",
            ["Seen by Dr. Lee today.", "He is stable."],
            id="Dr.",
        ),
        pytest.param(
            "Mr. Smith was seen. He is stable.",
            ["Mr. Smith was seen.", "He is stable."],
            id="Mr.",
        ),
        pytest.param(
            "Aspirin 81 mg p.o. daily for CAD. Continue.",
            ["Aspirin 81 mg p.o. daily for CAD.", "Continue."],
            id="p.o.",
        ),
        pytest.param(
            "Metoprolol 25 mg b.i.d. with food. Continue.",
            ["Metoprolol 25 mg b.i.d. with food.", "Continue."],
            id="b.i.d.",
        ),
        pytest.param(
            "Trazodone 50 mg q.h.s. for sleep. Continue.",
            ["Trazodone 50 mg q.h.s. for sleep.", "Continue."],
            id="q.h.s.",
        ),
        pytest.param(
            "A 67 y.o. male presents with chest pain. He is stable.",
            ["A 67 y.o. male presents with chest pain.", "He is stable."],
            id="y.o.",
        ),
        pytest.param(
            "Give 2 tabs t.i.d. and 1 tab q.h.s. for pain.",
            ["Give 2 tabs t.i.d. and 1 tab q.h.s. for pain."],
            id="two-abbreviations",
        ),
        pytest.param(
            "Use inhalers, e.g. albuterol, as needed. Continue.",
            ["Use inhalers, e.g. albuterol, as needed.", "Continue."],
            id="e.g.",
        ),
    ],
)
def test_abbreviation_does_not_split_mid_sentence(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


def test_age_abbreviation_stays_in_sentence() -> None:
    assert texts("Patient is a 67 y.o. male with CHF.") == ["Patient is a 67 y.o. male with CHF."]


def test_abbreviation_at_a_real_sentence_end_still_splits() -> None:
    assert texts("Trazodone 50 mg q.h.s. He sleeps well.") == [
        "Trazodone 50 mg q.h.s.",
        "He sleeps well.",
    ]


def test_name_after_title_ending_a_sentence_is_split() -> None:
    # blingfire reads "Dr. Lee. Troponin" as one sentence (the name looks like an initial)
    assert texts("Seen by Dr. Lee. Troponin negative.") == [
        "Seen by Dr. Lee.",
        "Troponin negative.",
    ]


def test_title_at_line_end_joins_the_wrapped_name() -> None:
    assert texts("He was seen by Dr.\nLee today. He is stable.") == [
        "He was seen by Dr.\nLee today.",
        "He is stable.",
    ]


# --- lists ---------------------------------------------------------------------------------------


def test_numbered_list_one_segment_per_item_with_marker() -> None:
    segments = seg("1. Aspirin 81 mg p.o. daily.\n2. Lisinopril 10 mg daily")
    assert [(s.text, s.kind) for s in segments] == [
        ("1. Aspirin 81 mg p.o. daily.", "item"),
        ("2. Lisinopril 10 mg daily", "item"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("1) Aspirin\n2) Plavix", ["1) Aspirin", "2) Plavix"], id="paren"),
        pytest.param("(1) Aspirin\n(2) Plavix", ["(1) Aspirin", "(2) Plavix"], id="both-parens"),
        pytest.param("a) Aspirin\nb) Plavix", ["a) Aspirin", "b) Plavix"], id="letters"),
        pytest.param("10. Aspirin\n11. Plavix", ["10. Aspirin", "11. Plavix"], id="two-digits"),
    ],
)
def test_other_list_markers(text: str, expected: list[str]) -> None:
    segments = seg(text)
    assert [s.text for s in segments] == expected
    assert {s.kind for s in segments} == {"item"}


@pytest.mark.parametrize("marker", ["-", "*", "•"])
def test_bullets(marker: str) -> None:
    text = f"{marker} Aspirin 81 mg daily\n{marker} Lisinopril 10 mg daily"
    segments = seg(text)
    assert [(s.text, s.kind) for s in segments] == [
        (f"{marker} Aspirin 81 mg daily", "item"),
        (f"{marker} Lisinopril 10 mg daily", "item"),
    ]


def test_mixed_bullets_and_sentences_after_them() -> None:
    assert texts("- Aspirin\n* Metformin\n• Atorvastatin\nFollow up in 2 weeks.") == [
        "- Aspirin",
        "* Metformin",
        "• Atorvastatin",
        "Follow up in 2 weeks.",
    ]


def test_wrapped_list_item_continuation_stays_in_item() -> None:
    assert texts("1. Aspirin 81 mg\n   daily with food\n2. Plavix") == [
        "1. Aspirin 81 mg\n   daily with food",
        "2. Plavix",
    ]


def test_inline_numbered_list_after_header_moves_markers_to_items() -> None:
    text = "DISCHARGE MEDICATIONS: 1. Aspirin 81 mg daily. 2. Lisinopril 10 mg daily."
    assert texts(text) == [
        "DISCHARGE MEDICATIONS:",
        "1. Aspirin 81 mg daily.",
        "2. Lisinopril 10 mg daily.",
    ]


def test_marker_after_abbreviation_moves_to_next_item() -> None:
    assert texts("Take 1 tab b.i.d. 2. Metformin 500 mg.") == [
        "Take 1 tab b.i.d.",
        "2. Metformin 500 mg.",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Pain score: 3. He is comfortable.", ["Pain score: 3.", "He is comfortable."]),
        ("Temperature: 98. Heart rate 72.", ["Temperature: 98.", "Heart rate 72."]),
    ],
)
def test_value_after_label_is_not_taken_for_a_list_marker(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


# --- headers and line structure ----------------------------------------------------------------


def test_header_line_without_period_is_its_own_header_segment() -> None:
    segments = seg("CHIEF COMPLAINT\nChest pain.")
    assert [(s.text, s.kind, s.heading) for s in segments] == [
        ("CHIEF COMPLAINT", "header", "CHIEF COMPLAINT"),
        ("Chest pain.", "sentence", None),
    ]


def test_blank_line_splits_unpunctuated_text() -> None:
    assert texts("Chest pain\n\nShortness of breath") == ["Chest pain", "Shortness of breath"]


def test_blank_line_splits_even_a_lower_case_continuation() -> None:
    assert texts("Admitted with chest pain and\n\nshortness of breath.") == [
        "Admitted with chest pain and",
        "shortness of breath.",
    ]


def test_hard_wrapped_lower_case_line_joins() -> None:
    text = "The patient was admitted with chest pain and\nshortness of breath. He improved."
    assert texts(text) == [
        "The patient was admitted with chest pain and\nshortness of breath.",
        "He improved.",
    ]


def test_wrapped_line_after_dangling_preposition_joins() -> None:
    assert texts("He has a past history of\nDiabetes Mellitus type 2.") == [
        "He has a past history of\nDiabetes Mellitus type 2."
    ]


@pytest.mark.parametrize("word", ["by", "with", "was", "from", "and"])
def test_wrapped_line_after_dangling_function_word_joins_a_capitalised_line(word: str) -> None:
    text = f"The patient was referred {word}\nDr. Lee in clinic. He agreed."
    assert texts(text) == [f"The patient was referred {word}\nDr. Lee in clinic.", "He agreed."]


def test_speaker_turns_never_join_even_after_a_dangling_word() -> None:
    text = "Grad G: I 'm surprised I forgot that ,\nProfessor E: And start by giving the number ."
    assert texts(text) == [
        "Grad G: I 'm surprised I forgot that ,",
        "Professor E: And start by giving the number .",
    ]


def test_capitalised_line_after_complete_line_does_not_join() -> None:
    assert texts("Chest pain resolved\nShortness of breath persists") == [
        "Chest pain resolved",
        "Shortness of breath persists",
    ]


def test_vitals_and_lab_lines_stay_whole() -> None:
    assert texts("Vitals: BP 120/80, HR 72.\nNa 135, K 4.1, Cl 101.") == [
        "Vitals: BP 120/80, HR 72.",
        "Na 135, K 4.1, Cl 101.",
    ]


@pytest.mark.parametrize(
    "line",
    [
        "WBC 12.5, Hgb 10.2, Plt 250, Cr 1.2 mg/dL.",
        "BP 120/80 mmHg, HR 72 bpm, RR 16, SpO2 98% on RA, T 37.2 C.",
        "He received 2.5 mg of morphine at 10.30 for pain 7.5/10.",
    ],
)
def test_decimals_do_not_split(line: str) -> None:
    assert texts(line) == [line]


def test_capitals_line_of_values_is_not_a_header() -> None:
    segments = seg("TEMP 98, HR 72\nThe patient is stable.")
    assert [(s.text, s.kind) for s in segments] == [
        ("TEMP 98, HR 72", "sentence"),
        ("The patient is stable.", "sentence"),
    ]


# --- offsets, whitespace, odd input -------------------------------------------------------------


def test_unicode_text_keeps_exact_character_offsets() -> None:
    text = "Température 38,5 °C. Le patient va bien. 患者は安定しています。 Done."
    assert [(s.start, s.end, s.text) for s in seg(text)] == [
        (0, 20, "Température 38,5 °C."),
        (21, 40, "Le patient va bien."),
        (41, 52, "患者は安定しています。"),
        (53, 58, "Done."),
    ]


def test_astral_characters_keep_exact_offsets() -> None:
    text = "Naïve café patient 😀 was seen. Réévaluation demain."
    assert [(s.start, s.text) for s in seg(text)] == [
        (0, "Naïve café patient 😀 was seen."),
        (31, "Réévaluation demain."),
    ]


def test_crlf_line_endings() -> None:
    text = "Line one.\r\nLine two.\r\n\r\nLine three."
    assert [(s.start, s.text) for s in seg(text)] == [
        (0, "Line one."),
        (11, "Line two."),
        (24, "Line three."),
    ]


def test_crlf_header_line() -> None:
    segments = seg("CHIEF COMPLAINT\r\nChest pain.\r\n")
    assert [(s.start, s.text, s.kind) for s in segments] == [
        (0, "CHIEF COMPLAINT", "header"),
        (17, "Chest pain.", "sentence"),
    ]


def test_leading_and_trailing_whitespace_is_outside_segments() -> None:
    assert [(s.start, s.end, s.text) for s in seg("   \n  Leading text here.  \n\n  ")] == [
        (6, 24, "Leading text here.")
    ]


@pytest.mark.parametrize("text", ["", " ", "\n\n", " \t\r\n  ", "\u2028\u00a0"])
def test_empty_or_blank_text_has_no_segments(text: str) -> None:
    assert seg(text) == []


def test_text_without_punctuation_is_one_segment() -> None:
    assert texts("no punctuation at all here just words") == [
        "no punctuation at all here just words"
    ]


@pytest.mark.parametrize("space", ["\u2028", "\u2029", "\u00a0", "\u3000", "\x85", " \u2028"])
def test_unicode_whitespace_between_sentences(space: str) -> None:
    assert texts(f"Chest pain.{space}Stable now.") == ["Chest pain.", "Stable now."]


def test_unicode_line_separator_is_not_part_of_a_segment() -> None:
    # blingfire ends a sentence at U+2028 and keeps the separator in it; segments are trimmed
    segments = seg("Chest pain and \u2028shortness of breath. Stable.")
    assert all(s.text == s.text.strip() for s in segments)
    assert segments[-1].text == "Stable."


def test_long_unpunctuated_run_is_cut_at_max_words() -> None:
    words = [f"w{i}" for i in range(1000)]
    text = " ".join(words)
    segments = seg(text)
    assert [len(s.text.split()) for s in segments] == [150] * 6 + [100]
    assert " ".join(s.text for s in segments) == text


def test_max_words_is_configurable() -> None:
    text = " ".join(f"w{i}" for i in range(1000))
    assert [len(s.text.split()) for s in seg(text, max_words=40)] == [40] * 25


def test_max_words_none_disables_the_cut() -> None:
    text = " ".join(f"w{i}" for i in range(1000))
    assert texts(text, max_words=None) == [text]


def test_header_longer_than_max_words_is_cut_like_text() -> None:
    segments = seg("## one two three four five six\nText.", max_words=3)
    assert [s.text for s in segments] == ["## one two", "three four five", "six", "Text."]


def test_sentence_unitizer_one_unit_per_sentence_header_attached() -> None:
    text = "CHIEF COMPLAINT\nChest pain.\n1. Aspirin 81 mg p.o. daily.\n2. Lisinopril 10 mg daily"
    result = SentenceUnitizer().unitize(text)
    assert [(u.text, u.kind, u.section) for u in result.units] == [
        ("CHIEF COMPLAINT Chest pain.", "sentence", None),
        ("1. Aspirin 81 mg p.o. daily.", "item", None),
        ("2. Lisinopril 10 mg daily", "item", None),
    ]
    assert [u.segments for u in result.units] == [(0, 1), (2,), (3,)]
    assert result.overlapping is False


# --- blingfire's buffers ----------------------------------------------------------------------


def test_blingfire_gets_the_chunks_buffer_size_and_more_if_it_asks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each call is given the size its chunk needs (2 bytes a byte and one), not the reused
    buffer's; a call that asks for more is made again with the whole buffer, and the spans
    are blingfire's either way."""
    from budgetctx.unitizers import _segment

    real = _segment._BLINGFIRE_FN
    if real is None:
        pytest.skip("this blingfire build has no TextToSentencesWithOffsets")
    chunk = "Seen by Dr. Lee today. He is stable. Discharged home."
    expected = _segment._piece_spans(chunk)
    _segment._buffers(1 << 16)  # a buffer far larger than the chunk, as after a long block
    sizes: list[int] = []

    def asks_for_more_once(data: bytes, n: int, out: object, s: object, e: object, m: int) -> int:
        sizes.append(m)
        if len(sizes) == 1:
            return m + 1  # "the output needs more room": nothing usable written
        return int(real(data, n, out, s, e, m))

    monkeypatch.setattr(_segment, "_BLINGFIRE_FN", asks_for_more_once)
    assert _segment._piece_spans(chunk) == expected == [(0, 22), (23, 36), (37, 53)]
    assert sizes[0] == 2 * len(chunk.encode()) + 1
    assert sizes[1] >= 1 << 16


def test_title_and_boundary_prefilters_find_what_the_regexes_find() -> None:
    """The substring tests before ``_TITLE_AT`` and the ASCII form of ``_MAYBE_BOUNDARY``
    (issue 27, sixth pass) find exactly what the regexes find on their own, on random text
    built from titles, near-titles, terminators, closers and every kind of blank."""
    import random

    from budgetctx.unitizers import _segment

    pieces = [
        *("Dr.", "Mr.", "Mrs.", "Ms.", "Prof.", "Drs.", "Mr", "Dr", "Prof", "Ms"),
        *(".", "!", "?", '"', "'", ")", "]", "\u2019", "\u201d", "\u2026", "\u3002", "\uff01"),
        *(" ", "\n", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\u00a0", "\u2028"),
        *("Lee", "word", "a", "1", "\u4e2d"),
    ]
    rng = random.Random(27)
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        want = [m.start() for m in _segment._TITLE_AT.finditer(text)]
        assert _segment._title_positions(text) == want
        if text.isascii():
            ascii_spans = [m.span() for m in _segment._MAYBE_BOUNDARY_ASCII.finditer(text)]
            assert ascii_spans == [m.span() for m in _segment._MAYBE_BOUNDARY.finditer(text)]


def test_fast_segments_are_the_dataclass_segments() -> None:
    """``_segment`` sets the slots without ``Segment.__init__`` (issue 27, sixth pass): the
    same objects while that __init__ only sets them."""
    import dataclasses
    import pickle

    from budgetctx.unitizers._segment import _segment

    assert not hasattr(Segment, "__post_init__")
    assert [f.name for f in dataclasses.fields(Segment)] == [
        *("start", "end", "text", "kind", "heading")
    ]
    for args in [
        (0, 3, "abc", "sentence", None),
        (5, 9, "PLAN", "header", "PLAN"),
        (1, 1, "", "item", ""),
    ]:
        fast, slow = _segment(*args), Segment(*args)
        assert type(fast) is Segment and dataclasses.astuple(fast) == dataclasses.astuple(slow)
        assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
        assert pickle.loads(pickle.dumps(fast)) == slow
