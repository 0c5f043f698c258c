"""Hierarchical, GraphCluster and Sliding with MMR's redundancy term and priors (issue 21, part
E): at plain settings they choose exactly as before; the new terms change what they should."""

from __future__ import annotations

import heapq

import numpy as np
import pytest

from budgetctx.selectors import (
    GraphClusterSelector,
    HierarchicalSelector,
    Selection,
    SelectionProblem,
    SlidingSelector,
)
from budgetctx.selectors._base import greedy_fill
from tests.selectors._problems import make_problem, random_problem

PLAIN = {"lambda_": 1.0, "cost_exponent": 0.0, "position_decay": 0.0, "min_unit_tokens": 0}


def _old_hierarchical(problem: SelectionProblem, anchor_share: float) -> Selection:
    """The selector as it was before part E (relevance alone), kept here as the reference."""
    n, r, tracker = problem.n, problem.relevance, problem.tracker()
    by_relevance = np.argsort(-r, kind="stable")
    order: list[int] = []
    frontier: list[tuple[float, int]] = []

    def take(e: int) -> None:
        tracker.add(e)
        order.append(e)
        for nb in (e - 1, e + 1):
            if 0 <= nb < n and not tracker.is_selected[nb]:
                heapq.heappush(frontier, (-float(r[nb]), nb))

    anchor_budget = anchor_share * problem.capacity
    for e in map(int, by_relevance):
        spent = problem.capacity - tracker.remaining
        if tracker.fits(e) and spent + tracker.marginal[e] <= anchor_budget:
            take(e)
    cursor = 0
    while True:
        while frontier:
            _, e = heapq.heappop(frontier)
            if not tracker.is_selected[e] and tracker.fits(e):
                take(e)
        while cursor < n and (
            tracker.is_selected[by_relevance[cursor]] or not tracker.fits(by_relevance[cursor])
        ):
            cursor += 1
        if cursor >= n:
            break
        take(int(by_relevance[cursor]))
    return Selection(tuple(order), tuple(float(r[e]) for e in order))


def _old_graphcluster(problem: SelectionProblem, threshold: float) -> Selection:
    from scipy.sparse.csgraph import connected_components

    r, tracker = problem.relevance, problem.tracker()
    graph = problem.features.kernel.pairs_above(threshold)
    n_comp, labels = connected_components(graph, directed=False)
    score = np.bincount(labels, weights=r, minlength=n_comp)
    total = float(score.sum())
    order: list[int] = []
    carry = 0.0
    for c in np.argsort(-score, kind="stable"):
        share = problem.capacity * (score[c] / total if total > 0 else 1.0 / n_comp) + carry
        spent = 0
        members = np.flatnonzero(labels == c)
        for e in map(int, members[np.argsort(-r[members], kind="stable")]):
            cost = int(tracker.marginal[e])
            if tracker.fits(e) and spent + cost <= share:
                tracker.add(e)
                spent += cost
                order.append(e)
        carry = share - spent
    rest, _, overflow = greedy_fill(tracker, np.argsort(-r, kind="stable"), None)
    order += rest
    return Selection(tuple(order), tuple(float(r[e]) for e in order), overflow)


@pytest.mark.parametrize("seed", range(40))
def test_plain_settings_choose_exactly_as_before(seed: int) -> None:
    rng = np.random.default_rng(seed)
    problem = random_problem(rng, int(rng.integers(1, 40)), windows=seed % 4 == 0)
    share = float(rng.choice([0.25, 0.5, 1.0]))
    new = HierarchicalSelector(anchor_share=share, **PLAIN).select(problem)
    old = _old_hierarchical(problem, share)
    assert (new.order, new.gains) == (old.order, old.gains)
    if not problem.overlapping:
        threshold = float(rng.choice([0.2, 0.5, 0.9]))
        new_g = GraphClusterSelector(threshold=threshold, **PLAIN).select(problem)
        assert new_g == _old_graphcluster(problem, threshold)


