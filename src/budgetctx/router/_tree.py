"""A fitted regression tree as plain arrays: JSON in, JSON out, no pickle."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["TreeModel"]


@dataclass(frozen=True)
class TreeModel:
    """Node arrays of a scikit-learn tree: a leaf has ``left == -1``; ``value[node]`` is the
    vector of mean scores (one per candidate selector) of the training rows in it."""

    feature: tuple[int, ...]
    threshold: tuple[float, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    value: tuple[tuple[float, ...], ...]
    n_samples: tuple[int, ...]

    @classmethod
    def from_sklearn(cls, model: Any) -> TreeModel:
        t = model.tree_
        values = np.asarray(t.value)[:, :, 0]  # (nodes, outputs, 1) for a multi-output regressor
        return cls(
            feature=tuple(int(f) for f in t.feature),
            threshold=tuple(float(x) for x in t.threshold),
            left=tuple(int(x) for x in t.children_left),
            right=tuple(int(x) for x in t.children_right),
            value=tuple(tuple(float(v) for v in row) for row in values),
            n_samples=tuple(int(x) for x in t.n_node_samples),
        )

    def leaf(self, x: Sequence[float]) -> int:
        node = 0
        while self.left[node] != -1:
            node = (
                self.left[node]
                if x[self.feature[node]] <= self.threshold[node]
                else (self.right[node])
            )
        return node

    def predict(self, x: Sequence[float]) -> NDArray[np.float64]:
        return np.asarray(self.value[self.leaf(x)], dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        return {
            "feature": list(self.feature),
            "threshold": list(self.threshold),
            "left": list(self.left),
            "right": list(self.right),
            "value": [list(v) for v in self.value],
            "n_samples": list(self.n_samples),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TreeModel:
        tree = cls(
            feature=tuple(int(x) for x in data["feature"]),
            threshold=tuple(float(x) for x in data["threshold"]),
            left=tuple(int(x) for x in data["left"]),
            right=tuple(int(x) for x in data["right"]),
            value=tuple(tuple(float(v) for v in row) for row in data["value"]),
            n_samples=tuple(int(x) for x in data["n_samples"]),
        )
        n = len(tree.feature)
        sizes = {len(tree.threshold), len(tree.left), len(tree.right), len(tree.value)}
        if sizes != {n} or any(not (-1 <= c < n) for c in tree.left + tree.right):
            raise ValueError("inconsistent tree arrays")
        return tree
