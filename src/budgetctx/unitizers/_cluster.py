"""Cluster-Unit (paper 3.3): connected components of a sentence similarity graph."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from budgetctx._core.component import Component
from budgetctx._core.validation import Constraint, Interval, NoneOr
from budgetctx.unitizers._base import Segmentation, base_groups, units_from_groups
from budgetctx.unitizers._segment import segment_text
from budgetctx.unitizers._sentence import MAX_WORDS, section_labels

__all__ = ["ClusterUnitizer"]


@dataclass(frozen=True)
class ClusterUnitizer(Component, name="cluster"):
    """Groups sentences whose TF-IDF cosine, decayed by distance, reaches ``threshold``.

    Edge weight: ``cos(i, j) * exp(-|i - j| / decay)``; only pairs close enough for the weight
    to reach the threshold are compared, so the cost is linear in the number of sentences.
    Connected components become units (possibly several non-contiguous spans); a component
    larger than ``max_segments`` sentences is cut into runs of that many (a header rides
    along with its sentence and is not counted) so that no unit
    swallows a whole document.

    >>> text = "Chest pain at rest. Chest pain resolved. Diet as tolerated."
    >>> [u.segments for u in ClusterUnitizer().unitize(text).units]
    [(0, 1), (2,)]
    """

    threshold: float = 0.06
    decay: float = 4.0
    max_segments: int | None = 8
    max_words: int | None = 150

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "threshold": Interval(
            float,
            0,
            1,
            closed="right",
            fix="it is the weighted cosine that links two sentences; try 0.06.",
        ),
        "decay": Interval(
            float, 0, None, closed="neither", fix="it is a distance in sentences; try 4."
        ),
        "max_segments": NoneOr(
            Interval(int, 1), fix="pass a whole number of sentences such as 8, or None for no cap."
        ),
        "max_words": MAX_WORDS,
    }

    def unitize(self, text: str) -> Segmentation:
        segments = tuple(segment_text(text, max_words=self.max_words))
        n = len(segments)
        if n == 0:
            return Segmentation(text, segments, (), self.name)
        # Cluster base groups (a sentence, with its header if it has one), then expand.
        items = base_groups(segments)
        comps = self._components([" ".join(segments[i].text for i in item) for item in items])
        groups = [[i for c in comp for i in items[c]] for comp in comps]
        labels = section_labels(segments)
        units = units_from_groups(
            segments, groups, kind="cluster", sections=[labels[g[0]] for g in groups]
        )
        return Segmentation(text, segments, units, self.name)

    def _components(self, texts: list[str]) -> list[list[int]]:
        # Imported here: scikit-learn and scipy take seconds to import, and most calls
        # never cluster.
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components
        from sklearn.feature_extraction.text import TfidfVectorizer

        n = len(texts)
        try:
            X = TfidfVectorizer(sublinear_tf=True, stop_words="english").fit_transform(texts)
        except ValueError:  # only stop words or no word characters at all
            return [[i] for i in range(n)]
        # The distance past which exp(-d / decay) can no longer reach the threshold. A huge decay
        # or a tiny threshold makes it infinite: every pair is in reach, not an OverflowError.
        span = self.decay * math.log(1.0 / self.threshold)
        reach = max(1, math.floor(span)) if span < n else n
        rows, cols = [], []
        for d in range(1, min(reach, n - 1) + 1):
            # cosine of every pair at distance d, as a row-wise dot product of sparse rows
            sims = np.asarray(X[:-d].multiply(X[d:]).sum(axis=1)).ravel()
            hit = np.nonzero(sims * math.exp(-d / self.decay) >= self.threshold)[0]
            rows.append(hit)
            cols.append(hit + d)
        r = np.concatenate(rows) if rows else np.empty(0, dtype=int)
        c = np.concatenate(cols) if cols else np.empty(0, dtype=int)
        graph = coo_matrix((np.ones(len(r)), (r, c)), shape=(n, n))
        _, label = connected_components(graph, directed=False)
        members: dict[int, list[int]] = {}
        for i, lab in enumerate(label):
            members.setdefault(int(lab), []).append(i)
        groups = []
        for comp in members.values():
            if self.max_segments is None or len(comp) <= self.max_segments:
                groups.append(comp)
            else:
                groups.extend(
                    comp[k : k + self.max_segments] for k in range(0, len(comp), self.max_segments)
                )
        groups.sort(key=lambda g: g[0])
        return groups
