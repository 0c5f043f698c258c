"""Per-unit weights for the selectors' objectives: a lead (position) prior and a fragment rule.

The weight of unit ``i`` (units numbered in document order from 0; with several documents,
within each document, so that a later document is not penalised for coming later) is::

    w_i = exp(-position_decay * i)     if unit i costs >= min_unit_tokens tokens
    w_i = 0                            otherwise (a fragment: "OK .", "Yeah .", "1.")

``position_decay=0`` and ``min_unit_tokens=0`` give ``w = 1`` everywhere: no prior. The
selectors default to 0.01 and 5 (see ``DEFAULT_POSITION_DECAY``). The decay is
per unit index, as in the paper's released code (0.03 for facility location, 0.04 for RCD), so
the prior is about absolute position: summaries draw on the opening of long reports whatever
their length. Fragments are also taken out of the ground set (see :func:`allowed_units`): a
restriction of a monotone submodular function stays monotone submodular, and weights
``w_i >= 0`` keep a weighted coverage ``sum_i w_i max_{j in S} k(i, j)`` monotone submodular.

>>> import numpy as np
>>> np.round(np.exp(-0.5 * np.arange(3)), 3).tolist()
[1.0, 0.607, 0.368]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from budgetctx._core.validation import Constraint, Interval
from budgetctx.selectors._base import SelectionProblem

__all__ = [
    "DEFAULT_COST_EXPONENT",
    "DEFAULT_MIN_UNIT_TOKENS",
    "DEFAULT_POSITION_DECAY",
    "allowed_units",
    "unit_weights",
]

# The defaults of MMR, facility location and RCD (issue 15). Chosen on the *validation* splits
# of every public dataset (L-Eval, Cochrane TSAR, Cochrane-PLS, PubMedQA, MTSamples) at budgets
# 256-2048: a grid r in {0, .25, .5, .75, 1} x d in {0, .01, .03} x m in {0, 5}, scored by the
# mean over datasets of each dataset's mean ROUGE-1 over the budgets that cut it; this setting
# had the best mean over the three selectors (docs/results.md). r=1 with d=0 and m=0 is the
# paper's cost-scaled greedy; it loses 0.06 ROUGE-1 on long reports and transcripts, while
# r=0 (length ignored) loses 0.04 on abstracts, where a short sentence is worth its few tokens.
DEFAULT_COST_EXPONENT = 0.25
DEFAULT_POSITION_DECAY = 0.01
DEFAULT_MIN_UNIT_TOKENS = 5

#: Rules for the lead prior and the fragment rule, shared by every selector that has them.
PRIOR_RULES: dict[str, Constraint] = {
    "position_decay": Interval(
        float, 0, None, fix="0 means no lead prior; 0.03 halves a unit's weight every 23 units."
    ),
    "min_unit_tokens": Interval(int, 0, None, fix="0 keeps every unit; e.g. 4 drops 'OK .'."),
}
#: Rules for MMR's score (relevance less redundancy, per cost ** cost_exponent) and its priors:
#: MMR, and hierarchical and graphcluster, which rank their candidates by it.
MMR_SCORE_RULES: dict[str, Constraint] = {
    "lambda_": Interval(float, 0, 1, fix="1 is pure relevance, 0 pure novelty; try 0.7."),
    "cost_exponent": Interval(
        float, 0, 1, fix="0 ignores unit length, 1 ranks by score per token."
    ),
    **PRIOR_RULES,
}

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


def allowed_units(problem: SelectionProblem, *, min_unit_tokens: int) -> BoolArray | None:
    """Units a selector may pick: None (all) unless the fragment rule removes some.

    When every unit is a fragment the rule is dropped, since an empty context helps nobody.
    """
    if min_unit_tokens <= 0 or problem.n == 0:
        return None
    keep: BoolArray = problem.unit_costs >= min_unit_tokens
    if keep.all() or not keep.any():
        return None
    return keep


def unit_weights(
    problem: SelectionProblem, *, position_decay: float, min_unit_tokens: int
) -> FloatArray | None:
    """``w_i`` of the module docstring, or None when every weight would be 1 (no prior)."""
    keep = allowed_units(problem, min_unit_tokens=min_unit_tokens)
    if position_decay == 0 and keep is None:
        return None
    positions = problem.unit_positions().astype(np.float64)
    # A huge decay overflows to inf, whose exp(-inf) is the weight 0 it should be.
    with np.errstate(over="ignore"):
        w: FloatArray = np.exp(-position_decay * positions)
    if keep is not None:
        w[~keep] = 0.0
    return w
