from __future__ import annotations

from pathlib import Path

import pytest

from budgetctx import InvalidParameterError
from budgetctx.eval._store import SweepStore
from budgetctx.eval.report import (
    ReportFiles,
    oracle_bounds,
    plot_bounds,
    read_cells_csv,
    selector_colors,
    write_report,
)
from budgetctx.eval.report import __all__ as public
from tests.eval.report._synthetic import toy_rows


@pytest.fixture(scope="module")
def report(realistic_run: Path) -> ReportFiles:
    return write_report(
        realistic_run,
        selectors_for_bounds=["lead", "mmr", "rcd"],
        extra={"mimic": {256: 0.24, 512: 0.25, 1024: 0.26, 2048: 0.25}},
    )


def test_every_file_is_written(report: ReportFiles, realistic_run: Path) -> None:
    out = realistic_run / "report"
    assert report.report == out / "report.md"
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(p.name for p in report.paths)
    assert {p.name for p in report.figures} == {
        "curves_rouge1.png",
        "curves_rouge2.png",
        "frontier_rouge1.png",
        "bounds_rouge1.png",
    }
    stems = {
        "selectors_rouge1",
        "selectors_rouge2",
        "unitizers_rouge1",
        "frontier_rouge1",
        "bounds_rouge1",
    }
    assert {p.stem for p in report.markdown} == stems == {p.stem for p in report.csv}
    for path in report.paths:
        assert path.stat().st_size > 0, path
    assert set(report.to_dict()) == {"report", "cells", "markdown", "csv", "figures"}


def test_figures_are_valid_pngs(report: ReportFiles) -> None:
    from matplotlib.image import imread

    for path in report.figures:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        image = imread(path)
        assert image.ndim == 3 and image.shape[2] in (3, 4), path
        height, width = image.shape[:2]
        assert 300 <= height <= 900 and width > height, (path, image.shape)
        assert image[..., :3].std() > 0.05, path  # not a blank canvas
    # Three panels in a row for the per-dataset figures: wider than the frontier.
    widths = {p.stem: imread(p).shape[1] for p in report.figures}
    assert widths["curves_rouge1"] > widths["frontier_rouge1"]


def test_report_md_stitches_everything(report: ReportFiles, realistic_run: Path) -> None:
    text = report.report.read_text(encoding="utf-8")
    for figure in report.figures:
        assert f"]({figure.name})" in text  # relative links
    for name in ("cells.csv", "bounds_rouge1.csv"):
        assert f"]({name})" in text
    assert '| tokenizer | `"o200k_base"` |' in text.replace("  ", "").replace("| `", "| `")
    assert '`"\\n"`' in text  # the separator, escaped, not a broken row
    assert "**Examples per dataset and split**" in text
    assert "| cochrane | test       |        6 |" in text
    assert "95% percentile bootstrap over examples (1000 resamples, seed 0)" in text
    assert "Metric: ROUGE-1 F1 (`rouge1`)" in text
    assert "Over Lead, MMR, RCD." in text
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Mean ROUGE-1 F1 across sentence-level selection policies",
        "## Mean ROUGE-2 F1 across sentence-level selection policies",
        "## Mean ROUGE-1 F1 by unitization and selector",
        "## Pareto frontier of ROUGE-1 F1",
        "## Oracle bounds on ROUGE-1 F1",
        "## Files",
    ]
    cells = read_cells_csv(report.cells)
    assert {c.metric for c in cells} == {"rouge1", "rouge2"}
    assert len(cells) == 2 * 3 * 2 * 8 * 4  # metrics x datasets x unitizers x labels x budgets


def test_options(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with SweepStore(run) as store:
        store.write(toy_rows())
    files = write_report(
        run,
        out_dir=tmp_path / "elsewhere",
        metric="rouge2",
        split="test",
        unitizer="window",
        interval="none",
    )
    assert files.report.parent == tmp_path / "elsewhere"
    assert {p.name for p in files.figures} == {
        "curves_rouge1.png",
        "curves_rouge2.png",
        "frontier_rouge2.png",
        "bounds_rouge2.png",
    }
    text = files.report.read_text(encoding="utf-8")
    assert "Split: test" in text and "±" not in text
    assert "Run settings: not recorded" in text
    assert "window-level selection policies" in text


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="No sweep at"):
        write_report(tmp_path / "nothing")
    assert not (tmp_path / "nothing").exists()  # a wrong path is not turned into a run
    with SweepStore(tmp_path / "empty"):
        pass
    with pytest.raises(InvalidParameterError, match="has no rows"):
        write_report(tmp_path / "empty")
    run = tmp_path / "run"
    with SweepStore(run) as store:
        store.write(toy_rows())
    with pytest.raises(InvalidParameterError, match="for split 'train'"):
        write_report(run, split="train")
    with pytest.raises(InvalidParameterError, match="use one of"):
        write_report(run, metric="bleu")
    with pytest.raises(InvalidParameterError, match="unitizer"):
        write_report(run, unitizer="cluster")


def test_plot_bounds_extra_must_name_known_datasets(tmp_path: Path) -> None:
    bounds = oracle_bounds(toy_rows())
    with pytest.raises(InvalidParameterError, match="key it by dataset"):
        plot_bounds(bounds, tmp_path / "b.png", extra={"router": {256: 0.3}})


def test_selector_colours_are_stable_and_distinct() -> None:
    labels = [
        "lead",
        "shuffled",
        "sliding",
        "hierarchical",
        "mmr",
        "rcd",
        "graphcluster",
        "oracle",
        "rcd:alpha=0.6",
        "newthing",
    ]
    colors = selector_colors(labels)
    assert len(set(colors.values())) == len(labels)
    assert colors["oracle"] == "black"
    assert selector_colors(["mmr"])["mmr"] == colors["mmr"]  # the same in every figure
    assert selector_colors(["rcd:alpha=0.6"])["rcd:alpha=0.6"] == colors["rcd"]


def test_public_api() -> None:
    assert sorted(public) == sorted(
        [
            "ORACLE",
            "Bound",
            "Cell",
            "FrontierPoint",
            "Interval",
            "ReportFiles",
            "Table",
            "bounds_table",
            "example_counts",
            "frontier_table",
            "oracle_bounds",
            "pareto_frontier",
            "plot_bounds",
            "plot_curves",
            "plot_frontier",
            "read_cells_csv",
            "selector_colors",
            "selector_table",
            "summarize",
            "unitization_table",
            "write_cells_csv",
            "write_report",
        ]
    )
