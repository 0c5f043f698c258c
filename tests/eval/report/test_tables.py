from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from budgetctx import InvalidParameterError
from budgetctx.eval._store import SweepRow
from budgetctx.eval.report import (
    Cell,
    Table,
    bounds_table,
    frontier_table,
    oracle_bounds,
    pareto_frontier,
    read_cells_csv,
    selector_table,
    summarize,
    unitization_table,
    write_cells_csv,
)


def _cell(
    selector: str, mean: float, *, dataset: str = "d", budget: int = 256, unitizer: str = "sentence"
) -> Cell:
    return Cell(dataset, unitizer, selector, budget, "rouge1", mean, mean - 0.01, mean + 0.02, 4)


def _bold_labels(table: Table) -> set[tuple[str, str]]:
    """(selector, budget column) of every bold position."""
    return {(str(table.rows[r][1]), table.columns[c]) for r, c in table.bold}


def _table_lines(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith("|")]


def test_selector_table_layout_and_best_per_column(toy: list[SweepRow]) -> None:
    table = selector_table(summarize(toy))
    assert table.columns == ("dataset", "selector", "256", "512")
    assert [r[:2] for r in table.rows] == [
        ("alpha", "lead"),
        ("alpha", "mmr"),
        ("alpha", "rcd"),
        ("alpha", "oracle"),
        ("beta", "lead"),
        ("beta", "mmr"),
    ]
    assert table.rows[0][2:] == pytest.approx((0.20, 0.30))
    # Best per dataset and budget; beta's 256 column is a tie (both bold); never the oracle.
    assert _bold_labels(table) == {
        ("mmr", "256"),
        ("rcd", "512"),
        ("lead", "256"),
        ("mmr", "256"),
        ("lead", "512"),
    }
    assert {(table.rows[r][0], table.columns[c]) for r, c in table.bold} == {
        ("alpha", "256"),
        ("alpha", "512"),
        ("beta", "256"),
        ("beta", "512"),
    }
    assert len(table.bold) == 5


def test_ties_are_judged_at_the_printed_precision() -> None:
    cells = [
        _cell("lead", 0.2501),
        _cell("mmr", 0.2504),
        _cell("rcd", 0.2496),
        _cell("sliding", 0.2494),
    ]
    table = selector_table(cells)
    assert {table.rows[r][1] for r, _ in table.bold} == {"lead", "mmr", "rcd"}
    assert {table.rows[r][1] for r, _ in selector_table(cells, decimals=4).bold} == {"mmr"}


def test_markdown_renders_aligned_with_bold_and_pretty_names(toy: list[SweepRow]) -> None:
    md = selector_table(summarize(toy)).to_markdown()
    assert md.startswith("**Mean ROUGE-1 F1 across sentence-level selection policies**")
    lines = _table_lines(md)
    assert len({len(line) for line in lines}) == 1  # padded: the source reads as a table
    assert lines[1].startswith("|:---") and lines[1].endswith("-:|")  # numbers right-aligned
    assert lines[2].split("|")[1:3] == [" alpha   ", " Lead     "]
    assert "| **0.300** |" in lines[3]  # alpha, MMR at 256
    assert lines[3].split("|")[1].strip() == ""  # the dataset is printed once per group
    assert "Oracle" in md and "Oracle: the extractive ceiling" in md


def test_missing_cells_print_a_dash() -> None:
    table = selector_table([_cell("lead", 0.2), _cell("mmr", 0.3, budget=512)])
    lines = _table_lines(table.to_markdown())
    assert lines[2].rstrip(" |").endswith("–")
    assert table.rows[0] == ("d", "lead", 0.2, None)


