"""Sentence units, except that a Markdown code block or table is one unit, never cut inside.

Chat messages carry code and tables: a sentence splitter would cut a fenced block at every
period and a table between rows, and a context holding half a function or half a table is
worse than one without it. So each fenced block (```` ``` ```` or ``~~~`` up to its closing
fence, or to the end of the text when it is never closed) and each run of table lines
(lines starting with ``|``, a header-separator row among them) is one segment and one unit;
the text between them is split into sentences as usual.

>>> text = "See below.\\n```python\\nx = 1. + 2.\\nprint(x)\\n```\\nThat is all."
>>> [u.kind for u in BlockUnitizer().unitize(text).units]
['sentence', 'block', 'sentence']
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import ClassVar

from budgetctx._core.component import Component
from budgetctx._core.validation import Constraint
from budgetctx.unitizers._base import Segmentation, base_groups, units_from_groups
from budgetctx.unitizers._segment import Segment, segment_text
from budgetctx.unitizers._sentence import MAX_WORDS

__all__ = ["BlockUnitizer", "find_blocks"]

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})", re.MULTILINE)
_TABLE_LINE = re.compile(r"^[ \t]*\|.*$", re.MULTILINE)
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$")


def _fences(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    pos = 0
    while True:
        m = _FENCE.search(text, pos)
        if m is None:
            return spans
        fence = m.group(1)
        closing = re.compile(
            rf"^[ \t]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE
        )
        line_end = text.find("\n", m.end())
        close = closing.search(text, line_end + 1) if line_end >= 0 else None
        end = len(text) if close is None else close.end()
        spans.append((m.start(), end))
        pos = end


def _tables(text: str, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    run: list[re.Match[str]] = []

    def flush() -> None:
        if len(run) >= 2 and any(_TABLE_RULE.match(m.group(0)) for m in run):
            spans.append((run[0].start(), run[-1].end()))
        run.clear()

    for m in _TABLE_LINE.finditer(text):
        if any(a <= m.start() < b for a, b in taken):
            continue
        if run and text[run[-1].end() : m.start()] != "\n":
            flush()
        run.append(m)
    flush()
    return spans


def find_blocks(text: str) -> list[tuple[int, int]]:
    """Character spans of the fenced code blocks and Markdown tables of ``text``, in order.

    >>> find_blocks("a\\n| x | y |\\n|---|---|\\n| 1 | 2 |\\nb")
    [(2, 31)]
    """
    fences = _fences(text)
    return sorted(fences + _tables(text, fences))


@dataclass(frozen=True)
class BlockUnitizer(Component, name="blocks"):
    """Sentences and list items as units, Markdown code blocks and tables whole."""

    max_words: int | None = 150

    _constraints: ClassVar[Mapping[str, Constraint]] = {"max_words": MAX_WORDS}

    def unitize(self, text: str) -> Segmentation:
        segments: list[Segment] = []
        pos = 0

        def prose(start: int, end: int) -> None:
            for s in segment_text(text[start:end], max_words=self.max_words):
                segments.append(replace(s, start=s.start + start, end=s.end + start))

        for start, end in find_blocks(text):
            prose(pos, start)
            # Trailing newlines stay outside, so the block's span is its own lines.
            block = text[start:end].rstrip()
            segments.append(Segment(start, start + len(block), block, kind="block"))
            pos = end
        prose(pos, len(text))
        groups = base_groups(segments)
        return Segmentation(text, tuple(segments), units_from_groups(segments, groups), self.name)
