"""Selectors: choose a budget-feasible subset of units.

>>> from budgetctx.selectors import get_selector, list_selectors
>>> get_selector("rcd").name
'rcd'
"""

from __future__ import annotations

from budgetctx.selectors._base import (
    BudgetTracker,
    Selection,
    SelectionProblem,
    Selector,
    get_selector,
    list_selectors,
    register_selector,
)
from budgetctx.selectors._graphcluster import GraphClusterSelector
from budgetctx.selectors._greedy import lazy_greedy, naive_greedy
from budgetctx.selectors._hierarchical import HierarchicalSelector
from budgetctx.selectors._leastdiv import LeastDivergenceSelector
from budgetctx.selectors._mmr import MMRSelector
from budgetctx.selectors._positional import LeadSelector, ShuffledSelector, SlidingSelector
from budgetctx.selectors._spec import (
    parse_option_value,
    parse_options,
    parse_selector_spec,
    parse_selector_specs,
    split_selector_specs,
)
from budgetctx.selectors._submodular import FacilitySelector, RCDSelector

register_selector("lead", LeadSelector)
register_selector("shuffled", ShuffledSelector, aliases=("random", "shuffle"))
register_selector("sliding", SlidingSelector)
register_selector("hierarchical", HierarchicalSelector, aliases=("hier",))
register_selector("graphcluster", GraphClusterSelector, aliases=("gsc", "graph"))
register_selector("mmr", MMRSelector)
register_selector("facility", FacilitySelector, aliases=("facility_location",))
register_selector("rcd", RCDSelector)
register_selector("least_divergence", LeastDivergenceSelector, aliases=("divergence",))

__all__ = [
    "BudgetTracker",
    "FacilitySelector",
    "GraphClusterSelector",
    "HierarchicalSelector",
    "LeadSelector",
    "LeastDivergenceSelector",
    "MMRSelector",
    "RCDSelector",
    "Selection",
    "SelectionProblem",
    "Selector",
    "ShuffledSelector",
    "SlidingSelector",
    "get_selector",
    "lazy_greedy",
    "list_selectors",
    "naive_greedy",
    "parse_option_value",
    "parse_options",
    "parse_selector_spec",
    "parse_selector_specs",
    "register_selector",
    "split_selector_specs",
]
