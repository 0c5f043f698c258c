"""Unitizers: document -> segments (exact spans) -> selectable units.

>>> from budgetctx.unitizers import get_unitizer
>>> units = get_unitizer("section").unitize("CHIEF COMPLAINT: Chest pain.").units
>>> (units[0].section, units[0].spans)
('CHIEF COMPLAINT', ((0, 28),))
"""

from __future__ import annotations

from budgetctx.unitizers._base import (
    Segmentation,
    Unit,
    Unitizer,
    get_unitizer,
    list_unitizers,
    register_unitizer,
)
from budgetctx.unitizers._blocks import BlockUnitizer
from budgetctx.unitizers._cluster import ClusterUnitizer
from budgetctx.unitizers._segment import Segment, segment_text
from budgetctx.unitizers._sentence import SectionUnitizer, SentenceUnitizer
from budgetctx.unitizers._turns import TurnUnitizer
from budgetctx.unitizers._window import WindowUnitizer

register_unitizer("sentence", SentenceUnitizer, aliases=("sent",))
register_unitizer("section", SectionUnitizer, aliases=("sections",))
register_unitizer("window", WindowUnitizer, aliases=("windows",))
register_unitizer("cluster", ClusterUnitizer)
register_unitizer("blocks", BlockUnitizer, aliases=("markdown",))
register_unitizer("turn", TurnUnitizer, aliases=("turns", "dialogue"))

__all__ = [
    "BlockUnitizer",
    "ClusterUnitizer",
    "SectionUnitizer",
    "Segment",
    "Segmentation",
    "SentenceUnitizer",
    "TurnUnitizer",
    "Unit",
    "Unitizer",
    "WindowUnitizer",
    "get_unitizer",
    "list_unitizers",
    "register_unitizer",
    "segment_text",
]
