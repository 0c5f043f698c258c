"""Cluster-Unit (paper 3.3): connected components of a sentence similarity graph."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from budgetctx._errors import InvalidParameterError
from budgetctx.unitizers._base import Segmentation, base_groups, units_from_groups
from budgetctx.unitizers._segment import segment_text
from budgetctx.unitizers._sentence import _check_max_words, section_labels

__all__ = ["ClusterUnitizer"]


@dataclass(frozen=True)
class ClusterUnitizer:
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

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold <= 1.0:
            raise InvalidParameterError(
                f"threshold must be in (0, 1], got {self.threshold!r}; try 0.06.",
                parameter="threshold",
                value=self.threshold,
            )
        if not (self.decay > 0 and math.isfinite(self.decay)):
            raise InvalidParameterError(
                f"decay must be a finite number > 0 (in sentences), got {self.decay!r}; try 4.",
                parameter="decay",
                value=self.decay,
            )
        if self.max_segments is not None and self.max_segments < 1:
            raise InvalidParameterError(
                f"max_segments must be >= 1 or None, got {self.max_segments!r}.",
                parameter="max_segments",
                value=self.max_segments,
            )
        _check_max_words(self.max_words)

    @property
    def name(self) -> str:
        return "cluster"

    def params(self) -> dict[str, Any]:
        return asdict(self)

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
        reach = max(1, math.floor(self.decay * math.log(1.0 / self.threshold)))
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
