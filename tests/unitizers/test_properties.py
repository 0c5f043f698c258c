"""Property tests: every unitizer on random documents mixing clinical text and structure."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budgetctx.unitizers import (
    ClusterUnitizer,
    SectionUnitizer,
    WindowUnitizer,
    get_unitizer,
    list_unitizers,
    segment_text,
)
from budgetctx.unitizers._base import base_groups
from tests.unitizers._invariants import (
    assert_segmentation_valid,
    assert_segments_exact,
    assert_windows_chain,
)

# Example counts keep this file to a few seconds on a 2-core machine.
PROPERTY_SETTINGS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
MANY_EXAMPLES = settings(PROPERTY_SETTINGS, max_examples=45)

_WORDS = st.sampled_from(
    [
        "the", "patient", "was", "seen", "and", "admitted", "with", "chest", "pain", "He",
        "She", "denies", "fever", "troponin", "creatinine", "stable", "discharged", "home",
        "Aspirin", "lisinopril", "mg", "daily", "Lee", "CHF", "ICU", "of", "to", "in",
    ]
)  # fmt: skip
_ABBREVIATIONS = st.sampled_from(
    ["Dr.", "Mr.", "Mrs.", "p.o.", "b.i.d.", "t.i.d.", "q.h.s.", "y.o.", "e.g.", "i.e.",
     "vs.", "St.", "No.", "FIG.", "M.D.", "a.m.", "et al."]
)  # fmt: skip
_NUMBERS = st.one_of(
    st.integers(0, 999).map(str),
    st.floats(0, 500, allow_nan=False).map(lambda x: f"{x:.1f}"),
    st.sampled_from(["120/80", "98.6", "4.1", "#2", "1,000", "10:30", "3-4"]),
)
_PUNCTUATION = st.sampled_from(
    [".", ",", ";", ":", "!", "?", "...", "(", ")", '"', "'", "-", "/", "•", "#", "*"]
)
_UNICODE = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=3)
_TOKEN = st.one_of(_WORDS, _WORDS, _ABBREVIATIONS, _NUMBERS, _PUNCTUATION, _UNICODE)
_END = st.sampled_from([".", ".", "?", "!", "", ":", ";"])

_sentence = st.builds(
    lambda ws, end: " ".join(ws) + end, st.lists(_TOKEN, min_size=1, max_size=14), _END
)
_paragraph = st.lists(_sentence, min_size=1, max_size=3).map(" ".join)
_HEADERS = st.sampled_from(
    ["CHIEF COMPLAINT", "HISTORY OF PRESENT ILLNESS", "HOSPITAL COURSE", "Hospital Course",
     "DISCHARGE MEDICATIONS", "Assessment and Plan", "Background", "Methods", "Main results",
     "Authors' conclusions", "PHYSICAL EXAM", "Results", "BP", "FIG. 1", "BRENNAN", "Grad F"]
)  # fmt: skip
_header_line = st.one_of(
    st.builds(lambda h, colon: h + colon, _HEADERS, st.sampled_from(["", ":", " :"])),
    st.builds(lambda n, h: "#" * n + " " + h, st.integers(1, 6), _HEADERS),
)
_inline_header = st.builds(lambda h, s: f"{h}: {s}", _HEADERS, _paragraph)
_MARKERS = st.sampled_from(["1.", "2.", "10.", "1)", "(2)", "a)", "b.", "-", "*", "•", "–"])
_list_item = st.builds(lambda m, s: f"{m} {s}", _MARKERS, _paragraph)
_vitals = st.builds(
    lambda vals: ", ".join(f"{k} {v}" for k, v in vals) + ".",
    st.lists(st.tuples(st.sampled_from(["Na", "K", "Cl", "BP", "HR", "TEMP", "WBC"]), _NUMBERS),
             min_size=1, max_size=5),
)  # fmt: skip
_line = st.one_of(
    _paragraph,
    _paragraph,
    _header_line,
    _inline_header,
    _list_item,
    _vitals,
    st.just(""),
    st.text(max_size=20),
    _paragraph.map(str.lower),
)
_SEPARATORS = st.sampled_from(["\n", "\n", "\r\n", "\n\n", " ", "\n  ", "\u2028"])
_SPACE = st.sampled_from(["", "", " ", "\n", "  \n\t", "\u00a0"])


@st.composite
def documents(draw: st.DrawFn) -> str:
    """A random document: lines of prose, headers, list items, vitals and noise."""
    lines = draw(st.lists(_line, max_size=12))
    seps = draw(st.lists(_SEPARATORS, min_size=len(lines), max_size=len(lines)))
    body = "".join(line + sep for line, sep in zip(lines, seps, strict=True))
    return draw(_SPACE) + body + draw(_SPACE)


UNITIZERS = sorted(list_unitizers())


@pytest.mark.parametrize("name", UNITIZERS)
@MANY_EXAMPLES
@given(doc=documents())
def test_every_unitizer_is_exact_and_complete(name: str, doc: str) -> None:
    """Spans exact, all non-whitespace covered, units valid with ids 0..n-1 in order; window
    units chain (overlap or touch) and cover every segment; other units partition them."""
    assert_segmentation_valid(doc, get_unitizer(name).unitize(doc))


@MANY_EXAMPLES
@given(doc=st.text(max_size=200))
def test_arbitrary_unicode_text_segments_exactly(doc: str) -> None:
    assert_segments_exact(doc, segment_text(doc))


@PROPERTY_SETTINGS
@given(doc=documents(), max_words=st.sampled_from([1, 2, 3, 8, 150]))
def test_no_segment_exceeds_max_words(doc: str, max_words: int) -> None:
    segments = segment_text(doc, max_words=max_words)
    assert_segments_exact(doc, segments)
    assert all(len(s.text.split()) <= max_words for s in segments)


@PROPERTY_SETTINGS
@given(doc=documents())
def test_segmentation_is_deterministic(doc: str) -> None:
    assert segment_text(doc) == segment_text(doc)


@PROPERTY_SETTINGS
@given(doc=documents())
def test_section_is_the_latest_heading(doc: str) -> None:
    result = SectionUnitizer().unitize(doc)
    current: str | None = None
    labels = []
    for segment in result.segments:
        if segment.heading is not None:
            current = segment.heading
        labels.append(current)
    expected_groups = base_groups(result.segments)
    assert [list(u.segments) for u in result.units] == expected_groups
    for unit in result.units:
        assert unit.section == labels[unit.segments[0]]
        # only headers precede the last segment of a unit: a header joins what it introduces
        assert all(result.segments[i].kind == "header" for i in unit.segments[:-1])


@PROPERTY_SETTINGS
@given(
    doc=documents(),
    base_words=st.integers(1, 80),
    overlap=st.sampled_from([0.0, 0.25, 0.5, 0.9]),
)
def test_windows_chain_for_any_parameters(doc: str, base_words: int, overlap: float) -> None:
    result = WindowUnitizer(base_words=base_words, overlap=overlap).unitize(doc)
    assert_segmentation_valid(doc, result)
    assert_windows_chain(result)
    if overlap == 0.0:
        assert result.overlapping is False
        for prev, nxt in pairwise(result.units):
            assert nxt.segments[0] == prev.segments[-1] + 1


@PROPERTY_SETTINGS
@given(
    doc=documents(),
    threshold=st.sampled_from([0.01, 0.06, 0.3, 0.99]),
    decay=st.sampled_from([0.5, 4.0, 50.0]),
    max_segments=st.sampled_from([1, 2, 8, None]),
)
def test_clusters_partition_segments_for_any_parameters(
    doc: str, threshold: float, decay: float, max_segments: int | None
) -> None:
    unitizer = ClusterUnitizer(threshold=threshold, decay=decay, max_segments=max_segments)
    result = unitizer.unitize(doc)
    assert_segmentation_valid(doc, result)
    owners = sorted(i for unit in result.units for i in unit.segments)
    assert owners == list(range(len(result.segments)))
    if max_segments is not None:
        # a header rides along with the sentence it introduces and is not counted
        for unit in result.units:
            content = [i for i in unit.segments if result.segments[i].kind != "header"]
            assert len(content) <= max_segments
