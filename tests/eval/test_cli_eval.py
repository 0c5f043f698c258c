"""The evaluation commands are thin: datasets list|info|fetch, sweep, report."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from budgetctx.cli import app
from budgetctx.eval import SweepStore

runner = CliRunner()


def test_datasets_list_and_info(shared_data: Path) -> None:
    result = runner.invoke(app, ["datasets", "list", "--data-dir", str(shared_data)])
    assert result.exit_code == 0, result.output
    assert "cochrane" in result.stdout and "present" in result.stdout
    info = runner.invoke(
        app, ["datasets", "info", "pubmedqa", "--data-dir", str(shared_data), "--json"]
    )
    assert info.exit_code == 0, info.output
    assert json.loads(info.stdout)["n_examples"]["test"] == 500


def test_datasets_info_unknown_name_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["datasets", "info", "nope", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "nope" in result.stderr


def test_datasets_fetch_from_a_file_mirror(tmp_path: Path, shared_data: Path) -> None:
    out = tmp_path / "data"
    result = runner.invoke(
        app,
        [
            "datasets",
            "fetch",
            "pubmedqa",
            "--data-dir",
            str(out),
            "--mirror",
            shared_data.as_uri() + "/",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "2 downloaded" in result.stdout
    assert (out / "pubmedqa" / "ori_pqal.json").is_file()


def test_sweep_then_report(tmp_path: Path, shared_data: Path) -> None:
    run = tmp_path / "run"
    result = runner.invoke(
        app,
        [
            "sweep",
            "-d",
            "mtsamples",
            "--limit",
            "3",
            "--budgets",
            "64,128",
            "--selectors",
            "lead,rcd:alpha=0.6,beta=0.2,gamma=0.2",
            "--workers",
            "1",
            "--out",
            str(run),
            "--data-dir",
            str(shared_data),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "rows written" in result.stderr
    with SweepStore(run) as store:
        labels = {r.selector for r in store.rows()}
    assert labels == {"lead", "rcd:alpha=0.6,beta=0.2,gamma=0.2", "oracle"}
    report = runner.invoke(app, ["report", str(run)])
    assert report.exit_code == 0, report.output
    assert Path(report.stdout.strip()).is_file()


def test_sweep_bad_budget_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["sweep", "-d", "cochrane", "--budgets", "0", "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 2
    assert "'budgets'" in result.stderr
