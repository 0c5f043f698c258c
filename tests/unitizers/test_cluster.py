"""Cluster unitizer: connected components of a TF-IDF similarity graph with proximity decay."""

from __future__ import annotations

from itertools import pairwise

import pytest

import budgetctx
from budgetctx.unitizers import ClusterUnitizer
from tests.unitizers._invariants import assert_segmentation_valid

_CARDIAC = [
    "Troponin rose with chest pain overnight.",
    "Chest pain recurred and troponin peaked.",
    "Cardiology started heparin for chest pain.",
    "Troponin trended down and chest pain resolved.",
]
_RENAL = [
    "Creatinine climbed with acute kidney injury.",
    "Kidney ultrasound was normal and creatinine stable.",
    "Creatinine improved as the kidney injury healed.",
    "Nephrology followed the kidney function and creatinine.",
]
# cardiac, renal, cardiac, renal, ...: sentences 0 2 4 6 are cardiac, 1 3 5 7 renal
_INTERLEAVED = " ".join(s for pair in zip(_CARDIAC, _RENAL, strict=True) for s in pair)


def test_interleaved_topics_become_two_non_contiguous_units() -> None:
    result = ClusterUnitizer().unitize(_INTERLEAVED)
    assert_segmentation_valid(_INTERLEAVED, result)
    assert [u.segments for u in result.units] == [(0, 2, 4, 6), (1, 3, 5, 7)]
    cardiac = result.units[0]
    assert cardiac.kind == "cluster"
    assert [_INTERLEAVED[a:b] for a, b in cardiac.spans] == _CARDIAC
    # the spans are separated by the renal sentences: not one contiguous stretch of text
    gaps = [_INTERLEAVED[b:a] for (_, b), (a, _) in pairwise(cardiac.spans)]
    assert all(gap.strip() for gap in gaps)
    assert cardiac.text == " ".join(_CARDIAC)


def test_threshold_near_one_gives_singletons() -> None:
    result = ClusterUnitizer(threshold=0.99).unitize(_INTERLEAVED)
    assert [u.segments for u in result.units] == [(i,) for i in range(8)]


def test_identical_neighbours_fall_below_threshold_one() -> None:
    # cos = 1 but exp(-1 / decay) < 1: nothing reaches a threshold of exactly 1
    doc = " ".join(["Chest pain with troponin elevation."] * 4)
    assert [u.segments for u in ClusterUnitizer(threshold=1.0).unitize(doc).units] == [
        (0,),
        (1,),
        (2,),
        (3,),
    ]


def test_distance_decay_separates_far_apart_mentions() -> None:
    filler = [
        "Appetite improved.",
        "Ambulating independently.",
        "Sleeping well.",
        "Family visited.",
    ]
    doc = " ".join(["Chest pain with troponin elevation.", *filler, "Chest pain with troponin."])
    near = ClusterUnitizer(decay=50.0).unitize(doc)
    far = ClusterUnitizer(decay=0.5).unitize(doc)
    assert [u.segments for u in near.units] == [(0, 5), (1,), (2,), (3,), (4,)]
    assert [u.segments for u in far.units] == [(i,) for i in range(6)]


def test_max_segments_cuts_a_large_component_into_runs() -> None:
    doc = " ".join(["Chest pain with troponin elevation."] * 20)
    units = ClusterUnitizer(max_segments=3).unitize(doc).units
    assert [u.segments for u in units] == [
        (0, 1, 2),
        (3, 4, 5),
        (6, 7, 8),
        (9, 10, 11),
        (12, 13, 14),
        (15, 16, 17),
        (18, 19),
    ]


def test_max_segments_none_keeps_the_whole_component() -> None:
    doc = " ".join(["Chest pain with troponin elevation."] * 20)
    units = ClusterUnitizer(max_segments=None).unitize(doc).units
    assert [u.segments for u in units] == [tuple(range(20))]


def test_default_max_segments_is_respected() -> None:
    doc = " ".join(["Chest pain with troponin elevation."] * 20)
    units = ClusterUnitizer().unitize(doc).units
    assert [len(u.segments) for u in units] == [8, 8, 4]


def test_every_segment_in_exactly_one_unit() -> None:
    doc = _INTERLEAVED + "\nDISCHARGE MEDICATIONS:\n1. Aspirin 81 mg daily.\n2. Heparin stopped."
    result = ClusterUnitizer().unitize(doc)
    assert_segmentation_valid(doc, result)
    owners = sorted(i for u in result.units for i in u.segments)
    assert owners == list(range(len(result.segments)))


def test_stop_words_only_gives_singletons() -> None:
    # TF-IDF has no vocabulary left after removing English stop words
    doc = "It is. And then it was. So it is."
    result = ClusterUnitizer().unitize(doc)
    assert [u.segments for u in result.units] == [(0,), (1,), (2,)]


def test_unit_section_is_the_section_of_its_first_segment() -> None:
    doc = "HOSPITAL COURSE: Chest pain at rest.\nPLAN: Chest pain workup. Diet as tolerated."
    result = ClusterUnitizer().unitize(doc)
    assert [(u.segments, u.section) for u in result.units] == [
        ((0, 1), "HOSPITAL COURSE"),
        ((2,), "PLAN"),
    ]


def test_empty_document_has_no_units() -> None:
    assert ClusterUnitizer().unitize("\n \n").units == ()


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"threshold": 0.0}, "threshold"),
        ({"threshold": 1.5}, "threshold"),
        ({"threshold": float("nan")}, "threshold"),
        ({"decay": 0.0}, "decay"),
        ({"decay": -1.0}, "decay"),
        ({"decay": float("nan")}, "decay"),
        ({"decay": float("inf")}, "decay"),
        ({"max_segments": 0}, "max_segments"),
        ({"max_words": 0}, "max_words"),
        # F13: wrong types fail at construction with the same error
        ({"threshold": "0.1"}, "threshold"),
        ({"decay": None}, "decay"),
        ({"max_segments": 2.5}, "max_segments"),
        ({"max_segments": "8"}, "max_segments"),
        ({"max_words": 1.5}, "max_words"),
    ],
)
def test_parameter_validation_names_the_parameter(
    options: dict[str, float], parameter: str
) -> None:
    with pytest.raises(budgetctx.InvalidParameterError, match=parameter) as info:
        ClusterUnitizer(**options)  # type: ignore[arg-type]
    assert info.value.parameter == parameter


@pytest.mark.parametrize(
    "options", [{"decay": 1.7976931348623157e308}, {"threshold": 5e-324}, {"decay": 1e300}]
)
def test_extreme_accepted_values_link_every_pair_instead_of_overflowing(
    options: dict[str, float],
) -> None:
    # an accepted value must not fail later: the reach used to overflow math.floor
    text = "Chest pain at rest. Chest pain resolved. Diet as tolerated. Walk daily."
    result = ClusterUnitizer(max_segments=None, **options).unitize(text)  # type: ignore[arg-type]
    assert_segmentation_valid(text, result)
