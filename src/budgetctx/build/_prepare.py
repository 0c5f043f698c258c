"""The counting half of preparation: every segment's cost and every document's count from one
encoding of each document, where the tokenizer can map an encoding back to offsets."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from budgetctx.tokenizers import Tokenizer
from budgetctx.unitizers import Segmentation

__all__ = ["BLAS_THREADS_ENV", "blas_threads", "count_segmentations"]

#: Selectors whose selection multiplies matrices through BLAS (weighted coverage sums).
_BLAS_SELECTORS = frozenset({"facility", "rcd"})
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
    ([3, 3], [6])
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
