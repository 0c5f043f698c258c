"""A fitted regression tree as plain arrays: JSON in, JSON out, no pickle."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["TreeModel"]

_ARRAYS = ("feature", "threshold", "left", "right", "value", "n_samples")


@dataclass(frozen=True)
class TreeModel:
    """Node arrays of a scikit-learn tree: a leaf has ``left == -1``; ``value[node]`` is the
    vector of mean scores (one per candidate selector) of the training rows in it.

    Children are numbered after their parent (scikit-learn builds trees depth first), which
    :meth:`from_dict` checks: it is what guarantees that :meth:`leaf` terminates.
    """

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

    @property
    def n_outputs(self) -> int:
        return len(self.value[0]) if self.value else 0

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
    def from_dict(cls, data: Mapping[str, Any], *, n_inputs: int | None = None) -> TreeModel:
        """Read :meth:`to_dict`'s output, checking the whole structure (a malformed tree
        raises ``ValueError`` instead of looping or indexing out of range).

        ``n_inputs`` bounds the feature indices of split nodes.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"the tree must be an object, got {type(data).__name__}")
        for key in _ARRAYS:
            if not isinstance(data[key], list):
                raise ValueError(f"tree {key!r} must be a list, got {type(data[key]).__name__}")
        if any(not isinstance(row, list) for row in data["value"]):
            raise ValueError("tree 'value' must be a list of lists of numbers")
        tree = cls(
            feature=tuple(_int(x, "feature") for x in data["feature"]),
            threshold=tuple(_float(x, "threshold") for x in data["threshold"]),
            left=tuple(_int(x, "left") for x in data["left"]),
            right=tuple(_int(x, "right") for x in data["right"]),
            value=tuple(tuple(_float(v, "value") for v in row) for row in data["value"]),
            n_samples=tuple(_int(x, "n_samples") for x in data["n_samples"]),
        )
        tree._check(n_inputs)
        return tree

    def _check(self, n_inputs: int | None) -> None:
        n = len(self.feature)
        if n == 0:
            raise ValueError("the tree has no nodes")
        sizes = {len(getattr(self, key)) for key in _ARRAYS}
        if sizes != {n}:
            raise ValueError(f"inconsistent tree arrays: lengths {sorted(sizes)}, expected {n}")
        if len({len(row) for row in self.value}) != 1 or not self.value[0]:
            raise ValueError("tree 'value' rows must all have the same, non-zero width")
        for node in range(n):
            left, right = self.left[node], self.right[node]
            if left == -1 and right == -1:
                continue
            # Children after their parent: no cycle, and every path reaches a leaf.
            if not (node < left < n and node < right < n):
                raise ValueError(
                    f"node {node} has children ({left}, {right}); a child must be a node "
                    f"after its parent (index in ({node}, {n})), or both -1 for a leaf"
                )
            feature = self.feature[node]
            if feature < 0 or (n_inputs is not None and feature >= n_inputs):
                bound = f"[0, {n_inputs})" if n_inputs is not None else ">= 0"
                raise ValueError(f"node {node} splits on feature {feature}, not in {bound}")
            if not math.isfinite(self.threshold[node]):
                raise ValueError(f"node {node} has threshold {self.threshold[node]}")


def _int(x: Any, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise ValueError(f"tree {what!r} holds {x!r:.40}, not an integer")
    return x


def _float(x: Any, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
        raise ValueError(f"tree {what!r} holds {x!r:.40}, not a finite number")
    return float(x)
