"""The sensitivity views: hand-computed distances, tolerance shares and slopes; landscapes
from rows; the report's files on a synthetic run."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from budgetctx import InvalidParameterError
from budgetctx.eval._sensitivity import META_KEY, simplex_grid
from budgetctx.eval._store import SweepStore
from budgetctx.eval.report import ReportFiles, write_report
from budgetctx.eval.report._sensitivity import (
    Landscape,
    best_weights,
    distance_slope,
    landscapes,
    lattice_neighbours,
    mean_by_distance,
    wasserstein,
    within_tolerance,
)
from tests.eval.report._synthetic import row, sensitivity_rows

# -- distances --------------------------------------------------------------------------------


def test_wasserstein_uniform_ground_is_half_the_l1_distance() -> None:
    # Moving 0.3 of the weight from alpha to gamma: 0.3 under the uniform metric.
    assert wasserstein((0.5, 0.3, 0.2), (0.2, 0.3, 0.5)) == pytest.approx(0.3)
    # Corner to corner: all the weight moves.
    assert wasserstein((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)) == pytest.approx(1.0)
    assert wasserstein((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)) == pytest.approx(1.0)
    # 0.1 from beta to alpha and 0.1 from gamma to alpha: 0.2 moved.
    assert wasserstein((0.4, 0.4, 0.2), (0.6, 0.3, 0.1)) == pytest.approx(0.2)
    assert wasserstein((0.2, 0.3, 0.5), (0.2, 0.3, 0.5)) == 0.0


def test_wasserstein_line_ground_by_hand() -> None:
    # R, C, D at 0, 1, 2. CDFs (0.5, 0.8, 1) and (0.2, 0.5, 1): |0.3| + |0.3| = 0.6.
    assert wasserstein((0.5, 0.3, 0.2), (0.2, 0.3, 0.5), ground="line") == pytest.approx(0.6)
    # R to D is two steps on the line, R to C one.
    assert wasserstein((1.0, 0.0, 0.0), (0.0, 0.0, 1.0), ground="line") == pytest.approx(2.0)
    assert wasserstein((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), ground="line") == pytest.approx(1.0)


def test_wasserstein_is_a_metric_on_the_grid() -> None:
    grid = simplex_grid(0.25)
    for u in grid:
        for v in grid:
            d = wasserstein(u, v)
            assert d == pytest.approx(wasserstein(v, u))
            assert (d == 0) == (u == v)
            assert 0 <= d <= 1
            for w in grid[::3]:
                assert d <= wasserstein(u, w) + wasserstein(w, v) + 1e-12


@pytest.mark.parametrize(
    "bad", [(0.5, 0.5, 0.5), (1.2, -0.2, 0.0), (0.5, 0.5), (math.nan, 0.5, 0.5)]
)
def test_wasserstein_refuses_points_off_the_simplex(bad: tuple[float, ...]) -> None:
    with pytest.raises(InvalidParameterError, match="weights"):
        wasserstein(bad, (1.0, 0.0, 0.0))


def test_wasserstein_refuses_an_unknown_ground() -> None:
    with pytest.raises(InvalidParameterError, match="uniform"):
        wasserstein((1.0, 0.0, 0.0), (1.0, 0.0, 0.0), ground="taxi")  # type: ignore[arg-type]


def test_lattice_neighbours_are_the_edges_of_the_triangular_lattice() -> None:
    # A triangle cut into n^2 small ones has 3 n (n + 1) / 2 edges.
    for step, n in ((0.5, 2), (0.25, 4), (0.1, 10)):
        assert len(lattice_neighbours(simplex_grid(step), step)) == 3 * n * (n + 1) // 2


# -- within tolerance, slope ------------------------------------------------------------------


def test_within_tolerance_by_hand() -> None:
    means = [0.30, 0.295, 0.28, 0.31]
    # best 0.31: within 0.005 only itself; within 0.01 also 0.30; within 0.02 also 0.295.
    assert within_tolerance(means, 0.005) == 0.25
    assert within_tolerance(means, 0.01) == 0.5
    assert within_tolerance(means, 0.02) == 0.75
    assert within_tolerance(means, 0.03) == 1.0
    # A flat landscape: every setting is the best.
    assert within_tolerance([0.2, 0.2, 0.2], 0.0) == 1.0
    assert math.isnan(within_tolerance([], 0.01))
    with pytest.raises(InvalidParameterError, match="tolerance"):
        within_tolerance(means, -0.01)


def test_distance_slope_by_hand() -> None:
    assert distance_slope([0.0, 0.1, 0.2], [0.30, 0.29, 0.28]) == pytest.approx(-0.1)
    # Least squares through (0, 0), (1, 1), (2, 3): slope 1.5.
    assert distance_slope([0.0, 1.0, 2.0], [0.0, 1.0, 3.0]) == pytest.approx(1.5)
    assert math.isnan(distance_slope([0.5, 0.5], [0.1, 0.2]))


# -- landscapes -------------------------------------------------------------------------------

R, C, D = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
RC = (0.5, 0.5, 0.0)


def _label(w: tuple[float, float, float]) -> str:
    from budgetctx.eval._sensitivity import weight_label

    return weight_label(w)


def test_landscape_from_rows_by_hand() -> None:
    # Two examples, four points; e2 lacks D at 512, so at 512 it is left out.
    scores = {
        ("e1", 256): {R: 0.4, C: 0.2, D: 0.1, RC: 0.3},
        ("e2", 256): {R: 0.2, C: 0.2, D: 0.1, RC: 0.5},
        ("e1", 512): {R: 0.5, C: 0.5, D: 0.5, RC: 0.5},
        ("e2", 512): {R: 0.1, C: 0.2, RC: 0.3},
    }
    rows = [
        row("d", e, _label(w), b, {"rouge1": v})
        for (e, b), by_w in scores.items()
        for w, v in by_w.items()
    ]
    grid = [_label(w) for w in (R, RC, C, D)]
    lands = landscapes(rows, grid=grid)
    assert [(x.dataset, x.budget, x.n) for x in lands] == [("d", 256, 2), ("d", 512, 1)]
    a = lands[0]
    assert a.points == (R, RC, C, D)
    np.testing.assert_allclose(a.means, [0.3, 0.4, 0.2, 0.1])
    assert a.best == RC
    np.testing.assert_allclose(a.distances(), [0.5, 0.0, 0.5, 1.0])
    assert a.within_tolerance(0.1) == 0.5
    levels, avg = mean_by_distance(a)
    np.testing.assert_allclose(levels, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(avg, [0.4, 0.25, 0.1])
    # budget 4 * 256 tokens in row(): every example is cut
    assert a.n_cut == 2
    b = lands[1]
    assert b.example_ids == ("e1",) and b.dropped_examples == 1
    # flat: ties go to the first point in grid order
    assert b.best == R and b.within_tolerance(0.0) == 1.0


def test_best_weights_bootstrap() -> None:
    # Point 0 wins on every example: every resample picks it.
    land = Landscape(
        "d",
        256,
        "rouge1",
        (R, RC, C),
        ("a", "b", "c"),
        np.array([[0.5, 0.4, 0.1], [0.6, 0.5, 0.2], [0.4, 0.3, 0.3]]),
        np.ones(3, dtype=bool),
        default=RC,
        default_scores=np.array([0.4, 0.5, 0.3]),
    )
    b = best_weights(land, n_resamples=200)
    assert b.best == R and b.stability == 1.0
    assert b.alpha_ci == (1.0, 1.0) and b.gamma_ci == (0.0, 0.0)
    assert b.mean == pytest.approx(0.5) and b.low <= 0.5 <= b.high
    assert b.default_mean == pytest.approx(0.4)
    assert b.gain is not None and b.gain[0] == pytest.approx(0.1)
    assert b.gain[1] == pytest.approx(0.1) and b.gain[2] == pytest.approx(0.1)


def test_best_weights_is_unsure_when_examples_disagree() -> None:
    land = Landscape(
        "d",
        256,
        "rouge1",
        (R, C),
        tuple("abcdef"),
        np.array([[0.5, 0.1], [0.1, 0.5]] * 3),
        np.ones(6, dtype=bool),
    )
    b = best_weights(land, n_resamples=400)
    assert 0.2 < b.stability < 0.9
    assert b.alpha_ci == (0.0, 1.0) and b.beta_ci == (0.0, 1.0)


# -- the report -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sensitivity_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("sens")
    rows, meta = sensitivity_rows()
    with SweepStore(run) as store:
        store.check_settings({"tokenizer": "o200k_base", "separator": "\n", "seed": 0})
        store.set_meta(META_KEY, meta)
        store.write(rows)
    return run


@pytest.fixture(scope="module")
def sensitivity_report(sensitivity_run: Path) -> ReportFiles:
    # Drawn once for the module: the figures are most of the time.
    return write_report(sensitivity_run)


def test_report_of_a_sensitivity_run(sensitivity_report: ReportFiles) -> None:
    files = sensitivity_report
    rep = files.report.parent
    names = sorted(p.name for p in files.paths)
    assert names == sorted(
        [
            "report.md",
            "sensitivity_landscape.csv",
            "sensitivity_best.md",
            "sensitivity_claims.md",
            "sensitivity_best.csv",
            "sensitivity_claims.csv",
            "sensitivity_ternary_alpha.png",
            "sensitivity_ternary_beta.png",
            "sensitivity_distance.png",
            "sensitivity_tolerance.png",
        ]
    )
    for p in files.figures:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert p.stat().st_size < 1_000_000
    best = (rep / "sensitivity_best.md").read_text(encoding="utf-8")
    # The bowls' optima: (0.5, 0.5, 0) for alpha, (0.25, 0.25, 0.5) for beta, at 256.
    assert "(0.5, 0.5, 0)" in best and "(0.25, 0.25, 0.5)" in best
    report = files.report.read_text(encoding="utf-8")
    assert "uniform ground metric" in report and "sensitivity_ternary_alpha.png" in report
    # 15 grid points per dataset x budget (the default lies on this grid: not counted twice)
    lines = (rep / "sensitivity_landscape.csv").read_text().splitlines()
    assert len(lines) == 1 + 2 * 2 * 15


def test_claims_table_on_the_synthetic_bowl(sensitivity_report: ReportFiles) -> None:
    import csv

    claims = sensitivity_report.report.parent / "sensitivity_claims.csv"
    with claims.open(encoding="utf-8") as fh:
        rows = {(r["dataset"], int(r["budget"])): r for r in csv.DictReader(fh)}
    steep, flat = rows[("alpha", 256)], rows[("alpha", 1024)]
    # The bowl falls 0.08 per unit of distance; the noise is 0.002 per example.
    assert float(steep["slope vs W1"]) == pytest.approx(-0.08, abs=0.01)
    assert float(steep["Spearman"]) < -0.9
    assert float(flat["range"]) == 0.0 and float(flat["within 0.005"]) == 1.0
    assert float(steep["within 0.005"]) < float(steep["within 0.02"]) < 1.0
    # no example is cut at 1024 (600-token documents)
    assert flat["within 0.005 (cut only)"] == ""


def test_report_refuses_a_run_without_grid_rows(tmp_path: Path) -> None:
    rows, meta = sensitivity_rows()
    with SweepStore(tmp_path) as store:
        store.set_meta(META_KEY, {**meta, "grid": ["rcd:alpha=0.9,beta=0.05,gamma=0.05"]})
        store.write(rows[:3])
    with pytest.raises(InvalidParameterError, match="no rows on its weight grid"):
        write_report(tmp_path)
