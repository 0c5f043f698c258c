"""benchmarks/goal_ceiling.py: the goal's criterion and the ceilings it leaves, on small grids
whose answers are worked out by hand; and peer_grid.py's rank fill once pinned units are taken."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

from tests._benchmarks import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("goal_ceiling")


def _grid(scores: dict[str, dict[str, dict[str, list[float]]]]) -> dict[str, Any]:
    return {"budgets": [256], "scores": scores}


def test_default_rivals_are_defaults_and_the_chosen_peers(bench: ModuleType) -> None:
    row = {"256": [0.1]}
    grid = _grid(
        {
            "a": dict.fromkeys(
                ("auto", "lead", "mmr", "mmr:lambda_=0.5", "turn/mmr", "sumy-lsa", "sumy-lsa+pins"),
                row,
            ),
            # a rival missing from one dataset cannot be a rival in every cell
            "b": dict.fromkeys(("auto", "lead", "sumy-lsa", "sumy-lsa+pins"), row),
        }
    )
    assert bench.default_rivals(grid, "auto", pinned_peers=False) == ["lead", "sumy-lsa"]
    assert bench.default_rivals(grid, "auto", pinned_peers=True) == ["lead", "sumy-lsa+pins"]


def test_hits_oracle_and_halves_by_hand(bench: ModuleType) -> None:
    systems = ["auto", "lead", "mmr"]
    val = {
        # auto 0.30, lead 0.304, mmr 0.20: auto is within 0.005 of lead
        ("a", "256"): np.array([[0.30, 0.30], [0.300, 0.308], [0.2, 0.2]]),
        # one document: lead 0.5 beats auto 0.4 by more than the margin
        ("b", "256"): np.array([[0.4], [0.5], [0.1]]),
    }
    test = {
        ("a", "256"): np.array([[0.30, 0.30], [0.40, 0.40], [0.2, 0.2]]),
        ("b", "256"): np.array([[0.4], [0.5], [0.1]]),
    }
    assert bench.hit_counts(val, systems, ["lead", "mmr"]) == {"auto": 1, "lead": 2, "mmr": 0}
    # chosen on validation: lead in both cells, and lead is the best on test in both
    got, choice = bench.oracle_transfer(val, test, systems, ["lead", "mmr"])
    assert (got, choice) == (2, {("a", "256"): "lead", ("b", "256"): "lead"})
    # halves of cell a on test: lead is best on either half, so always a hit; cell b has one
    # document and counts as a hit
    total, per = bench.split_half(test, systems, ["lead", "mmr"], resamples=20, seed=1)
    assert per == {("a", "256"): 1.0, ("b", "256"): 1.0} and total == 2.0
    # auto on test never comes within the margin of lead, whatever the resample
    mean, lo, hi = bench.resampled_hits(
        test, systems, "auto", ["lead", "mmr"], resamples=50, seed=0
    )
    assert (mean, lo, hi) == (0.0, 0.0, 0.0)


def test_split_half_is_not_always_a_hit(bench: ModuleType) -> None:
    # two systems that trade wins document by document: the best on one half loses on the
    # other half in every split of these four documents
    scores = {("a", "256"): np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])}
    total, _ = bench.split_half(scores, ["x", "y"], ["x", "y"], resamples=200, seed=0)
    assert 0.0 < total < 1.0


def test_report_runs_on_a_grid(bench: ModuleType) -> None:
    grid = _grid(
        {
            "a": {"auto": {"256": [0.3, 0.4]}, "lead": {"256": [0.3, 0.5]}},
            "b": {"auto": {"256": [0.3]}, "lead": {"256": [0.1]}},
        }
    )
    md = bench.report(grid, grid, resamples=10)
    assert "| auto | 1 | 1 |" in md
    assert "dataset-aware oracle" in md


def test_rank_fill_maps_onto_the_units_left_after_pins() -> None:
    peer_grid = load_benchmark("peer_grid")
    from budgetctx.representations import DenseKernel, UnitFeatures
    from budgetctx.selectors import SelectionProblem

    features = UnitFeatures(np.ones(3), DenseKernel(np.eye(3)), "centroid")
    # units 0 and 2 of a document left once unit 1 was pinned
    problem = SelectionProblem(
        ((0,), (1,)), np.array([4, 4]), features, capacity=4, positions=np.array([0, 2])
    )
    got = peer_grid.Ranked((2, 1, 0), "lsa").select(problem)
    assert got.order == (1,)  # document unit 2 first, in the problem's ids
