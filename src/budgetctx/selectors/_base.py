"""Selection problems, results, the Selector protocol and registry."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from budgetctx._core.registry import Registry
from budgetctx._errors import InvalidParameterError
from budgetctx.representations import UnitFeatures
from budgetctx.selectors._spec import parse_selector_spec

__all__ = [
    "BudgetTracker",
    "Selection",
    "SelectionProblem",
    "Selector",
    "get_selector",
    "list_selectors",
    "register_selector",
]

IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class SelectionProblem:
    """A token knapsack over units.

    Units are made of segments; a segment's cost is paid once however many selected units
    contain it (overlapping windows). ``capacity`` is the budget the selector must respect.
    Units are numbered in document order.
    """

    unit_segments: tuple[tuple[int, ...], ...]
    segment_costs: IntArray
    features: UnitFeatures
    capacity: int
    overlapping: bool = False
    #: each unit's position in its own document (what a position prior reads); None means
    #: ``0..n-1``. Several documents, or the units left once pinned ones are taken, set it.
    positions: IntArray | None = None
    unit_costs: IntArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # One gather and one segmented sum for all units (a loop over units cost a tenth of a
        # 64k-token call); the sums are integers, so the same values.
        sizes = np.fromiter(map(len, self.unit_segments), dtype=np.int64, count=self.n)
        flat = np.fromiter(
            itertools.chain.from_iterable(self.unit_segments), dtype=np.int64, count=sizes.sum()
        )
        costs = np.zeros(self.n, dtype=np.int64)
        some = sizes > 0
        if some.any():
            starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))[some]
            gathered = np.asarray(self.segment_costs, dtype=np.int64)[flat]
            costs[some] = np.add.reduceat(gathered, starts)
        object.__setattr__(self, "unit_costs", costs)

    @property
    def n(self) -> int:
        return len(self.unit_segments)

    @property
    def relevance(self) -> NDArray[np.float64]:
        return self.features.relevance

    def unit_positions(self) -> IntArray:
        """Each unit's position in its own document (``0..n-1`` for one document)."""
        if self.positions is not None:
            return self.positions
        return np.arange(self.n, dtype=np.int64)

    def tracker(self) -> BudgetTracker:
        return BudgetTracker(self)


class BudgetTracker:
    """Remaining budget and each unit's marginal cost given what is already selected."""

    def __init__(self, problem: SelectionProblem) -> None:
        self.problem = problem
        self.remaining = int(problem.capacity)
        self.marginal = problem.unit_costs.copy()
        self.selected: list[int] = []
        self.is_selected = np.zeros(problem.n, dtype=bool)
        self._covered = np.zeros(len(problem.segment_costs), dtype=bool)
        self._seg_units: list[list[int]] | None = None
        if problem.overlapping:
            seg_units: list[list[int]] = [[] for _ in range(len(problem.segment_costs))]
            for u, segs in enumerate(problem.unit_segments):
                for s in segs:
                    seg_units[s].append(u)
            self._seg_units = seg_units

    def fits(self, e: int) -> bool:
        return bool(self.marginal[e] <= self.remaining)

    def add(self, e: int) -> list[int]:
        """Select ``e``; returns the other units whose marginal cost dropped."""
        self.remaining -= int(self.marginal[e])
        self.selected.append(e)
        self.is_selected[e] = True
        changed: list[int] = []
        costs = self.problem.segment_costs
        for s in self.problem.unit_segments[e]:
            if self._covered[s]:
                continue
            self._covered[s] = True
            if self._seg_units is not None:
                for u in self._seg_units[s]:
                    if u != e:
                        self.marginal[u] -= costs[s]
                        changed.append(u)
        self.marginal[e] = 0
        return changed


@dataclass(frozen=True)
class Selection:
    """A selector's answer: units in the order it chose them, with the gain of each step.

    ``overflow`` is the unit the selector wanted next but could not fit (used by the
    ``truncate`` option); ``objective`` is the final objective value when there is one.
    """

    order: tuple[int, ...]
    gains: tuple[float, ...]
    overflow: int | None = None
    objective: float | None = None
    note: str | None = None


@runtime_checkable
class Selector(Protocol):
    """Chooses a budget-feasible subset: ``sum of marginal costs <= problem.capacity``."""

    @property
    def name(self) -> str: ...

    def params(self) -> dict[str, Any]: ...

    def select(self, problem: SelectionProblem) -> Selection: ...


_REGISTRY: Registry[Selector] = Registry("selector", Selector)


def register_selector(
    name: str, factory: Callable[..., Selector], *, aliases: tuple[str, ...] = ()
) -> None:
    """Register a selector factory under ``name``."""
    _REGISTRY.register(name, factory, aliases=aliases)


def list_selectors() -> list[str]:
    """Names accepted by :func:`get_selector`.

    >>> list_selectors()  # doctest: +NORMALIZE_WHITESPACE
    ['facility', 'graphcluster', 'hierarchical', 'lead', 'least_divergence', 'mmr', 'rcd',
     'shuffled', 'sliding']
    """
    return _REGISTRY.names()


def get_selector(spec: str | Selector, /, **options: Any) -> Selector:
    """Return a selector from its name or spec (built with ``options``) or an instance.

    A spec is ``name:key=value,...`` (see :mod:`budgetctx.selectors._spec`); an option may be
    given in the spec or as a keyword, not both.

    >>> get_selector("mmr", lambda_=0.5).params()["lambda_"]
    0.5
    >>> get_selector("mmr:lambda_=0.3").params()["lambda_"]
    0.3
    """
    if isinstance(spec, str) and ":" in spec:
        name, given = parse_selector_spec(spec)
        both = sorted(set(given) & set(options))
        if both:
            raise InvalidParameterError(
                f"The selector spec {spec!r} and selector_options both set {both}; set each "
                "option in one place.",
                parameter="selector_options",
                value=both,
            )
        return _REGISTRY.resolve(name, **given, **options)
    return _REGISTRY.resolve(spec, **options)


def greedy_fill(
    tracker: BudgetTracker, candidates: Sequence[int] | IntArray, gains: Sequence[float] | None
) -> tuple[list[int], list[float], int | None]:
    """Add candidates in the given order whenever they fit; returns (order, gains, overflow)."""
    order: list[int] = []
    out: list[float] = []
    overflow: int | None = None
    for k, e in enumerate(candidates):
        e = int(e)
        if tracker.is_selected[e]:
            continue
        if tracker.fits(e):
            tracker.add(e)
            order.append(e)
            out.append(float(gains[k]) if gains is not None else 0.0)
        elif overflow is None:
            overflow = e
    return order, out, overflow