def _duplicates() -> SelectionProblem:
    # units 0 and 1 say the same thing; 3 is less relevant but new; all cost 1
    K = np.eye(5)
    K[0, 1] = K[1, 0] = 1.0
    return make_problem([1.0, 0.95, 0.1, 0.6, 0.1], [1] * 5, 2, kernel=K)


def test_hierarchical_anchors_pass_over_a_repeat() -> None:
    problem = _duplicates()
    assert HierarchicalSelector(anchor_share=1.0, **PLAIN).select(problem).order == (0, 1)
    diverse = HierarchicalSelector(anchor_share=1.0, **{**PLAIN, "lambda_": 0.5})
    assert diverse.select(problem).order == (0, 3)


def test_hierarchical_neighbours_pass_over_a_repeat() -> None:
    # anchor 1; its neighbours 0 (a repeat of 1, more relevant) and 2 (new)
    K = np.eye(4)
    K[0, 1] = K[1, 0] = 1.0
    problem = make_problem([0.5, 1.0, 0.4, 0.0], [1] * 4, 2, kernel=K)
    plain = HierarchicalSelector(anchor_share=0.5, **PLAIN)
    assert plain.select(problem).order == (1, 0)
    diverse = HierarchicalSelector(anchor_share=0.5, **{**PLAIN, "lambda_": 0.5})
    assert diverse.select(problem).order == (1, 2)


def test_hierarchical_never_anchors_a_fragment() -> None:
    # unit 1 (2 tokens) is the most relevant but a fragment; it may still be context
    problem = make_problem([0.1, 1.0, 0.5, 0.2], [6, 2, 6, 6], 14)
    sel = HierarchicalSelector(anchor_share=0.5, **{**PLAIN, "min_unit_tokens": 5})
    assert sel.select(problem).order[0] == 2
    assert 1 in sel.select(problem).order


def test_graphcluster_represents_a_component_without_repeats() -> None:
    # one component {0, 1, 2} (0 and 1 duplicates, 2 linked to both); budget for two units
    K = np.eye(3)
    K[0, 1] = K[1, 0] = 1.0
    K[0, 2] = K[2, 0] = K[1, 2] = K[2, 1] = 0.6
    problem = make_problem([1.0, 0.95, 0.7], [1] * 3, 2, kernel=K)
    assert GraphClusterSelector(threshold=0.5, **PLAIN).select(problem).order == (0, 1)
    diverse = GraphClusterSelector(threshold=0.5, **{**PLAIN, "lambda_": 0.5})
    assert diverse.select(problem).order == (0, 2)


def test_sliding_fragments_add_nothing_to_a_run() -> None:
    # two 1-token fragments with high relevance against two 6-token units
    problem = make_problem([0.1, 0.9, 0.9, 0.1, 0.5, 0.5], [6, 1, 1, 6, 6, 6], 12)
    assert SlidingSelector(position_decay=0.0, min_unit_tokens=0).select(problem).order[:3] == (
        0,
        1,
        2,
    )
    assert SlidingSelector(position_decay=0.0, min_unit_tokens=5).select(problem).order == (4, 5)


def test_sliding_position_decay_moves_a_tie_to_the_start() -> None:
    problem = make_problem([0.5, 0.5, 0.1, 0.5, 0.6], [1] * 5, 2)
    assert SlidingSelector(position_decay=0.0, min_unit_tokens=0).select(problem).order == (3, 4)
    assert SlidingSelector(position_decay=0.5, min_unit_tokens=0).select(problem).order == (0, 1)


def test_the_defaults_are_the_ones_chosen_on_validation() -> None:
    # issue 21, session 6, part E (docs/results.md): changing one is a decision, not a refactor
    assert HierarchicalSelector().params() == {
        "anchor_share": 0.75,
        "lambda_": 0.7,
        "cost_exponent": 0.25,
        "position_decay": 0.01,
        "min_unit_tokens": 5,
    }
    assert GraphClusterSelector().params()["lambda_"] == 0.7
    assert SlidingSelector().params() == {
        "salience": "centroid",
        "position_decay": 0.01,
        "min_unit_tokens": 5,
    }
