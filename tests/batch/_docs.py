"""Documents for the batch tests: variations of the bundled sample note (always present)."""

from __future__ import annotations

from budgetctx.data import sample_note


def notes(n: int) -> list[str]:
    """``n`` distinct notes of different lengths: the sample's paragraphs rotated and cut."""
    paragraphs = [p for p in sample_note().split("\n\n") if p.strip()]
    out = []
    for i in range(n):
        k = i % len(paragraphs)
        rotated = paragraphs[k:] + paragraphs[:k]
        out.append("\n\n".join(rotated[: 3 + (i * 5) % len(paragraphs)]))
    return out


def rows(n: int) -> list[dict[str, str]]:
    return [{"id": f"note-{i}", "text": t} for i, t in enumerate(notes(n))]
