"""Invariants every segmentation must satisfy, shared by the unitizer tests."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from budgetctx.unitizers import Segment, Segmentation


def assert_segments_exact(document: str, segments: Sequence[Segment]) -> None:
    """Spans are exact, in order, non-overlapping, trimmed, and lose no text.

    Coverage: every non-whitespace character of ``document`` lies inside some segment, i.e. the
    gaps between consecutive segments (and before the first and after the last) are blank.
    """
    pos = 0
    for k, seg in enumerate(segments):
        assert document[seg.start : seg.end] == seg.text, f"segment {k} is not exact: {seg!r}"
        assert pos <= seg.start < seg.end, f"segment {k} overlaps or is empty: {seg!r}"
        assert seg.text == seg.text.strip(), f"segment {k} has outer whitespace: {seg!r}"
        gap = document[pos : seg.start]
        assert not gap.strip(), f"text lost before segment {k}: {gap!r}"
        assert seg.kind in {"sentence", "item", "header"}, seg
        pos = seg.end
    assert not document[pos:].strip(), f"text lost at the end: {document[pos:]!r}"


def assert_units_valid(seg: Segmentation) -> None:
    """Units point at real segments, in sorted order, with exact spans and ids 0..n-1 in
    order of their first segment."""
    n = len(seg.segments)
    assert [u.id for u in seg.units] == list(range(len(seg.units)))
    firsts = [u.segments[0] for u in seg.units]
    assert firsts == sorted(firsts), "units are not in order of their first segment"
    for unit in seg.units:
        assert unit.segments, f"unit {unit.id} is empty"
        assert list(unit.segments) == sorted(set(unit.segments)), unit
        assert all(0 <= i < n for i in unit.segments), unit
        assert unit.spans == tuple(
            (seg.segments[i].start, seg.segments[i].end) for i in unit.segments
        )
        for (a, b), i in zip(unit.spans, unit.segments, strict=True):
            assert seg.document[a:b] == seg.segments[i].text
        assert unit.text == " ".join(seg.segments[i].text for i in unit.segments)


def assert_segmentation_valid(document: str, seg: Segmentation) -> None:
    assert seg.document == document
    assert_segments_exact(document, seg.segments)
    assert_units_valid(seg)
    if seg.unitizer == "window":
        assert_windows_chain(seg)
    else:
        # every other unitizer partitions the segments: each belongs to exactly one unit
        owners = sorted(i for u in seg.units for i in u.segments)
        assert owners == list(range(len(seg.segments)))


def assert_windows_chain(seg: Segmentation) -> None:
    """Windows are runs of consecutive segments; each starts after the previous one's start
    and no later than just after its end (overlap or touch), and together they cover every
    segment."""
    units = seg.units
    for unit in units:
        assert list(unit.segments) == list(range(unit.segments[0], unit.segments[-1] + 1))
    for prev, nxt in pairwise(units):
        assert prev.segments[0] < nxt.segments[0] <= prev.segments[-1] + 1, (prev, nxt)
    if seg.segments:
        assert units[0].segments[0] == 0
        assert units[-1].segments[-1] == len(seg.segments) - 1
    else:
        assert units == ()
