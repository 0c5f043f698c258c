"""Sweeps: every row stored as it completes, resume after a real kill, no reference leakage."""

from __future__ import annotations

import inspect
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from budgetctx import InvalidParameterError, UnknownComponentError, prepare
from budgetctx.eval import (
    ORACLE,
    OracleSelector,
    SelectionInput,
    SweepConfig,
    SweepStore,
    _workers,
    parse_selector_spec,
    run_sweep,
)
from budgetctx.eval.metrics import Rouge

SENTINEL = "zqxsentinelword"


def _jsonl(tmp_path: Path, n: int = 4) -> Path:
    path = tmp_path / "data.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            doc = " ".join(
                f"Patient {i} sentence {k} about heart failure and diuresis number {k}."
                for k in range(30)
            )
            fh.write(
                json.dumps(
                    {
                        "id": f"ex{i}",
                        "text": doc,
                        "summary": f"Heart failure treated with diuresis {SENTINEL}.",
                    }
                )
                + "\n"
            )
    return path


def _config(path: Path, **kw: Any) -> SweepConfig:
    base: dict[str, Any] = {
        "datasets": (f"jsonl:{path}?document=text&reference=summary",),
        "budgets": (32, 64),
        "selectors": ("lead", "mmr:lambda_=0.5"),
        "unitizers": ("sentence", "window"),
        "workers": 1,
    }
    base.update(kw)
    return SweepConfig(**base)


@pytest.fixture()
def jsonl_dataset(tmp_path: Path) -> Path:
    path = _jsonl(tmp_path)
    return path


def test_sweep_writes_every_row(tmp_path: Path, jsonl_dataset: Path) -> None:
    summary = run_sweep(_config(jsonl_dataset), tmp_path / "run", progress=False)
    # 4 examples x 2 unitizers x (2 selectors + oracle) x 2 budgets
    assert summary.rows_written == 4 * 2 * 3 * 2
    with SweepStore(tmp_path / "run") as store:
        rows = list(store.rows())
    assert len(rows) == 48
    for row in rows:
        assert row.context_tokens <= row.budget
        assert 0.0 <= row.metrics["rouge1"] <= 1.0
        assert {"rouge2", "rougeL", "token_f1", "overlap1_f"} <= set(row.metrics)
        assert {"phi", "rho", "length", "budget_ratio"} <= set(row.stats)
    assert {r.selector for r in rows} == {"lead", "mmr:lambda_=0.5", ORACLE}


def test_resume_skips_done_rows(tmp_path: Path, jsonl_dataset: Path) -> None:
    run_sweep(_config(jsonl_dataset, budgets=(32,)), tmp_path / "run", progress=False)
    again = run_sweep(_config(jsonl_dataset, budgets=(32,)), tmp_path / "run", progress=False)
    assert again.rows_written == 0 and again.tasks == 0
    assert again.rows_skipped == 4 * 2 * 3
    # extending the run computes only the new budget
    more = run_sweep(_config(jsonl_dataset, budgets=(32, 64)), tmp_path / "run", progress=False)
    assert more.rows_written == 4 * 2 * 3 and more.rows_skipped == 4 * 2 * 3


def test_settings_must_match_on_resume(tmp_path: Path, jsonl_dataset: Path) -> None:
    run_sweep(_config(jsonl_dataset, budgets=(32,)), tmp_path / "run", progress=False)
    with pytest.raises(InvalidParameterError, match="other settings"):
        run_sweep(
            _config(jsonl_dataset, budgets=(32,), tokenizer="cl100k_base"),
            tmp_path / "run",
            progress=False,
        )


def test_parallel_equals_serial(tmp_path: Path, jsonl_dataset: Path) -> None:
    run_sweep(_config(jsonl_dataset), tmp_path / "a", progress=False)
    run_sweep(_config(jsonl_dataset, workers=2), tmp_path / "b", progress=False)
    with SweepStore(tmp_path / "a") as a, SweepStore(tmp_path / "b") as b:
        ra = [(r.key, r.kept, r.metrics) for r in a.rows()]
        rb = [(r.key, r.kept, r.metrics) for r in b.rows()]
    assert ra == rb