def test_interval_formats() -> None:
    cells = [_cell("lead", 0.25), _cell("mmr", 0.2)]
    half = selector_table(cells, interval="halfwidth").to_markdown()
    assert "**0.250** ± 0.015" in half and "0.200 ± 0.015" in half
    span = selector_table(cells, interval="range").to_markdown()
    assert "**0.250** [0.240, 0.270]" in span
    assert "±" not in selector_table(cells).to_markdown()
    with pytest.raises(InvalidParameterError, match="interval must be one of"):
        selector_table(cells, interval="stars")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="decimals"):
        selector_table(cells, decimals=-1)


def test_table_csv_has_raw_labels_and_full_precision() -> None:
    cells = [_cell("lead", 0.2501), _cell("rcd:alpha=0.6", 1 / 3)]
    table = selector_table(cells, interval="halfwidth")
    recs = list(csv.reader(io.StringIO(table.to_csv())))
    assert recs[0] == ["dataset", "selector", "256", "256 low", "256 high"]
    assert recs[2][:3] == ["d", "rcd:alpha=0.6", repr(1 / 3)]
    assert float(recs[1][3]) == pytest.approx(0.2401)
    assert "RCD (alpha=0.6)" in table.to_markdown()


def test_unitization_table(toy: list[SweepRow]) -> None:
    table = unitization_table(summarize(toy))
    assert table.columns[:3] == ("dataset", "unitizer", "selector")
    alpha = [r for r in table.rows if r[0] == "alpha"]
    assert [r[1:3] for r in alpha] == [
        ("sentence", "lead"),
        ("sentence", "mmr"),
        ("sentence", "rcd"),
        ("sentence", "oracle"),
        ("window", "lead"),
        ("window", "mmr"),
    ]
    bold = {
        (table.rows[r][0], table.rows[r][1], table.rows[r][2], table.columns[c])
        for r, c in table.bold
    }
    assert ("alpha", "window", "lead", "512") in bold  # .36 beats sentence/rcd .35
    assert ("alpha", "sentence", "mmr", "256") in bold
    lines = _table_lines(table.to_markdown())
    assert len({len(line) for line in lines}) == 1
    assert "| Window   | Lead" in table.to_markdown()


def test_bounds_and_frontier_tables(toy: list[SweepRow]) -> None:
    table = bounds_table(oracle_bounds(toy))
    row = next(r for r in table.rows if r[:3] == ("alpha", "sentence", 256))
    assert row[3:8] == (
        pytest.approx(0.2),
        "lead",
        pytest.approx(0.3),
        "mmr",
        pytest.approx(0.4 / 3),
    )
    assert row[9:] == (pytest.approx(0.5), 3, 0)
    md = table.to_markdown()
    assert "| beta" in md and "–" in md  # beta has no oracle
    assert len({len(line) for line in _table_lines(md)}) == 1

    frontier = frontier_table(pareto_frontier(summarize(toy)))
    rows = {(r[0], r[1]): r for r in frontier.rows}
    assert rows[("beta", 512)][3:] == ("sentence/lead", "", "below a smaller budget")
    assert rows[("beta", 256)][4] == "sentence/mmr"


def test_cells_csv_round_trip(toy: list[SweepRow], tmp_path: Path) -> None:
    cells = summarize(toy) + summarize(toy, metric="rouge2", confidence=0.9)
    path = write_cells_csv(cells, tmp_path / "cells.csv")
    assert read_cells_csv(path) == cells
    header = path.read_text(encoding="utf-8").splitlines()[0]
    assert header == "dataset,unitizer,selector,budget,metric,mean,low,high,n,confidence"


def test_reading_a_foreign_csv_says_what_is_missing(tmp_path: Path) -> None:
    path = tmp_path / "other.csv"
    path.write_text("dataset,mean\nd,0.1\n", encoding="utf-8")
    with pytest.raises(InvalidParameterError, match="lacks the columns"):
        read_cells_csv(path)


def test_pipes_and_newlines_do_not_break_a_row() -> None:
    md = Table("t", ("k", "v"), (("a|b", "x\ny"),)).to_markdown(title=False)
    assert md.splitlines()[2] == "| a\\|b | x y |"
