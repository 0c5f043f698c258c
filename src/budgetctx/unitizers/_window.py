"""Window-Unit (paper 3.3): overlapping windows whose size follows local content density."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from budgetctx._core.component import Component
from budgetctx._core.validation import Constraint, Interval
from budgetctx.unitizers._base import Segmentation, base_groups, units_from_groups
from budgetctx.unitizers._segment import segment_text
from budgetctx.unitizers._sentence import MAX_WORDS, section_labels

__all__ = ["WindowUnitizer"]

_TOKEN = re.compile(r"\w+")
# Function words carry little content; numbers and rare words carry a lot in clinical text.
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "by",
        "from",
        "as",
        "is",
        "was",
        "were",
        "be",
        "been",
        "are",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "he",
        "she",
        "they",
        "his",
        "her",
        "their",
        "we",
        "our",
        "you",
        "your",
        "i",
        "me",
        "my",
        "not",
        "no",
        "so",
        "if",
        "then",
        "than",
        "there",
        "here",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "will",
        "would",
        "can",
        "could",
        "should",
        "may",
        "might",
        "also",
        "which",
        "who",
        "whom",
        "whose",
        "what",
        "when",
        "where",
        "while",
        "after",
        "before",
        "during",
        "into",
        "over",
        "under",
        "about",
    ]
)


def _density(text: str) -> float:
    words = _TOKEN.findall(text.lower())
    if not words:
        return 0.0
    content = sum(1 for w in words if w not in _STOP and (len(w) > 2 or w.isdigit()))
    return content / len(words)


@dataclass(frozen=True)
class WindowUnitizer(Component, name="window"):
    """Overlapping windows of whole sentences, about ``base_words`` words long.

    Windows are shorter where the text is dense (many content words and numbers, as in a
    medication list) and longer where it is thin (boilerplate, conversational filler), within
    ``[min_scale, max_scale] * base_words``. Each window starts about half-way through the
    previous one (``overlap``). Selected windows that overlap are merged when the context is
    rendered, so shared sentences are paid for once.

    >>> text = "One two three four. Five six seven. Eight nine. Ten eleven twelve."
    >>> [u.segments for u in WindowUnitizer(base_words=8).unitize(text).units]
    [(0, 1, 2), (2, 3)]
    """

    base_words: int = 50
    overlap: float = 0.5
    min_scale: float = 0.5
    max_scale: float = 2.0
    max_words: int | None = 150

    # min_scale <= 1 <= max_scale is the joint rule, split into one rule per parameter.
    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "base_words": Interval(int, 1, fix="pass a whole number of words; the paper uses 50."),
        "overlap": Interval(
            float,
            0,
            1,
            closed="left",
            fix="0.5 starts each window half-way through the previous one, 0 never overlaps.",
        ),
        "min_scale": Interval(
            float, 0, 1, closed="right", fix="dense text shrinks windows to this share; try 0.5."
        ),
        "max_scale": Interval(
            float, 1, None, fix="thin text stretches windows up to this factor; try 2."
        ),
        "max_words": MAX_WORDS,
    }

    def unitize(self, text: str) -> Segmentation:
        segments = tuple(segment_text(text, max_words=self.max_words))
        n = len(segments)
        if n == 0:
            return Segmentation(text, segments, (), self.name, overlapping=self.overlap > 0)
        # Windows are made of whole base groups (a sentence, with its header if it has one).
        items = base_groups(segments)
        n = len(items)
        texts = [" ".join(segments[i].text for i in item) for item in items]
        words = np.array([len(t.split()) for t in texts], dtype=float)
        dens = np.array([_density(t) for t in texts])
        # Local density: word-weighted mean over a few neighbouring segments.
        kernel = np.ones(5)
        local = np.convolve(dens * words, kernel, "same") / np.maximum(
            np.convolve(words, kernel, "same"), 1.0
        )
        ref = float(np.median(local)) or 1.0
        scale = np.clip(ref / np.maximum(local, 1e-6), self.min_scale, self.max_scale)
        groups: list[list[int]] = []
        start = 0
        while start < n:
            target = self.base_words * float(scale[start])
            end, total = start, 0.0
            while end < n and (total < target or end == start):
                total += words[end]
                end += 1
            groups.append([i for item in items[start:end] for i in item])
            if end >= n:
                break
            # Next window starts where `overlap` of this one's words remain ahead of it.
            keep = total * self.overlap
            nxt, acc = end, 0.0
            while nxt - 1 > start and acc + words[nxt - 1] <= keep:
                nxt -= 1
                acc += words[nxt]
            start = max(nxt, start + 1)
        labels = section_labels(segments)
        units = units_from_groups(
            segments, groups, kind="window", sections=[labels[g[0]] for g in groups]
        )
        return Segmentation(text, segments, units, self.name, overlapping=self.overlap > 0)
