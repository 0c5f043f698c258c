"""The paper's budget unit: whitespace-separated words."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["WordTokenizer"]

_WORD = re.compile(r"\S+")


class WordTokenizer:
    """Counts whitespace-separated words (``len(text.split())``), as the paper's released code
    does for its word-denominated budgets.

    >>> WordTokenizer().count("Na 135, K 4.1")
    4
    """

    @property
    def name(self) -> str:
        return "words"

    def __repr__(self) -> str:
        return "WordTokenizer()"

    def count(self, text: str) -> int:
        return len(text.split())

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [len(t.split()) for t in texts]

    def truncate(self, text: str, max_tokens: int) -> str:
        if len(text.split()) <= max_tokens:
            return text  # it fits: keep it whole, trailing whitespace included
        if max_tokens <= 0:
            return ""
        end = 0
        for i, match in enumerate(_WORD.finditer(text)):
            if i == max_tokens:
                break
            end = match.end()
        return text[:end]
