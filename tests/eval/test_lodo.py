"""Leave-one-dataset-out router evaluation (issue 21)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from budgetctx._errors import InvalidParameterError
from budgetctx.eval._calibrate import Instance
from budgetctx.eval._lodo import goal, lodo_route_eval

DATASETS = ("a", "b", "c")
METHODS = ("lead", "mmr", "rcd", "sumy-lsa")


def _grid(seed: int = 0, n: int = 6) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    result: dict[str, Any] = {"budgets": [256, 512], "ids": {}, "scores": {}, "features": {}}
    result["stats"] = {}
    for k, ds in enumerate(DATASETS):
        result["ids"][ds] = [f"{ds}{i}" for i in range(n)]
        # dataset "a" is where lead wins; elsewhere mmr does
        base = {"lead": 0.3 if ds == "a" else 0.1, "mmr": 0.2, "rcd": 0.15, "sumy-lsa": 0.18}
        result["scores"][ds] = {
            m: {str(b): list(base[m] + 0.01 * rng.random(n)) for b in (256, 512)} for m in METHODS
        }
        result["features"][ds] = {
            m: {str(b): list(rng.random(n)) for b in (256, 512)} for m in METHODS
        }
        result["stats"][ds] = [
            {str(b): [b, 1000 * (k + 1), b / (1000 * (k + 1)), 0.5, 0.1] for b in (256, 512)}
            for _ in range(n)
        ]
    return result


@pytest.mark.slow
def test_the_held_out_dataset_never_reaches_calibration(tmp_path: Any) -> None:
    seen: list[tuple[str, set[str]]] = []

    def spy(cal: Sequence[Instance]) -> Callable[[Instance], str]:
        datasets = {i.dataset for i in cal}
        seen.append(("", datasets))
        return lambda i: "mmr"

    report = lodo_route_eval(
        _grid(), candidates=("lead", "mmr", "rcd"), policies={"spy": spy}, out_dir=tmp_path
    )
    assert [d for _, d in seen] == [{"b", "c"}, {"a", "c"}, {"a", "b"}]
    assert {r.dataset for r in report.rows} == set(DATASETS)
    row = next(r for r in report.rows if r.dataset == "a" and r.budget == 256)
    # the oracle choice knows the held-out dataset; the router calibrated elsewhere does not
    assert row.best_fixed == "lead"
    assert row.systems["spy"][0] < row.systems["best fixed (oracle choice)"][0]
    assert row.systems["per-instance upper"][0] >= row.systems["best fixed (oracle choice)"][0]
    low, est, high = (row.systems["spy"][k] for k in (1, 0, 2))
    assert low <= est <= high
    assert not goal(row, "spy", ["lead", "mmr", "rcd", "sumy-lsa"])
    assert (tmp_path / "lodo.md").is_file() and (tmp_path / "lodo_rouge1.png").is_file()


@pytest.mark.slow
def test_default_policies_run_and_budget_rule_learns_from_others() -> None:
    report = lodo_route_eval(_grid(), candidates=("lead", "mmr", "rcd"))
    names = set(report.rows[0].systems)
    assert {"budget router", "feature router", "least divergence"} <= names
    # calibrated on b and c (mmr best), the budget rule picks mmr for held-out a
    row = next(r for r in report.rows if r.dataset == "a")
    assert row.chosen["budget router"] == {"mmr": 6}
    assert "within 0.005" in report.markdown


def test_missing_candidate_is_a_clear_error() -> None:
    with pytest.raises(InvalidParameterError, match=r"peer_grid\.py"):
        lodo_route_eval(_grid(), candidates=("lead", "facility"))


@pytest.mark.slow
def test_cli_route_eval_lodo(tmp_path: Any) -> None:
    import json

    from typer.testing import CliRunner

    from budgetctx.cli import app

    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps(_grid()))
    out = tmp_path / "lodo"
    result = CliRunner().invoke(
        app, ["route-eval", str(grid), "--lodo", "--selectors", "lead,mmr,rcd", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "held-out dataset" in result.stdout and (out / "lodo.json").is_file()
    assert "| sumy-lsa |" in result.stdout.splitlines()[0] + " |"
    # --peers names the rivals: Lead alone here, so no sumy column
    result = CliRunner().invoke(
        app, ["route-eval", str(grid), "--lodo", "--selectors", "mmr,rcd", "--peers", "lead"]
    )
    assert result.exit_code == 0, result.output
    assert "sumy-lsa" not in result.stdout and "| lead |" in result.stdout.splitlines()[0] + " |"


def test_goal_count_leaves_option_variants_out_of_the_rivals() -> None:
    from budgetctx.eval._lodo import LodoRow, markdown

    systems = {
        "budget router": (0.30, 0.2, 0.4),
        "mmr": (0.30, 0.2, 0.4),
        "mmr:cost_exponent=0": (0.32, 0.2, 0.4),  # a variant that beats it: not a rival
        "lead": (0.29, 0.2, 0.4),
        "sumy-lsa": (0.298, 0.2, 0.4),
    }
    row = LodoRow("a", 256, 5, systems, best_fixed="mmr:cost_exponent=0")
    md = markdown(
        [row],
        routers=["budget router"],
        candidates=["mmr", "mmr:cost_exponent=0", "lead"],
        peers=["sumy-lsa"],
    )
    line = next(x for x in md.splitlines() if x.startswith("- budget router"))
    assert "in 0 of 1 cells (1 counting selectors at their defaults" in line


@pytest.mark.slow
def test_peers_are_the_rivals_named_and_a_missing_one_is_an_error(tmp_path: Any) -> None:
    grid = _grid()
    for by_method in grid["scores"].values():
        # the same ranker run with budgetctx's pins, far better here: it becomes the rival
        by_method["sumy-lsa+pins"] = {b: [0.9] * 6 for b in ("256", "512")}
    peers = ("lead", "sumy-lsa+pins")
    report = lodo_route_eval(grid, candidates=("lead", "mmr"), peers=peers, out_dir=tmp_path)
    row = report.rows[0]
    assert "sumy-lsa+pins" in row.systems and "sumy-lsa" not in row.systems
    assert not goal(row, "mmr", ["lead", "mmr", *peers])
    assert "sumy-lsa+pins" in report.markdown
    with pytest.raises(InvalidParameterError, match=r"sumy-lsa\+pin'.*--peer-pins"):
        lodo_route_eval(grid, candidates=("lead", "mmr"), peers=("lead", "sumy-lsa+pin"))
