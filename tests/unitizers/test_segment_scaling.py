"""Segmentation does work linear in its input, also on inputs built to defeat it (issue 10, F2).

Not timed: every regular expression of the segmenter is wrapped to add up how many characters
each call scans (a search up to the end of its match, or its whole range when nothing matches;
a match or a scan for all matches, its whole range). A quadratic path (a merged span
re-searched from its start at every merge) makes that total grow with the square of the
input; the tests fail when four times the input costs more than six times the scanning.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from budgetctx.unitizers import _segment, segment_text
from tests.unitizers._invariants import assert_segments_exact


class _CountingPattern:
    """A compiled pattern that adds the length of every range it is asked to scan."""

    def __init__(self, pattern: re.Pattern[str], counter: list[int]) -> None:
        self._p = pattern
        self._counter = counter

    def _span(self, string: str, pos: int = 0, endpos: int | None = None) -> None:
        end = len(string) if endpos is None else min(endpos, len(string))
        self._counter[0] += max(end - pos, 0)

    def search(self, string: str, *args: Any) -> re.Match[str] | None:
        m = self._p.search(string, *args)
        if m is None:
            self._span(string, *args)
        else:  # a search stops at its first match
            self._counter[0] += m.end() - (args[0] if args else 0)
        return m

    def match(self, string: str, *args: Any) -> re.Match[str] | None:
        self._span(string, *args)
        return self._p.match(string, *args)

    def fullmatch(self, string: str, *args: Any) -> re.Match[str] | None:
        self._span(string, *args)
        return self._p.fullmatch(string, *args)

    def finditer(self, string: str, *args: Any) -> Iterator[re.Match[str]]:
        self._span(string, *args)
        return self._p.finditer(string, *args)

    def findall(self, string: str, *args: Any) -> list[Any]:
        self._span(string, *args)
        return self._p.findall(string, *args)


def _scanned(monkeypatch: pytest.MonkeyPatch, text: str) -> int:
    counter = [0]
    with monkeypatch.context() as m:
        for name, value in vars(_segment).items():
            if isinstance(value, re.Pattern):
                m.setattr(_segment, name, _CountingPattern(value, counter))
        marker = _CountingPattern(_segment._ListNumbers._MARKER, counter)
        m.setattr(_segment._ListNumbers, "_MARKER", marker)
        segments = segment_text(text)
    assert_segments_exact(text, segments)
    return counter[0]


ADVERSARIAL = {
    # blingfire splits after every title; each split is merged back into a growing span
    "titles": "Dr. ",
    "titles-mrs": "Mrs. ",
    "titles-lines": "Dr.\n",
    "abbreviations": "approx. 5 mg. ",
    "name-ends": "Dr. Lee. ",
    # stranded "n." after a label: each looks for an earlier "n - 1." in the block
    "label-numbers": "Score: 5. ",
    "numbered": "b.i.d. 2. ",
    "cjk": "患者は安定。",
    "no-space": "x",
}


@pytest.mark.parametrize("unit", list(ADVERSARIAL.values()), ids=list(ADVERSARIAL))
def test_scanning_is_linear_in_the_input(monkeypatch: pytest.MonkeyPatch, unit: str) -> None:
    small = _scanned(monkeypatch, unit * 1000)
    large = _scanned(monkeypatch, unit * 4000)
    assert large < 6 * max(small, 1), (small, large)
    # and a small constant number of passes over the text
    assert large < 60 * len(unit * 4000), large


def test_counting_sees_a_quadratic_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: re-searching a growing prefix is caught."""
    counter = [0]
    pattern = _CountingPattern(re.compile(r"\bDr\.$"), counter)

    def quadratic(text: str) -> None:
        for end in range(0, len(text), 4):
            pattern.search(text[:end])

    quadratic("Dr. " * 1000)
    small = counter[0]
    counter[0] = 0
    quadratic("Dr. " * 4000)
    assert counter[0] > 6 * small


@pytest.mark.parametrize("unit", ["Dr. ", "Mrs. ", "Dr.\n"])
def test_adversarial_titles_still_segment_sensibly(unit: str) -> None:
    text = unit * 2000
    segments = segment_text(text)
    assert_segments_exact(text, segments)
    # cut only by max_words (150 words a segment), not into thousands of pieces
    assert len(segments) <= len(text.split()) // 150 + 2 * text.count("\n") // 150 + 2
