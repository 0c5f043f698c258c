"""The Representation protocol and registry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

from budgetctx._core.registry import Registry

__all__ = [
    "Encoded",
    "Matrix",
    "Representation",
    "get_representation",
    "list_representations",
    "register_representation",
]

#: Row-per-unit feature matrix: a scipy.sparse CSR matrix (TF-IDF; for a small document
#: without a query, a :class:`~budgetctx.representations._csr.CsrRows`, the same arrays
#: without scipy) or a dense ndarray (embeddings). scipy ships no type information, so this
#: is Any to the type checker.
Matrix: TypeAlias = Any


@dataclass(frozen=True)
class Encoded:
    """Unit features with L2-normalised rows, and the query encoded the same way.

    ``query`` is None when no query was given; it is an all-zero row when the query shares
    nothing with the document's vocabulary. ``semantic`` is an optional per-unit relevance to
    the query by meaning (in [0, 1]), added to the lexical cosine by
    :func:`~budgetctx.representations.build_features`.
    """

    X: Matrix
    query: Matrix | None = None
    semantic: Matrix | None = None


@runtime_checkable
class Representation(Protocol):
    """Encodes unit texts (and a query) as L2-normalised feature rows."""

    @property
    def name(self) -> str: ...

    def params(self) -> dict[str, Any]: ...

    def encode(self, texts: Sequence[str], *, query: str | None = None) -> Encoded: ...


_REGISTRY: Registry[Representation] = Registry("representation", Representation)


def register_representation(
    name: str, factory: Callable[..., Representation], *, aliases: tuple[str, ...] = ()
) -> None:
    """Register a representation factory under ``name``."""
    _REGISTRY.register(name, factory, aliases=aliases)


def list_representations() -> list[str]:
    """Names accepted by :func:`get_representation`."""
    return _REGISTRY.names()


def get_representation(spec: str | Representation, /, **options: Any) -> Representation:
    """Return a representation from its name (built with ``options``) or an instance.

    >>> get_representation("tfidf").name
    'tfidf'
    """
    return _REGISTRY.resolve(spec, **options)