def test_reference_never_reaches_selection(
    tmp_path: Path, jsonl_dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Structure: selection is given a SelectionInput, which has no reference field ...
    assert {f.name for f in fields(SelectionInput)} == {"document", "query"}
    assert "reference" not in inspect.signature(_workers.contexts).parameters
    # ... and at run time nothing passed to preparation or selection carries the reference.
    seen: list[str] = []
    real_prepare = _workers.prepare

    def spy(text: str, **kwargs: Any) -> Any:
        blob = repr((text, kwargs))
        seen.append(blob)
        assert SENTINEL not in blob
        doc = real_prepare(text, **kwargs)
        real_select = doc.select

        def select(budget: int, **kw: Any) -> Any:
            if not isinstance(kw.get("selector"), OracleSelector):
                assert SENTINEL not in repr(kw)
            return real_select(budget, **kw)

        object.__setattr__(doc, "select", select)
        return doc

    monkeypatch.setattr(_workers, "prepare", spy)
    run_sweep(_config(jsonl_dataset, oracle=False), tmp_path / "run", progress=False)
    assert len(seen) == 4 * 2
    with SweepStore(tmp_path / "run") as store:
        rows = list(store.rows())
    assert all(r.stats["relevance_source"] == "centroid" for r in rows)


def test_config_validation() -> None:
    with pytest.raises(UnknownComponentError):
        SweepConfig(datasets=("cochrane",), selectors=("nope",))
    with pytest.raises(InvalidParameterError, match="'budgets'"):
        SweepConfig(datasets=("cochrane",), budgets=(0,))
    with pytest.raises(InvalidParameterError, match="split"):
        SweepConfig(datasets=("cochrane",), split="train")
    with pytest.raises(InvalidParameterError, match="dataset"):
        SweepConfig(datasets=())


def test_selector_specs() -> None:
    assert parse_selector_spec("RCD:alpha=0.6,beta=1,fill=true") == (
        "rcd",
        {"alpha": 0.6, "beta": 1, "fill": True},
    )
    with pytest.raises(InvalidParameterError):
        parse_selector_spec("rcd:alpha")


def test_document_stats_hand_case() -> None:
    text = "Heart failure admission. Heart failure diuresis. Knee pain. Diet."
    doc = prepare(text)
    stats = doc.stats(10).to_dict()
    r = doc.features.relevance
    costs = [int(doc.segment_costs[list(u.segments)].sum()) for u in doc.segmentation.units]
    m = int(np.searchsorted(np.cumsum(costs), 10, side="right"))
    assert stats["phi"] == pytest.approx(r[:m].sum() / r.sum(), abs=1e-6)
    K = doc.features.kernel
    expected_rho = np.mean([K.column(i)[i + 1] for i in range(doc.n_units - 1)])
    assert stats["rho"] == pytest.approx(expected_rho, abs=1e-6)
    assert stats["length"] == doc.document_tokens


def test_oracle_finds_the_reference_sentence() -> None:
    text = (
        "The weather was mild. Aspirin was stopped because of bleeding. "
        "Lunch was served at noon. The family visited."
    )
    doc = prepare(text)
    reference = "Aspirin was stopped because of gastrointestinal bleeding."
    ctx = doc.select(14, selector=OracleSelector(doc, reference), whole_if_fits=False)
    assert ctx.text == "Aspirin was stopped because of bleeding."
    rouge = Rouge()
    lead = doc.select(14, selector="lead")
    assert rouge.score(ctx.text, reference).rouge1.f > rouge.score(lead.text, reference).rouge1.f


def test_oracle_beats_lead_on_real_abstracts(shared_data: Path) -> None:
    from budgetctx.eval import load_dataset

    rouge = Rouge()
    oracle_scores, lead_scores = [], []
    examples = load_dataset("cochrane", data_dir=shared_data, limit=8)
    for ex in examples:
        doc = prepare(ex.document)
        oracle = doc.select(256, selector=OracleSelector(doc, ex.reference), whole_if_fits=False)
        lead = doc.select(256, selector="lead")
        assert oracle.tokens_used <= 256
        oracle_scores.append(rouge.score(oracle.text, ex.reference).rouge1.f)
        lead_scores.append(rouge.score(lead.text, ex.reference).rouge1.f)
    # greedy is a ceiling on average, not on every document (see OracleSelector)
    assert np.mean(oracle_scores) > np.mean(lead_scores) + 0.1
    assert sum(o >= lo for o, lo in zip(oracle_scores, lead_scores, strict=True)) >= 7


KILL_SCRIPT = """
import sys
from budgetctx.eval import SweepConfig, run_sweep
cfg = SweepConfig(datasets=(sys.argv[1],), budgets=(64, 256),
                  selectors=("lead", "mmr", "rcd"),
                  unitizers=("sentence", "window"), workers=2, data_dir=sys.argv[3])
run_sweep(cfg, sys.argv[2], progress=False)
"""


@pytest.mark.slow
def test_killed_sweep_loses_nothing_and_resumes(tmp_path: Path, shared_data: Path) -> None:
    run = tmp_path / "run"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", KILL_SCRIPT, "cochrane", str(run), str(shared_data)],
        env=env,
        start_new_session=True,
    )
    db = run / SweepStore.FILENAME
    deadline = time.time() + 120
    count = 0
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
        if db.exists():
            try:
                with sqlite3.connect(db) as con:
                    count = con.execute("SELECT COUNT(*) FROM rows").fetchone()[0]
            except sqlite3.OperationalError:
                continue
            if count >= 60:
                break
    assert proc.poll() is None, "the sweep finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # the whole group: parent and worker processes
    proc.wait()
    with SweepStore(run) as store:
        before = {r.key: (r.kept, r.metrics) for r in store.rows()}
    assert len(before) >= 60
    summary = run_sweep(
        SweepConfig(
            datasets=("cochrane",),
            budgets=(64, 256),
            selectors=("lead", "mmr", "rcd"),
            unitizers=("sentence", "window"),
            workers=2,
            data_dir=str(shared_data),
        ),
        run,
        progress=False,
    )
    with SweepStore(run) as store:
        after = {r.key: (r.kept, r.metrics) for r in store.rows()}
    # 90 examples x 2 unitizers x 2 budgets x (3 selectors + the oracle)
    expected = 90 * 2 * 2 * 4
    assert len(after) == expected
    assert summary.rows_skipped == len(before)
    assert summary.rows_written == expected - len(before)
    assert all(after[k] == v for k, v in before.items()), "rows written before the kill changed"


