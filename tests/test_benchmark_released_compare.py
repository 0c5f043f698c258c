"""benchmarks/released_compare.py's pure helpers: the pairs, the equal-token bisection and the
table's flags. The released code is not part of budgetctx; the one test that runs it skips
unless ``BUDGETCTX_RELEASED_DIR`` names a checkout of it (with ``full_budgeter.py``)."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from budgetctx import prepare
from budgetctx.selectors import list_selectors
from tests._benchmarks import load_benchmark


@pytest.fixture(scope="module")
def rc() -> ModuleType:
    return load_benchmark("released_compare")


def test_every_selector_has_a_counterpart_or_is_named_unpaired(rc: ModuleType) -> None:
    # a selector added to the registry without a released pair (or a reason) fails here
    for name in list_selectors():
        if name in rc.UNPAIRED:
            with pytest.raises(ValueError, match="no released counterpart"):
                rc.counterpart(name)
        else:
            assert rc.counterpart(name) in rc.COUNTERPARTS.values()


def test_counterparts_of_units_and_options(rc: ModuleType) -> None:
    assert rc.split_spec("mmr:lambda_=0.3@window") == ("mmr:lambda_=0.3", "window")
    assert rc.counterpart("rcd:salience=null") == "rcd"
    assert rc.counterpart("graphcluster") == "graph"
    assert rc.counterpart("mmr@section") == "hierarchical"
    assert rc.counterpart("facility@cluster", "facility") == "graph"
    with pytest.raises(ValueError, match="pipeline-selector"):
        rc.counterpart("facility@window")  # the released pipelines run MMR by default
    with pytest.raises(ValueError, match="no released counterpart"):
        rc.counterpart("mmr@turn")
    assert rc.section_style("cochrane") == "cochrane"
    assert rc.section_style("leval:meeting_summ") == "mimic"


def test_fit_words_keeps_the_largest_word_budget_that_fits(rc: ModuleType) -> None:
    words = [f"w{i}" for i in range(100)]
    calls: list[int] = []

    def run(n: int) -> str:
        calls.append(n)
        return " ".join(words[:n])

    def count(text: str) -> int:  # two tokens a word
        return 2 * len(text.split())

    assert rc.fit_words(run, count, 37, 100) == " ".join(words[:18])
    assert len(calls) <= 8  # bisection, not a scan
    assert rc.fit_words(run, count, 1, 100) == ""  # nothing fits: nothing kept
    assert rc.fit_words(run, count, 10_000, 100) == " ".join(words)


def _result(ours: list[float], theirs: list[float]) -> dict[str, Any]:
    rows = [
        {
            "dataset": "leval:news_summ" if i % 2 else "leval:patent_summ",
            "split": "validation" if i < 4 else "test",
            "budget": 256,
            "ours:mmr": o,
            "ours:mmr:tokens": 250,
            "released:mmr:fit": t,
            "released:mmr:fit:tokens": 240,
        }
        for i, (o, t) in enumerate(zip(ours, theirs, strict=True))
    ]
    return {"selectors": ["mmr"], "pairs": {"mmr": "mmr"}, "budgets": [256], "rows": rows}


def test_equal_tokens_pools_tasks_and_splits_and_flags_the_line(rc: ModuleType) -> None:
    ours = [0.30, 0.31, 0.32, 0.33, 0.40, 0.41]
    theirs = [0.32, 0.33, 0.34, 0.35, 0.40, 0.41]
    cells = {c["split"]: c for c in rc.equal_tokens(_result(ours, theirs))}
    assert set(cells) == {"validation", "test", "validation+test"}
    assert {c["data"] for c in cells.values()} == {"leval"}  # tasks pooled
    assert cells["validation"]["n"] == 4 and cells["validation+test"]["n"] == 6
    assert cells["validation"]["difference"] == pytest.approx(-0.02)
    assert cells["validation"]["below"] and not cells["test"]["below"]
    assert cells["validation+test"]["difference"] == pytest.approx(-0.08 / 6)
    assert cells["test"]["ours_tokens"] == 250 and cells["test"]["theirs_tokens"] == 240


def test_rescore_reruns_ours_and_keeps_the_released_side_as_saved(
    rc: ModuleType, sample_note: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from argparse import Namespace
    from types import SimpleNamespace

    ex = SimpleNamespace(id="n1", document=sample_note, query=None, reference=sample_note[:400])
    monkeypatch.setattr(rc, "examples", lambda ds, split, data_dir: [ex])
    saved_row = {"dataset": "mtsamples", "split": "validation", "id": "n1", "budget": 128}
    saved_row |= {"ours:sliding": -1.0, "ours:sliding:tokens": -1}  # stale: not carried over
    for mode in rc.MODES:
        saved_row |= {f"released:sliding:{mode}": 0.25, f"released:sliding:{mode}:tokens": 120}
    saved = {"selectors": ["sliding"], "budgets": [128], "rows": [saved_row]}
    args = Namespace(
        selectors=["sliding", "mmr@window"],
        pipeline_selector="mmr",
        data_dir=str(tmp_path),
        keep_text=True,
    )
    result = rc.rescore(args, [saved])
    (row,) = result["rows"]
    ctx = prepare(sample_note).select(128, selector="sliding")
    assert row["ours:sliding:text"] == ctx.text and row["ours:sliding:tokens"] == ctx.tokens_used
    assert 0 < row["ours:sliding"] <= 1 and row["ours:mmr@window:tokens"] <= 128
    assert row["released:sliding:fit"] == 0.25 and row["released:sliding:ratio:tokens"] == 120
    assert result["pairs"] == {"sliding": "sliding", "mmr@window": "sliding"}
    assert rc.equal_tokens(result)[0]["theirs"] == 0.25
    args.selectors = ["graphcluster"]  # its counterpart was not saved: said, not guessed
    with pytest.raises(ValueError, match="no released"):
        rc.rescore(args, [saved])


RELEASED = os.environ.get("BUDGETCTX_RELEASED_DIR")


@pytest.mark.skipif(
    not RELEASED or not (Path(RELEASED) / "full_budgeter.py").is_file(),
    reason="set BUDGETCTX_RELEASED_DIR to a checkout of the paper's released code",
)
def test_released_pipelines_run_and_fit_the_budget(rc: ModuleType, sample_note: str) -> None:
    theirs = rc.released_selectors(Path(str(RELEASED)))
    count = prepare(sample_note).tokenizer.count
    words = len(sample_note.split())
    for name in rc.PIPELINES:
        text = rc.fit_words(lambda w, f=theirs[name]: f("mimic", sample_note, w), count, 96, words)
        assert 0 < count(text) <= 96, name
