"""RCD weight-sensitivity runs: the simplex grid, labels, prepared selection equal to a full
build, resume after a real kill, the seeded sample, and the command line."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from budgetctx import InvalidParameterError, build_context, prepare
from budgetctx.cli import app
from budgetctx.eval import SweepConfig, SweepStore, load_dataset, run_sweep
from budgetctx.eval._plan import plan_tasks
from budgetctx.eval._sensitivity import (
    META_KEY,
    SensitivityConfig,
    grid_size,
    label_weights,
    run_sensitivity,
    simplex_grid,
    weight_label,
)
from budgetctx.selectors import get_selector, parse_selector_spec

# -- the grid ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("step", "n"), [(1.0, 3), (0.5, 6), (0.25, 15), (0.2, 21), (0.1, 66)])
def test_grid_size_and_sums(step: float, n: int) -> None:
    grid = simplex_grid(step)
    assert len(grid) == n == grid_size(step)
    assert len(set(grid)) == n
    for w in grid:
        assert all(x >= 0 for x in w)
        assert sum(w) == pytest.approx(1.0, abs=1e-9)
        # every coordinate is a multiple of the step
        assert all(abs(x / step - round(x / step)) < 1e-6 for x in w)


def test_grid_includes_corners_and_edges() -> None:
    grid = simplex_grid(0.1)
    for corner in ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)):
        assert corner in grid
    # points with a zero weight: the three edges, 11 points each, corners shared
    assert sum(1 for w in grid if 0.0 in w) == 3 * 11 - 3
    # the interior: every weight > 0
    assert sum(1 for w in grid if min(w) > 0) == 36
    assert (0.3, 0.5, 0.2) in grid and (0.7, 0.3, 0.0) in grid


@pytest.mark.parametrize("bad", [0.3, 0.0, -0.1, 1.5, True, "0.1", 0.15])
def test_grid_refuses_steps_that_do_not_divide_one(bad: Any) -> None:
    with pytest.raises(InvalidParameterError, match="step"):
        simplex_grid(bad)


def test_labels_round_trip_and_build_the_selector() -> None:
    for w in simplex_grid(0.1):
        label = weight_label(w, base="rcd:eta=0.5")
        parsed = label_weights(label)
        assert parsed is not None and parsed[0] == w and parsed[1] == {"eta": 0.5}
        name, options = parse_selector_spec(label)
        params = get_selector(name, **options).params()
        assert (params["alpha"], params["beta"], params["gamma"], params["eta"]) == (*w, 0.5)
    assert label_weights("rcd:alpha=0.5") is None
    assert label_weights("rcd") is None and label_weights("mmr:lambda_=0.3") is None


def test_config_runs_the_grid_and_the_defaults() -> None:
    cfg = SensitivityConfig(datasets=("cochrane",))
    labels = cfg.labels()
    # the defaults (0.25, 0.75, 0) are off the 0.1 grid: one extra setting
    assert len(labels) == 67
    assert labels[-1] == "rcd:alpha=0.25,beta=0.75,gamma=0.0,salience=null"
    # the paper's objective (centroid relevance), not RCD's default fused salience, unless
    # the base asks for another
    name, options = parse_selector_spec(labels[0])
    assert get_selector(name, **options).params()["salience"] is None
    fused = SensitivityConfig(datasets=("cochrane",), base="rcd:salience=fused").labels()
    assert fused[0] == "rcd:alpha=1.0,beta=0.0,gamma=0.0,salience=fused"
    assert cfg.default_weights() == (0.25, 0.75, 0.0)
    # on the 0.25 grid they are a grid point: not run twice
    assert len(SensitivityConfig(datasets=("cochrane",), step=0.25).labels()) == 15
    sweep = cfg.sweep_config()
    assert sweep.selectors == labels and sweep.oracle is False and sweep.split == "validation"
    eta = SensitivityConfig(datasets=("cochrane",), eta=2, base="rcd:position_decay=0")
    assert (
        eta.labels()[0] == "rcd:alpha=1.0,beta=0.0,gamma=0.0,eta=2.0,position_decay=0,salience=null"
    )


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"base": "rcd:alpha=0.5"}, "base"),
        ({"base": "mmr"}, "base"),
        ({"step": 0.3}, "step"),
        ({"eta": 0}, "eta"),
        ({"base": "rcd:nope=1"}, "nope"),
        ({"split": "train"}, "split"),
    ],
)
def test_config_errors(kw: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        SensitivityConfig(datasets=("cochrane",), **kw)


# -- preparation reuse ------------------------------------------------------------------------

_DOC = " ".join(
    f"Day {i}: patient {'stable' if i % 3 else 'febrile'}, heart failure treated with "
    f"{'diuresis' if i % 2 else 'beta blockers'}; creatinine {1 + i / 10:.1f}."
    for i in range(40)
)


@pytest.mark.parametrize("text", ["note", "synthetic"])
def test_prepared_select_equals_build_context(text: str, sample_note: str) -> None:
    """What the sweep stores for a weight setting is what a user gets from build_context."""
    document = sample_note if text == "note" else _DOC
    doc = prepare(document)
    for budget in (48, 160):
        for w in simplex_grid(0.25):
            options = {"alpha": w[0], "beta": w[1], "gamma": w[2], "eta": 0.5}
            a = doc.select(budget, selector="rcd", selector_options=options)
            b = build_context(document, budget, selector="rcd", selector_options=options)
            assert a.text == b.text
            assert a.kept_ids == b.kept_ids and a.tokens_used == b.tokens_used <= budget


# -- runs -------------------------------------------------------------------------------------


def _jsonl(tmp_path: Path, n: int) -> str:
    path = tmp_path / "notes.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            doc = " ".join(
                f"Patient {i} sentence {k} about {('heart failure', 'sepsis', 'diuresis')[k % 3]}"
                f" and item {k * (i + 1)}."
                for k in range(24)
            )
            fh.write(json.dumps({"id": f"ex{i}", "text": doc, "summary": "Heart failure."}))
            fh.write("\n")
    return f"jsonl:{path}?document=text&reference=summary"


def test_run_resume_and_extend(tmp_path: Path) -> None:
    data, run = _jsonl(tmp_path, 2), tmp_path / "run"
    cfg = SensitivityConfig(datasets=(data,), budgets=(32,), step=0.5, split=None, workers=1)
    first = run_sensitivity(cfg, run, progress=False)
    # 2 examples x (6 grid points + the defaults) x 1 budget
    assert first.rows_written == 2 * 7 and first.ok
    again = run_sensitivity(cfg, run, progress=False)
    assert again.rows_written == 0 and again.rows_skipped == 2 * 7
    # A finer grid adds its new points only (the 0.5 grid and the defaults lie on it).
    finer = run_sensitivity(
        SensitivityConfig(datasets=(data,), budgets=(32,), step=0.25, split=None, workers=1),
        run,
        progress=False,
    )
    assert finer.rows_written == 2 * (15 - 7)
    with SweepStore(run) as store:
        meta = store.meta(META_KEY)
        assert store.count() == 2 * 15
    assert meta["steps"] == [0.5, 0.25] and len(meta["grid"]) == 15
    assert meta["default"] == "rcd:alpha=0.25,beta=0.75,gamma=0.0,salience=null"


def test_run_refuses_other_sweeps_and_other_bases(tmp_path: Path) -> None:
    data = _jsonl(tmp_path, 1)
    plain = tmp_path / "plain"
    run_sweep(
        SweepConfig(datasets=(data,), budgets=(32,), selectors=("lead",), workers=1),
        plain,
        progress=False,
    )
    cfg = SensitivityConfig(datasets=(data,), budgets=(32,), step=1.0, split=None, workers=1)
    with pytest.raises(InvalidParameterError, match="not a weight-sensitivity run"):
        run_sensitivity(cfg, plain, progress=False)
    run = tmp_path / "run"
    run_sensitivity(cfg, run, progress=False)
    other = SensitivityConfig(
        datasets=(data,), budgets=(32,), step=1.0, split=None, workers=1, eta=3.0
    )
    with pytest.raises(InvalidParameterError, match=r"eta=3\.0"):
        run_sensitivity(other, run, progress=False)


def test_sample_is_seeded_and_random(tmp_path: Path, shared_data: Path) -> None:
    def ids(**kw: Any) -> list[str]:
        cfg = SweepConfig(
            datasets=("cochrane",),
            budgets=(256,),
            selectors=("lead",),
            split="validation",
            data_dir=str(shared_data),
            oracle=False,
            **kw,
        )
        return [t.example_id for t in plan_tasks(cfg, set())[0]]

    everything = [e.id for e in load_dataset("cochrane", data_dir=shared_data, split="validation")]
    a, b = ids(sample=5), ids(sample=5)
    assert a == b and len(a) == 5 and set(a) <= set(everything)
    assert a == [e for e in everything if e in a]  # kept in the dataset's order
    assert a != everything[:5]  # not the first five (the seed picks others)
    assert ids(sample=5, seed=1) != a
    assert ids(sample=1000) == everything
    with pytest.raises(InvalidParameterError, match="not both"):
        ids(sample=5, limit=5)


KILL_SCRIPT = """
import sys
from budgetctx.eval._sensitivity import SensitivityConfig, run_sensitivity
cfg = SensitivityConfig(datasets=(sys.argv[1],), budgets=(32, 64), step=0.2, split=None,
                        workers=2)
