"""Representations (unit features), relevance and similarity kernels.

>>> from budgetctx.representations import get_representation, build_features
>>> enc = get_representation("tfidf").encode(["chest pain", "pain resolved", "diet"])
>>> build_features(enc).relevance.round(2).tolist()
[0.71, 0.71, 0.52]
"""

from __future__ import annotations

from budgetctx.representations._base import (
    Encoded,
    Representation,
    get_representation,
    list_representations,
    register_representation,
)
from budgetctx.representations._embeddings import EmbeddingRepresentation
from budgetctx.representations._features import (
    DENSE_LIMIT,
    DenseKernel,
    Kernel,
    SparseKernel,
    UnitFeatures,
    build_features,
    psd_project,
    subset_features,
)
from budgetctx.representations._tfidf import TfidfRepresentation

register_representation("tfidf", TfidfRepresentation)
register_representation(
    "embeddings", EmbeddingRepresentation, aliases=("embedding", "sentence-transformers")
)

__all__ = [
    "DENSE_LIMIT",
    "DenseKernel",
    "EmbeddingRepresentation",
    "Encoded",
    "Kernel",
    "Representation",
    "SparseKernel",
    "TfidfRepresentation",
    "UnitFeatures",
    "build_features",
    "get_representation",
    "list_representations",
    "psd_project",
    "register_representation",
    "subset_features",
]
