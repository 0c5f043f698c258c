"""Row labels that are not selectors: the extractive oracle and the full-document baseline.

>>> ORACLE, FULL, FULL_UNITIZER
('oracle', 'full', 'none')
"""

from __future__ import annotations

__all__ = ["FULL", "FULL_UNITIZER", "ORACLE"]

#: Selector label of the extractive oracle's rows (it reads the reference: an upper bound).
ORACLE = "oracle"
#: Selector label and unitizer of the full-context baseline rows (budget 0: no budget).
FULL = "full"
FULL_UNITIZER = "none"
