"""One evaluation example: a document, its reference, and the split it belongs to."""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Literal, get_args

from budgetctx._core.validation import InstanceOf, NoneOr, OneOf, validate_fields

__all__ = ["SPLITS", "Example", "Split"]

Split = Literal["validation", "test"]
SPLITS: tuple[Split, ...] = get_args(Split)
_STR: Any = InstanceOf(str, "a str")
_OPTIONAL_STR: Any = NoneOr(_STR)


def _freeze(value: Any) -> Any:
    """Lists become tuples and dicts read-only views, so ``meta`` cannot be changed in place."""
    if isinstance(value, Mapping):
        return types.MappingProxyType({str(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class Example:
    """A document to condense, the reference output, and where the pair comes from.

    ``query`` is set only for query-focused tasks; ``label`` only for classification data
    (PubMedQA yes/no/maybe). ``meta`` is read-only and is left out of the hash.

    >>> ex = Example("n1", "Chest pain. Troponin negative.", "Ruled out MI.", meta={"row": 1})
    >>> ex.split, ex.to_dict()["meta"]
    ('test', {'row': 1})
    """

    id: str
    document: str
    reference: str
    _: KW_ONLY
    query: str | None = None
    split: Split = "test"
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False)
    label: str | None = None

    # Any: the frozen rule classes are Constraints at run time (see _validation's Protocol).
    _constraints: ClassVar[Mapping[str, Any]] = {
        "id": _STR,
        "document": _STR,
        "reference": _STR,
        "query": _OPTIONAL_STR,
        "split": OneOf(SPLITS, fix="'validation' or 'test'."),
        "label": _OPTIONAL_STR,
        "meta": InstanceOf(Mapping, "a mapping", fix="e.g. {'row': 1}."),
    }

    def __post_init__(self) -> None:
        validate_fields(self)
        object.__setattr__(self, "meta", _freeze(self.meta))

    def __reduce__(self) -> tuple[Any, ...]:
        # mappingproxy cannot be pickled; rebuild from plain values (multiprocessing, caches).
        return (_rebuild, (self.to_dict(),))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``meta`` becomes a plain dict, tuples become lists)."""
        return {
            "id": self.id,
            "document": self.document,
            "reference": self.reference,
            "query": self.query,
            "split": self.split,
            "label": self.label,
            "meta": _thaw(self.meta),
        }


def _rebuild(data: dict[str, Any]) -> Example:
    return Example(**data)
