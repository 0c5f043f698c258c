"""Least divergence: run several selectors, keep the context closest to its document
(issue 21, third pass).

Louis and Nenkova (2013) found that the Jensen-Shannon divergence between a summary's word
distribution and its input's ranks summaries nearly as well as ROUGE against references
does. Here it chooses at run time among candidate selectors that err in different ways: MMR
reading the centroid salience (our best single selector) and MMR reading the fused salience
of :mod:`budgetctx.selectors._salience` (better on reports, papers, meetings and Cochrane-PLS,
worse on patents and TV scripts). Each candidate solves the same problem; the one whose kept
units' content-term mass diverges least from the document's
(:func:`budgetctx.router.context_divergence`) is kept.
Nothing is fitted and no reference is read: the choice is the document's own statistics.
Selection is a few per cent of a call, so running two costs little (benchmarks/
bench_select_settings.py --total --pairs mmr least_divergence).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from budgetctx._core.component import Component
from budgetctx._core.validation import Constraint, Predicate
from budgetctx.selectors._base import Selection, SelectionProblem, get_selector
from budgetctx.selectors._salience import with_salience

__all__ = ["DEFAULT_CANDIDATES", "LeastDivergenceSelector"]

#: Chosen on the validation splits of every public dataset, leave-one-dataset-out
#: (docs/results.md, issue 21 third pass): MMR as it is and MMR reading the fused salience.
#: Adding ``"rcd:salience=fused"`` scored a little higher there (0.3272 against 0.3256) but
#: RCD's lazy greedy made a call 1.7-2.5x MMR's at 2k tokens, past the 2x ``auto`` may cost.
DEFAULT_CANDIDATES = ("mmr", "mmr:salience=fused")

_SELF = ("least_divergence", "divergence", "auto")


def _candidates_ok(value: Any) -> bool:
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        return False
    for spec in value:
        if not isinstance(spec, str) or spec.split(":", 1)[0].strip().lower() in _SELF:
            return False
        get_selector(spec)
    return True


@dataclass(frozen=True)
class LeastDivergenceSelector(Component, name="least_divergence"):
    """Runs every selector in ``candidates`` (specs) and keeps the selection whose context
    diverges least from the document; ties go to the earlier candidate.

    >>> LeastDivergenceSelector().candidates
    ('mmr', 'mmr:salience=fused')
    """

    candidates: tuple[str, ...] = DEFAULT_CANDIDATES

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "candidates": Predicate(
            _candidates_ok,
            "a non-empty sequence of selector specs (not least_divergence or auto)",
            fix="e.g. ('mmr', 'rcd:salience=fused').",
            convert=tuple,
        ),
    }

    def select(self, problem: SelectionProblem) -> Selection:
        # router._divergence reads only representations; imported here so that importing the
        # selectors does not import the router package
        from budgetctx.router._divergence import context_divergences

        specs = self.candidates
        fused: SelectionProblem | None = None
        selections = []
        for spec in specs:
            selector = get_selector(spec)
            if getattr(selector, "salience", None) == "fused":
                # the fused salience once for every candidate that reads it
                fused = fused or with_salience(problem, "fused")
                selections.append(selector.select(fused))
            else:
                selections.append(selector.select(problem))
        scores = context_divergences(problem.features, [s.order for s in selections])
        k = min(range(len(specs)), key=scores.__getitem__)  # ties: the earlier candidate
        chosen = selections[k]
        note = f"least divergence: {specs[k]} ({scores[k]:.4f})"
        return Selection(
            chosen.order,
            chosen.gains,
            chosen.overflow,
            chosen.objective,
            note if chosen.note is None else f"{note}; {chosen.note}",
        )
