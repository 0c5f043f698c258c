"""Least divergence: run several selectors, keep the context closest to its document
(issue 21, third and fourth passes).

Louis and Nenkova (2013) found that the Jensen-Shannon divergence between a summary's word
distribution and its input's ranks summaries nearly as well as ROUGE against references
does. Here it chooses at run time among candidate selectors that err in different ways: MMR
reading the centroid salience (our best single selector), MMR reading the fused salience
of :mod:`budgetctx.selectors._salience` (better on reports, papers, meetings and Cochrane-PLS,
worse on patents and TV scripts) and RCD reading the fused salience (its default; better on
reports, meetings, reviews and Cochrane). Each candidate solves the same problem; the one
whose kept units' content terms diverge least from the document's
(:func:`budgetctx.router.context_divergence`, each unit counting each of its distinct
content terms once) is kept. Nothing is fitted and no reference is read: the choice is the
document's own statistics. A call costs 1.6-2.0x an MMR call at 2k tokens and several times
it on long documents, where RCD's greedy dominates (benchmarks/bench_select_settings.py
--total --pairs mmr least_divergence).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from budgetctx._core.component import Component
from budgetctx._core.validation import Constraint, OneOf, Predicate
from budgetctx.selectors._base import Selection, SelectionProblem, Selector, get_selector
from budgetctx.selectors._salience import with_salience

__all__ = ["DEFAULT_CANDIDATES", "LeastDivergenceSelector"]

#: Chosen on the validation splits of every public dataset, leave-one-dataset-out
#: (docs/results.md, issue 21 fourth pass): MMR, MMR reading the fused salience and RCD
#: reading it, chosen between by the divergence of term presence (validation 0.3285 and
#: 11/22 cells within 0.005 of the best rival; the third pass's two MMRs by term mass,
#: 0.3256 and 9/22). RCD is spelled with its salience so that the candidate stays what
#: was measured if RCD's default moves. 1.6-2.0x MMR's call at 2k tokens (the limit is 2x),
#: 5.5-6x at 64k (RCD's lazy greedy; 5.5x after session 4's greedy work).
DEFAULT_CANDIDATES = ("mmr", "mmr:salience=fused", "rcd:salience=fused")

_SELF = ("least_divergence", "divergence", "auto")

# Built candidates by spec: parsing and validating a spec costs about as much as an MMR
# selection on a 2k-token document, and `auto` builds this selector (so checks its
# candidates) on every call. Only immutable selectors are kept (registered names never
# change their factory: the registry refuses a second registration).
_BUILT: dict[str, Selector] = {}


def _candidate(spec: str) -> Selector:
    selector = _BUILT.get(spec)
    if selector is None:
        selector = get_selector(spec)
        params = getattr(selector, "__dataclass_params__", None)
        frozen = dataclasses.is_dataclass(selector) and params is not None and params.frozen
        if frozen and len(_BUILT) < 256:
            _BUILT[spec] = selector
    return selector


def _candidates_ok(value: Any) -> bool:
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        return False
    for spec in value:
        if not isinstance(spec, str) or spec.split(":", 1)[0].strip().lower() in _SELF:
            return False
        _candidate(spec)
    return True


@dataclass(frozen=True)
class LeastDivergenceSelector(Component, name="least_divergence"):
    """Runs every selector in ``candidates`` (specs) and keeps the selection whose context
    diverges least from the document; ties go to the earlier candidate.

    >>> LeastDivergenceSelector().candidates
    ('mmr', 'mmr:salience=fused', 'rcd:salience=fused')
    """

    candidates: tuple[str, ...] = DEFAULT_CANDIDATES
    #: how the divergence weighs a unit's terms (``router._divergence.TERM_WEIGHTS``):
    #: ``"presence"`` chose better than the third pass's ``"mass"`` on validation (issue 21,
    #: fourth pass)
    terms: str = "presence"

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "candidates": Predicate(
            _candidates_ok,
            "a non-empty sequence of selector specs (not least_divergence or auto)",
            fix="e.g. ('mmr', 'rcd:salience=fused').",
            convert=tuple,
        ),
        "terms": OneOf(("presence", "mass"), fix="use 'presence' (the default) or 'mass'."),
    }

    def select(self, problem: SelectionProblem) -> Selection:
        # router._divergence reads only representations; imported here so that importing the
        # selectors does not import the router package
        from budgetctx.router._divergence import context_divergences

        specs = self.candidates
        fused: SelectionProblem | None = None
        selections = []
        for spec in specs:
            selector = _candidate(spec)
            if getattr(selector, "salience", None) == "fused":
                # the fused salience once for every candidate that reads it
                fused = fused or with_salience(problem, "fused")
                selections.append(selector.select(fused))
            else:
                selections.append(selector.select(problem))
        scores = context_divergences(
            problem.features, [s.order for s in selections], terms=self.terms
        )
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