def test_bad_documents_are_recorded_by_id_and_the_sweep_goes_on(tmp_path: Path) -> None:
    """F11: a NUL character or a lone surrogate fails its example only, named by id and error
    class (no text); the summary counts it and a resumed sweep tries it again."""
    path = tmp_path / "bad.jsonl"
    docs = {
        "good1": "Fine document one. It has two sentences about heart failure.",
        "nul": f"Pain. \x00 {SENTINEL} more text here.",
        "surrogate": f"Pain. \ud800 {SENTINEL} more text here.",
        "good2": "Fine document four. Also fine here, about diuresis.",
    }
    with path.open("w", encoding="utf-8") as fh:
        for key, text in docs.items():
            fh.write(json.dumps({"id": key, "text": text, "summary": "Heart failure."}) + "\n")
    config = SweepConfig(
        datasets=(f"jsonl:{path}?document=text&reference=summary&id=id",),
        budgets=(8,),
        selectors=("lead",),
        workers=2,
    )
    summary = run_sweep(config, tmp_path / "run", progress=False)
    assert not summary.ok
    assert sorted(f.example_id for f in summary.failed_examples) == ["nul", "surrogate"]
    assert all(f.error and SENTINEL not in str(f) for f in summary.failed_examples)
    assert summary.rows_written == 2 * 2  # two good examples x (lead + oracle)
    with SweepStore(tmp_path / "run") as store:
        assert [f.example_id for f in store.failures()] == ["nul", "surrogate"]
        assert {r.example_id for r in store.rows()} == {"good1", "good2"}
    again = run_sweep(config, tmp_path / "run", progress=False)
    assert again.tasks == 2 and again.rows_skipped == 4  # only the failed ones are retried
    assert len(again.failed_examples) == 2


def test_store_forgets_a_failure_once_the_example_succeeds(tmp_path: Path) -> None:
    from budgetctx.eval import SweepFailure, SweepRow

    with SweepStore(tmp_path) as store:
        store.record_failure(SweepFailure("d", "e1", "sentence", "InputError"))
        assert store.failures() == [SweepFailure("d", "e1", "sentence", "InputError")]
        store.write([SweepRow("d", "e1", "sentence", "lead", 8, "test", 5, 9, 2, (0,), {})])
        assert store.failures() == []
