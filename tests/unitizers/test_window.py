"""Window unitizer: overlapping windows of whole sentences sized by local content density."""

from __future__ import annotations

import pytest

import budgetctx
from budgetctx.unitizers import WindowUnitizer
from tests.unitizers._invariants import assert_segmentation_valid

# 12 sentences of 15 words each: thin conversational filler, then a dense medication list.
_THIN = " ".join(
    f"Well, so, I think it was kind of like that, you know, {k} or so." for k in range(12)
)
_DENSE = "\n".join(
    f"{k}. Metoprolol 25 mg PO BID; lisinopril 10 mg daily; atorvastatin 40 mg PO qHS."
    for k in range(1, 13)
)


def test_window_size_adapts_to_density() -> None:
    doc = _THIN + "\n\n" + _DENSE
    result = WindowUnitizer(base_words=50).unitize(doc)
    assert_segmentation_valid(doc, result)
    assert [len(s.text.split()) for s in result.segments] == [15] * 24
    # density is smoothed over 5 neighbouring sentences: compare windows away from the
    # boundary (sentence 12) and leave out the last, which only holds what remains
    thin = [len(u.text.split()) for u in result.units if u.segments[-1] < 12]
    dense = [len(u.text.split()) for u in result.units[:-1] if u.segments[0] >= 14]
    # thin text gets windows longer than base_words, dense text shorter ones
    assert thin == [75, 75, 75]
    assert dense == [45, 45, 45, 45]


def test_uniform_text_gets_windows_of_about_base_words() -> None:
    doc = " ".join(f"Sentence number {k} has exactly seven words." for k in range(40))
    result = WindowUnitizer(base_words=21).unitize(doc)
    sizes = [len(u.segments) for u in result.units]
    assert sizes[:-1] == [3] * (len(sizes) - 1)  # 3 sentences of 7 words reach 21 words


def test_default_windows_overlap_by_about_half() -> None:
    doc = " ".join(f"Sentence number {k} has exactly seven words." for k in range(12))
    result = WindowUnitizer(base_words=28).unitize(doc)
    assert result.overlapping is True
    assert [u.segments for u in result.units] == [
        (0, 1, 2, 3),
        (2, 3, 4, 5),
        (4, 5, 6, 7),
        (6, 7, 8, 9),
        (8, 9, 10, 11),
    ]


def test_zero_overlap_gives_disjoint_consecutive_windows() -> None:
    doc = " ".join(f"Sentence number {k} has exactly seven words." for k in range(10))
    result = WindowUnitizer(base_words=21, overlap=0.0).unitize(doc)
    assert result.overlapping is False
    assert [u.segments for u in result.units] == [(0, 1, 2), (3, 4, 5), (6, 7, 8), (9,)]


def test_windows_are_whole_sentences_with_exact_spans() -> None:
    doc = "CHIEF COMPLAINT\nChest pain. Seen by Dr. Lee.\n1. Aspirin 81 mg p.o. daily."
    result = WindowUnitizer(base_words=4).unitize(doc)
    assert_segmentation_valid(doc, result)
    for unit in result.units:
        assert unit.kind == "window"
        assert unit.spans == tuple(
            (result.segments[i].start, result.segments[i].end) for i in unit.segments
        )


def test_window_section_is_the_section_of_its_first_sentence() -> None:
    doc = "Intro text here.\nHOSPITAL COURSE: Stable. Improving. Discharged."
    # min_scale == max_scale == 1 turns density adaptation off: windows of >= 2 words
    unitizer = WindowUnitizer(base_words=2, overlap=0.0, min_scale=1.0, max_scale=1.0)
    result = unitizer.unitize(doc)
    assert [(u.segments, u.section) for u in result.units] == [
        ((0,), None),
        ((1,), "HOSPITAL COURSE"),
        ((2, 3), "HOSPITAL COURSE"),
    ]


def test_single_sentence_is_one_window() -> None:
    result = WindowUnitizer().unitize("Chest pain.")
    assert [u.segments for u in result.units] == [(0,)]


@pytest.mark.parametrize("overlap", [0.0, 0.5])
def test_empty_document_has_no_windows(overlap: float) -> None:
    result = WindowUnitizer(overlap=overlap).unitize("  \n ")
    assert result.units == ()
    assert result.overlapping is (overlap > 0)


def test_long_sentence_larger_than_a_window_is_still_one_segment() -> None:
    doc = " ".join(["word"] * 120) + ". Short one."
    result = WindowUnitizer(base_words=10, max_words=None).unitize(doc)
    assert result.units[0].segments == (0,)
    assert_segmentation_valid(doc, result)


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"base_words": 0}, "base_words"),
        ({"base_words": -5}, "base_words"),
        ({"base_words": float("nan")}, "base_words"),
        ({"overlap": 1.0}, "overlap"),
        ({"overlap": -0.1}, "overlap"),
        ({"overlap": float("nan")}, "overlap"),
        ({"min_scale": 0.0}, "min_scale"),
        ({"min_scale": 1.5}, "min_scale"),
        ({"max_scale": 0.5}, "max_scale"),
        ({"max_words": 0}, "max_words"),
        ({"max_words": -1}, "max_words"),
        # F13: wrong types fail at construction with the same error
        ({"base_words": "50"}, "base_words"),
        ({"base_words": 1.5}, "base_words"),
        ({"base_words": True}, "base_words"),
        ({"overlap": "0.5"}, "overlap"),
        ({"min_scale": None}, "min_scale"),
        ({"max_scale": float("inf")}, "max_scale"),
        ({"max_words": 1.5}, "max_words"),
        ({"max_words": "150"}, "max_words"),
    ],
)
def test_parameter_validation_names_the_parameter(
    options: dict[str, float], parameter: str
) -> None:
    with pytest.raises(budgetctx.InvalidParameterError, match=parameter) as info:
        WindowUnitizer(**options)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)
    # min_scale <= 1 <= max_scale is checked per parameter, so each names itself
    assert info.value.parameter == parameter


def test_params_round_trip() -> None:
    unitizer = WindowUnitizer(base_words=30, overlap=0.25)
    assert unitizer.params() == {
        "base_words": 30,
        "overlap": 0.25,
        "min_scale": 0.5,
        "max_scale": 2.0,
        "max_words": 150,
    }
    assert WindowUnitizer(**unitizer.params()) == unitizer
