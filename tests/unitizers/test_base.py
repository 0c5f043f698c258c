"""``unitizers._base``: units built through their slots are the dataclass's own units."""

from __future__ import annotations

import dataclasses
import pickle

from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx.unitizers import Unit
from budgetctx.unitizers._base import _unit

_TEXT = st.text(max_size=12)
_NAME = st.none() | _TEXT


def test_unit_has_no_post_init_for_the_fast_path_to_skip() -> None:
    """``_unit`` sets the slots without calling ``Unit.__init__``: equal only while the
    generated __init__ does nothing more than set them."""
    assert not hasattr(Unit, "__post_init__")
    assert [f.name for f in dataclasses.fields(Unit)] == [
        *("id", "segments", "spans", "text", "kind", "section", "speaker")
    ]


@settings(max_examples=100, deadline=None)
@given(
    uid=st.integers(0, 10**6),
    segments=st.lists(st.integers(0, 99), max_size=3).map(tuple),
    spans=st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99)), max_size=3).map(tuple),
    text=_TEXT,
    kind=st.sampled_from(["sentence", "item", "header", "turn"]),
    section=_NAME,
    speaker=_NAME,
)
def test_fast_units_are_the_dataclass_units(
    uid: int,
    segments: tuple[int, ...],
    spans: tuple[tuple[int, int], ...],
    text: str,
    kind: str,
    section: str | None,
    speaker: str | None,
) -> None:
    fast = _unit(uid, segments, spans, text, kind, section, speaker)
    slow = Unit(uid, segments, spans, text, kind, section, speaker)
    assert type(fast) is Unit
    assert dataclasses.astuple(fast) == dataclasses.astuple(slow)
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert pickle.loads(pickle.dumps(fast)) == slow
    assert _unit(uid, segments, spans, text, kind, section) == Unit(
        uid, segments, spans, text, kind, section
    )
