"""Units, the Unitizer protocol and the unitizer registry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from budgetctx._core.registry import Registry
from budgetctx.unitizers._segment import Segment

__all__ = [
    "Segmentation",
    "Unit",
    "Unitizer",
    "base_groups",
    "get_unitizer",
    "list_unitizers",
    "register_unitizer",
    "units_from_groups",
]


@dataclass(frozen=True, slots=True)
class Unit:
    """A selectable unit: one or more segments of the document.

    ``spans`` holds one exact ``(start, end)`` character span per segment; a cluster unit may
    have non-contiguous spans, and window units may share segments with their neighbours.
    ``text`` (segment texts joined by a space) is what representations see; the rendered context
    always uses the exact segment text. ``speaker``: in a dialogue, who says the unit (the tag
    of the turn it starts in, as written), so that a sentence cut from a long turn keeps it.
    """

    id: int
    segments: tuple[int, ...]
    spans: tuple[tuple[int, int], ...]
    text: str
    kind: str = "sentence"
    section: str | None = None
    speaker: str | None = None


@dataclass(frozen=True)
class Segmentation:
    """The result of unitizing one document."""

    document: str
    segments: tuple[Segment, ...]
    units: tuple[Unit, ...]
    unitizer: str
    #: True when units may share segments (windows); selectors then use marginal costs.
    overlapping: bool = False


@runtime_checkable
class Unitizer(Protocol):
    """Turns a document into a :class:`Segmentation`."""

    @property
    def name(self) -> str: ...

    def params(self) -> dict[str, Any]: ...

    def unitize(self, text: str) -> Segmentation: ...


def base_groups(segments: Sequence[Segment]) -> list[list[int]]:
    """Segment indices grouped so that a header line travels with what it introduces.

    A header alone ("DISCHARGE MEDICATIONS:") tells a model nothing and, being short, is
    cheap enough that cost-scaled selectors would collect headers instead of content; so
    consecutive header segments join the first segment after them. A trailing header stays
    on its own.

    >>> from budgetctx.unitizers import segment_text
    >>> base_groups(segment_text("PLAN\\nRest. Fluids."))
    [[0, 1], [2]]
    """
    groups: list[list[int]] = []
    pending: list[int] = []
    for i, seg in enumerate(segments):
        pending.append(i)
        if seg.kind != "header":
            groups.append(pending)
            pending = []
    if pending:
        groups.append(pending)
    return groups


def units_from_groups(
    segments: Sequence[Segment],
    groups: Sequence[Sequence[int]],
    *,
    kind: str | None = None,
    sections: Sequence[str | None] | None = None,
) -> tuple[Unit, ...]:
    """Build units (ids in order) from groups of segment indices."""
    units = []
    for uid, group in enumerate(groups):
        idx = tuple(sorted(group))
        segs = [segments[i] for i in idx]
        units.append(
            Unit(
                id=uid,
                segments=idx,
                spans=tuple((s.start, s.end) for s in segs),
                text=" ".join(s.text for s in segs),
                kind=kind or segs[-1].kind,
                section=sections[uid] if sections is not None else None,
            )
        )
    return tuple(units)


_REGISTRY: Registry[Unitizer] = Registry("unitizer", Unitizer)


def register_unitizer(
    name: str, factory: Callable[..., Unitizer], *, aliases: tuple[str, ...] = ()
) -> None:
    """Register a unitizer factory under ``name``."""
    _REGISTRY.register(name, factory, aliases=aliases)


def list_unitizers() -> list[str]:
    """Names accepted by :func:`get_unitizer`."""
    return _REGISTRY.names()


def get_unitizer(spec: str | Unitizer, /, **options: Any) -> Unitizer:
    """Return a unitizer from its name (built with ``options``) or an instance.

    >>> get_unitizer("window", base_words=40).name
    'window'
    """
    return _REGISTRY.resolve(spec, **options)
