"""Documents and helpers shared by the adapter tests: the bundled sample note, one document
per section, so that a retriever returns several documents and the budget must cut them."""

from __future__ import annotations

import re

from budgetctx import get_tokenizer
from budgetctx.data import sample_note

TOKENIZER = "o200k_base"
#: what the frameworks put between two documents in a prompt
JOIN = "\n\n"
QUERY = "heart failure diuretic torsemide dose and follow-up clinic"


def sections() -> list[tuple[str, str]]:
    """``(section name, text)`` for every paragraph of the sample note."""
    out = []
    for i, text in enumerate(p for p in sample_note().split("\n\n") if p.strip()):
        head = re.match(r"[A-Z][A-Z /-]+(?=:)", text)
        out.append((head.group(0) if head else f"part-{i}", text))
    return out


def count(text: str) -> int:
    """Tokens of ``text`` with the tokenizer the tests give the adapters."""
    return get_tokenizer(TOKENIZER).count(text)


def between(text: str, start: str, end: str) -> str:
    """The part of a prompt between two markers (each present exactly once)."""
    assert text.count(start) == 1 and text.count(end) == 1, (start, end)
    return text.split(start, 1)[1].split(end, 1)[0]


def assert_spans_slice(source: str, kept: str, spans: list[list[int]], separator: str) -> None:
    """The provenance spans cut ``source`` into the pieces that make up ``kept``: joined by
    ``separator``, or with the source's own text between them when it was kept whole."""
    assert spans, "a kept document has at least one span"
    pieces = [source[s:e] for s, e in spans]
    assert all(pieces), spans
    if kept == source:
        starts = [s for s, _ in spans]
        assert starts == sorted(starts) and spans[-1][1] <= len(source)
    else:
        assert kept == separator.join(pieces)
