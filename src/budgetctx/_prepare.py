"""The counting half of preparation: every segment's cost and every document's count from one
encoding of each document, where the tokenizer can map an encoding back to offsets."""

from __future__ import annotations

from collections.abc import Sequence

from budgetctx.tokenizers import Tokenizer
from budgetctx.unitizers import Segmentation

__all__ = ["count_segmentations"]


def count_segmentations(
    tok: Tokenizer, segmentations: Sequence[Segmentation], separator: str
) -> tuple[list[int], list[int]]:
    """Per segment (all documents, in order): ``count(segment + separator)``; per document:
    ``count(document)``. Exact either way: a tokenizer with ``count_segments`` (tiktoken's
    encodings) reads segment counts from one encoding of the document, any other counts each
    segment and the document on its own.

    >>> from budgetctx.tokenizers import get_tokenizer
    >>> from budgetctx.unitizers import get_unitizer
    >>> seg = get_unitizer("sentence").unitize("Chest pain. No fever.")
    >>> count_segmentations(get_tokenizer("o200k_base"), [seg], "\\n")
    ([3, 4], [6])
    """
    costs: list[int] = []
    totals: list[int] = []
    count_segments = getattr(tok, "count_segments", None)
    for seg in segmentations:
        spans = [(g.start, g.end) for g in seg.segments]
        if count_segments is not None:
            own, total = count_segments(seg.document, spans, separator)
        else:
            own = tok.count_batch([g.text + separator for g in seg.segments])
            total = tok.count(seg.document)
        costs.extend(own)
        totals.append(int(total))
    return costs, totals