run_sensitivity(cfg, sys.argv[2], progress=False)
"""


@pytest.mark.slow
def test_killed_run_loses_nothing_and_resumes(tmp_path: Path) -> None:
    data, run = _jsonl(tmp_path, 12), tmp_path / "run"
    per_example = 22 * 2  # 21 grid points and the defaults, 2 budgets
    proc = subprocess.Popen(
        [sys.executable, "-c", KILL_SCRIPT, data, str(run)],
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        start_new_session=True,
    )
    db = run / SweepStore.FILENAME
    deadline = time.time() + 180
    count = 0
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
        if db.exists():
            try:
                with sqlite3.connect(db) as con:
                    count = con.execute("SELECT COUNT(*) FROM rows").fetchone()[0]
            except sqlite3.OperationalError:
                continue
            if count >= 2 * per_example:
                break
    assert proc.poll() is None, "the run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # parent and workers
    proc.wait()
    with SweepStore(run) as store:
        before = {r.key: (r.kept, r.metrics) for r in store.rows()}
    assert 2 * per_example <= len(before) < 12 * per_example
    # whole examples only: the store commits an example's rows together
    assert len(before) % per_example == 0
    cfg = SensitivityConfig(datasets=(data,), budgets=(32, 64), step=0.2, split=None, workers=2)
    summary = run_sensitivity(cfg, run, progress=False)
    with SweepStore(run) as store:
        rows = list(store.rows())
    after = {r.key: (r.kept, r.metrics) for r in rows}
    assert len(rows) == len(after) == 12 * per_example  # nothing lost, nothing twice
    assert summary.rows_skipped == len(before)
    assert summary.rows_written == 12 * per_example - len(before)
    assert all(after[k] == v for k, v in before.items()), "rows written before the kill changed"


# -- command line -----------------------------------------------------------------------------


def test_cli_sensitivity_then_report(tmp_path: Path) -> None:
    runner = CliRunner()
    # of 3 examples, the seeded split hash sends one (ex2) to validation
    data, run = _jsonl(tmp_path, 3), tmp_path / "run"
    result = runner.invoke(
        app,
        [
            "sensitivity",
            "-d",
            data,
            "--budgets",
            "32,64",
            "--step",
            "0.5",
            "--split",
            "validation",
            "--out",
            str(run),
            "--workers",
            "1",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "best RCD weights by budget" in result.stdout
    assert "7 weight settings" in result.stderr
    with SweepStore(run) as store:
        assert store.count() == 7 * 2
        assert {r.split for r in store.rows()} == {"validation"}
    report = runner.invoke(app, ["report", str(run)])
    assert report.exit_code == 0, report.output
    assert (run / "report" / "sensitivity_best.md").is_file()
    bad = runner.invoke(app, ["sensitivity", "-d", data, "--step", "0.3", "--out", str(run)])
    assert bad.exit_code == 2 and "step" in bad.stderr


def test_best_table_says_when_every_setting_scored_the_same() -> None:
    from budgetctx.eval._sensitivity import best_table

    means = {
        "d": {
            weight_label((1.0, 0.0, 0.0)): {256: 0.2, 2048: 0.3},
            weight_label((0.0, 1.0, 0.0)): {256: 0.25, 2048: 0.3},
        }
    }
    lines = best_table(means).splitlines()
    assert lines[-2].split() == ["256", "0.00", "1.00", "0.00", "0.250", "0.200"]
    assert lines[-1].split() == ["2048", "(all", "equal)", "0.300", "0.300"]


def test_store_meta_round_trip(tmp_path: Path) -> None:
    with SweepStore(tmp_path) as store:
        assert store.meta(META_KEY) is None
        store.set_meta(META_KEY, {"grid": ["a"], "steps": [0.1]})
        store.set_meta(META_KEY, {"grid": ["a", "b"], "steps": [0.1]})  # replaced
    with SweepStore(tmp_path) as store:
        assert store.meta(META_KEY) == {"grid": ["a", "b"], "steps": [0.1]}
        with pytest.raises(InvalidParameterError, match="check_settings"):
            store.set_meta("settings", {})
