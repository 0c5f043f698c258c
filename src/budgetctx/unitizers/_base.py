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


# Units are built by the hundred per document, and a frozen dataclass's generated __init__
# (one object.__setattr__ per field) took about 2 us a unit: with the segments, most of what
# unitizing costs after the sentence splitter. Setting the slots through their descriptors
# makes the same object (same class, same values: equal, same hash and repr) in a third of
# the time (issue 27, sixth pass). Unit has no __post_init__ that this would skip; a test
# keeps it so and compares the two ways field by field.
_NEW = object.__new__
_SET_ID, _SET_SEGMENTS, _SET_SPANS, _SET_TEXT, _SET_KIND, _SET_SECTION, _SET_SPEAKER = (
    Unit.__dict__[f].__set__
    for f in ("id", "segments", "spans", "text", "kind", "section", "speaker")
)


def _unit(
    uid: int,
    segments: tuple[int, ...],
    spans: tuple[tuple[int, int], ...],
    text: str,
    kind: str,
    section: str | None,
    speaker: str | None = None,
) -> Unit:
    """``Unit(uid, segments, spans, text, kind, section, speaker)``, built faster."""
    unit: Unit = _NEW(Unit)
    _SET_ID(unit, uid)
    _SET_SEGMENTS(unit, segments)
    _SET_SPANS(unit, spans)
    _SET_TEXT(unit, text)
    _SET_KIND(unit, kind)
    _SET_SECTION(unit, section)
    _SET_SPEAKER(unit, speaker)
    return unit


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
        if len(group) == 1:  # most units: one sentence, built without the generic joins
            s = segments[group[0]]
            section = sections[uid] if sections is not None else None
            units.append(
                _unit(uid, (group[0],), ((s.start, s.end),), s.text, kind or s.kind, section)
            )
            continue
        idx = tuple(sorted(group))
        segs = [segments[i] for i in idx]
        units.append(
            _unit(
                uid,
                idx,
                tuple((s.start, s.end) for s in segs),
                " ".join(s.text for s in segs),
                kind or segs[-1].kind,
                sections[uid] if sections is not None else None,
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
