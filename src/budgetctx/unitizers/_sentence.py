"""Sentence-Unit and Section-Unit (paper 3.3)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from budgetctx._core.component import Component
from budgetctx._core.validation import Constraint, Interval, NoneOr
from budgetctx.unitizers._base import Segmentation, base_groups, units_from_groups
from budgetctx.unitizers._segment import Segment, segment_text

__all__ = ["MAX_WORDS", "SectionUnitizer", "SentenceUnitizer", "section_labels"]


#: The rule every unitizer shares: sentences longer than this are cut at word boundaries.
MAX_WORDS: Constraint = NoneOr(
    Interval(int, 1), fix="pass a whole number of words such as 150, or None to never cut."
)


@dataclass(frozen=True)
class SentenceUnitizer(Component, name="sentence"):
    """One unit per sentence or list item; a header line joins the sentence it introduces.

    >>> [u.text for u in SentenceUnitizer().unitize("Seen by Dr. Lee. Na 135, K 4.1.").units]
    ['Seen by Dr. Lee.', 'Na 135, K 4.1.']
    """

    max_words: int | None = 150

    _constraints: ClassVar[Mapping[str, Constraint]] = {"max_words": MAX_WORDS}

    def unitize(self, text: str) -> Segmentation:
        segments = tuple(segment_text(text, max_words=self.max_words))
        units = units_from_groups(segments, base_groups(segments))
        return Segmentation(text, segments, units, self.name)


def section_labels(segments: tuple[Segment, ...] | list[Segment]) -> list[str | None]:
    """The section each segment belongs to: the most recent heading, or None before any."""
    labels: list[str | None] = []
    current: str | None = None
    for seg in segments:
        if seg.heading is not None:
            current = seg.heading
        labels.append(current)
    return labels


@dataclass(frozen=True)
class SectionUnitizer(Component, name="section"):
    """Sentence units labelled with their section (the paper's Section-Unit); a header line
    joins the sentence it introduces.

    Headers are recognised in clinical (``HOSPITAL COURSE:``), Markdown (``## Methods``) and
    abstract (``Background``) styles; a document without headers gives unlabelled sentences.

    >>> seg = SectionUnitizer().unitize("HOSPITAL COURSE: Stable. Discharged home.")
    >>> [u.section for u in seg.units]
    ['HOSPITAL COURSE', 'HOSPITAL COURSE']
    """

    max_words: int | None = 150

    _constraints: ClassVar[Mapping[str, Constraint]] = {"max_words": MAX_WORDS}

    def unitize(self, text: str) -> Segmentation:
        segments = tuple(segment_text(text, max_words=self.max_words))
        labels = section_labels(segments)
        groups = base_groups(segments)
        units = units_from_groups(segments, groups, sections=[labels[g[0]] for g in groups])
        return Segmentation(text, segments, units, self.name)
