"""The counting half of preparation: every segment's cost and every document's count from one
encoding of each document, where the tokenizer can map an encoding back to offsets."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from budgetctx.tokenizers import TiktokenTokenizer, Tokenizer
from budgetctx.unitizers import Segmentation

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "BLAS_THREADS_ENV",
    "Encoded",
    "blas_threads",
    "count_segmentations",
    "encode_texts",
    "separator_slack",
]

#: Selectors whose selection multiplies matrices through BLAS (weighted coverage sums);
#: least_divergence (what ``auto`` runs) runs RCD among its candidates (issue 21, fourth pass:
#: unheld, its coverage sums made RCD's selection 10-20x slower at 256k tokens on 2 cores).
_BLAS_SELECTORS = frozenset({"facility", "rcd", "least_divergence"})
#: Environment variable: BLAS threads a facility/RCD selection may use (default 1).
BLAS_THREADS_ENV = "BUDGETCTX_BLAS_THREADS"
_CONTROLLER: list[tuple[int, Any]] = []


@contextmanager
def blas_threads(selector: str) -> Iterator[None]:
    """Hold BLAS to ``$BUDGETCTX_BLAS_THREADS`` threads (default 1) while ``selector`` runs,
    when it is one that multiplies matrices (facility, rcd).

    The products are matrix-vector ones on at most a few thousand rows: a second BLAS thread
    doubled their CPU time for no gain in wall time (issue 27), and in ``batch`` or a service
    each worker is already one of the cores. The limit is lifted when the selection returns,
    so the caller's own numpy keeps its threads; an empty or invalid value, or ``0``, leaves
    BLAS alone. Results do not depend on it (each output of a product is summed by one thread).
    """
    raw = os.environ.get(BLAS_THREADS_ENV, "1").strip()
    limit = int(raw) if raw.isdigit() else 0
    if selector not in _BLAS_SELECTORS or limit <= 0:
        yield
        return
    if not _CONTROLLER or _CONTROLLER[0][0] != len(sys.modules):
        # Built on first use (it inspects the loaded libraries, ~15 ms) and again when modules
        # were imported since: a BLAS loaded later (scipy's, torch's) would otherwise go unheld.
        from threadpoolctl import ThreadpoolController

        _CONTROLLER[:] = [(len(sys.modules), ThreadpoolController())]
    with _CONTROLLER[0][1].limit(limits=limit, user_api="blas"):
        yield


#: A text's count, and its encoding where the tokenizer can map one back to segments
#: (:func:`encode_texts`).
Encoded = tuple[int, "NDArray[np.uint32] | None"]


def encode_texts(tok: Tokenizer, texts: Sequence[str]) -> list[Encoded]:
    """Each text's count, with its encoding when ``tok`` is tiktoken's (which
    :func:`count_segmentations` then reads again instead of encoding the text twice)."""
    if isinstance(tok, TiktokenTokenizer):
        out: list[Encoded] = []
        for t in texts:
            ids = tok._encode_array(t)
            out.append((len(ids), ids))
        return out
    return [(n, None) for n in tok.count_batch(texts)]


def count_segmentations(
    tok: Tokenizer,
    segmentations: Sequence[Segmentation],
    separator: str,
    encoded: Sequence[Encoded] | None = None,
) -> tuple[list[int], list[int]]:
    """Per segment (all documents, in order): ``count(segment + separator)``; per document:
    ``count(document)``. Exact either way: a tokenizer with ``count_segments`` (tiktoken's
    encodings) reads segment counts from one encoding of the document, any other counts each
    segment and the document on its own. ``encoded``: each document's :func:`encode_texts`,
    when it was counted already (the count-first exit, issue 27), so it is not encoded again.

    >>> from budgetctx.tokenizers import get_tokenizer
    >>> from budgetctx.unitizers import get_unitizer
    >>> seg = get_unitizer("sentence").unitize("Chest pain. No fever.")
    >>> count_segmentations(get_tokenizer("o200k_base"), [seg], "\\n")
    ([3, 3], [6])
    """
    costs: list[int] = []
    totals: list[int] = []
    count_segments = getattr(tok, "count_segments", None)
    for k, seg in enumerate(segmentations):
        spans = [(g.start, g.end) for g in seg.segments]
        known = encoded[k] if encoded is not None else None
        if count_segments is not None:
            if known is not None and known[1] is not None:
                own, total = count_segments(seg.document, spans, separator, ids=known[1])
            else:
                own, total = count_segments(seg.document, spans, separator)
        else:
            own = tok.count_batch([g.text + separator for g in seg.segments])
            total = tok.count(seg.document) if known is None else known[0]
        costs.extend(own)
        totals.append(int(total))
    return costs, totals


#: Tokenizers whose pre-tokenizer never carries a piece across a single space between two
#: non-space characters (checked for their patterns, see tokenizers/_tiktoken.py).
_SPACE_BOUNDARY = frozenset({"o200k_base", "cl100k_base"})


def _tail(text: str) -> str:
    """``text`` from its last single space between two non-space characters (a piece boundary
    of the encodings in ``_SPACE_BOUNDARY``), or all of it."""
    k = text.rfind(" ")
    while k > 0:
        if k + 1 < len(text) and not text[k - 1].isspace() and not text[k + 1].isspace():
            return text[k:]
        k = text.rfind(" ", 0, k)
    return text


def separator_slack(tok: Tokenizer, texts: Sequence[str], separator: str) -> int:
    """Tokens that the separator after the last rendered segment is sure to add to the
    segments' costs: ``min(count(g + separator) - count(g))`` over the segments ``g``.

    A segment's cost counts one separator after it (``count(g + separator)``), but the last
    one is never rendered, so a selection may spend up to this many tokens more than the
    budget and still render within it (issue 27: a 13-token text at budget 11 kept 4 tokens
    where 9 fit with ``separator=" — "``); :func:`~budgetctx.build._render.fit_budget` still counts
    the rendered text. A separator changes only the last piece of the encoding's
    pre-tokenizer (pieces never interact, and segments end in non-space), so each distinct
    last piece is counted once; the first 0 ends the search, which for ``"\\n"`` is usually
    the first piece (``".\\n"`` is one token). Tokenizers other than those in
    ``_SPACE_BOUNDARY`` get 0 (the costs as before).

    >>> from budgetctx.tokenizers import get_tokenizer
    >>> separator_slack(get_tokenizer("o200k_base"), ["Chest pain.", "No fever"], " — ")
    2
    """
    if not separator or not isinstance(tok, TiktokenTokenizer) or tok.name not in _SPACE_BOUNDARY:
        return 0
    split = tok._split
    # Segments grouped by their last character, the commonest first: one with a "." settles
    # "\\n" at once. The last piece is found (the pre-tokenizer over the segment's tail) only
    # as needed.
    by_end: dict[str, list[str]] = {}
    for t in texts:
        if t:
            by_end.setdefault(t[-1], []).append(t)
    seen: set[str] = set()
    best: int | None = None
    for group in sorted(by_end.values(), key=len, reverse=True):
        for t in group:
            pieces = split(_tail(t))
            if not pieces or pieces[-1] in seen:
                continue
            last = pieces[-1]
            seen.add(last)
            extra = tok.count(last + separator) - tok.count(last)
            best = extra if best is None else min(best, extra)
            if best <= 0:
                return 0
    return best or 0
