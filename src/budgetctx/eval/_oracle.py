"""The extractive oracle: the ceiling a selector could reach if it could see the reference.

It is a selector like the others (so its context obeys the same budget contract) but it is
built *from the reference* and is only ever used to score, labelled ``oracle``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from budgetctx.build._pipeline import PreparedDocument
from budgetctx.selectors import Selection, SelectionProblem

__all__ = ["OracleSelector", "rouge_tokens"]


def rouge_tokens(text: str, *, use_stemmer: bool = True) -> list[str]:
    """Tokens exactly as rouge-score sees them (lower case, alphanumerics, Porter stems)."""
    from rouge_score import tokenizers

    return list(tokenizers.DefaultTokenizer(use_stemmer=use_stemmer).tokenize(text))


def _f1(overlap: NDArray[np.float64], cand: NDArray[np.float64], ref: int) -> NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(cand > 0, overlap / np.maximum(cand, 1), 0.0)
        r = overlap / ref if ref else np.zeros_like(overlap)
        f = np.where(p + r > 0, 2 * p * r / np.maximum(p + r, 1e-300), 0.0)
    return f


class _Grams:
    """Per-segment counts of the reference's n-grams, as a sparse segment x gram matrix."""

    def __init__(self, ref: Counter[Any], per_segment: Sequence[Counter[Any]], totals: list[int]):
        vocab = {g: i for i, g in enumerate(ref)}
        self.ref = np.array([ref[g] for g in vocab], dtype=np.float64)
        self.n_ref = int(sum(ref.values()))
        rows, cols, vals = [], [], []
        for s, counts in enumerate(per_segment):
            for g, c in counts.items():
                j = vocab.get(g)
                if j is not None:
                    rows.append(s)
                    cols.append(j)
                    vals.append(c)
        shape = (len(per_segment), len(vocab))
        self.S = sparse.csr_matrix((np.asarray(vals, dtype=np.float64), (rows, cols)), shape=shape)
        self.totals = np.asarray(totals, dtype=np.float64)
        self.reset()

    def reset(self) -> None:
        self.cur = np.zeros(self.ref.shape[0])
        self.overlap = 0.0
        self.length = 0.0

    def gains(self, U: sparse.csr_matrix) -> NDArray[np.float64]:
        """Overlap added by each unit's (uncovered) grams: sum min(cur + u, ref) - min(cur, ref)."""
        if U.nnz == 0:
            return np.zeros(U.shape[0])
        cur, ref = self.cur[U.indices], self.ref[U.indices]
        delta = np.minimum(cur + U.data, ref) - np.minimum(cur, ref)
        out = np.zeros(U.shape[0])
        counts = np.diff(U.indptr)
        rows = np.repeat(np.arange(U.shape[0]), counts)
        np.add.at(out, rows, delta)
        return out

    def add(self, segs: Sequence[int]) -> None:
        for s in segs:
            lo, hi = self.S.indptr[s], self.S.indptr[s + 1]
            idx, val = self.S.indices[lo:hi], self.S.data[lo:hi]
            before = np.minimum(self.cur[idx], self.ref[idx]).sum()
            self.cur[idx] += val
            self.overlap += float(np.minimum(self.cur[idx], self.ref[idx]).sum() - before)
            self.length += float(self.totals[s])


class OracleSelector:
    """Greedy ROUGE-optimal selection under the token budget (mean of ROUGE-1 and ROUGE-2
    F1): at each step add the unit that leaves the best score, until nothing fits, and keep
    the best prefix of that path (stopping at the first step that does not improve can end
    below Lead, since F1 is not monotone in the selection).

    Counts are kept per segment, so overlapping windows are counted once; bigrams across
    segment boundaries are ignored (the final context is scored with real ROUGE). Every
    step scores all candidates at once with sparse count matrices. Greedy is not optimal:
    on a few documents a selector scores above it (one of the first eight Cochrane abstracts
    at 256 tokens), which is why reports also give the per-instance best selector.
    """

    name = "oracle"

    def __init__(self, doc: PreparedDocument, reference: str, *, use_stemmer: bool = True):
        ref = rouge_tokens(reference, use_stemmer=use_stemmer)
        seg_tokens = [
            rouge_tokens(s.text, use_stemmer=use_stemmer) for s in doc.segmentation.segments
        ]
        self.uni = _Grams(
            Counter(ref), [Counter(t) for t in seg_tokens], [len(t) for t in seg_tokens]
        )
        self.bi = _Grams(
            Counter(pairwise(ref)),
            [Counter(pairwise(t)) for t in seg_tokens],
            [max(len(t) - 1, 0) for t in seg_tokens],
        )

    def params(self) -> dict[str, Any]:
        return {}

    def select(self, problem: SelectionProblem) -> Selection:
        n, n_seg = problem.n, len(problem.segment_costs)
        tracker = problem.tracker()
        self.uni.reset()
        self.bi.reset()
        rows = [u for u, segs in enumerate(problem.unit_segments) for _ in segs]
        cols = [s for segs in problem.unit_segments for s in segs]
        incidence = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n_seg))
        uncovered = np.ones(n_seg)
        score = best_score = 0.0
        best_len = 0
        order: list[int] = []
        gains: list[float] = []
        while True:
            A = incidence @ sparse.diags(uncovered)
            values = np.zeros(n)
            for grams in (self.uni, self.bi):
                U = (A @ grams.S).tocsr()
                overlap = grams.overlap + grams.gains(U)
                length = grams.length + A @ grams.totals
                values += 0.5 * _f1(overlap, length, grams.n_ref)
            ok = ~tracker.is_selected & (tracker.marginal <= tracker.remaining)
            if n == 0 or not ok.any():
                break
            values = np.where(ok, values, -np.inf)
            best = int(np.argmax(values))
            new_segs = [s for s in problem.unit_segments[best] if uncovered[s]]
            for grams in (self.uni, self.bi):
                grams.add(new_segs)
            uncovered[new_segs] = 0.0
            tracker.add(best)
            order.append(best)
            gains.append(float(values[best]) - score)
            score = float(values[best])
            if score > best_score + 1e-12:
                best_score, best_len = score, len(order)
        order, gains, score = order[:best_len], gains[:best_len], best_score
        return Selection(tuple(order), tuple(gains), objective=score)
