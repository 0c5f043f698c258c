"""budgetctx batch: files in and out, provenance that maps to the input, recorded errors,
resume after a SIGKILL, and refusal of a changed configuration."""

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

from budgetctx import InputError, InvalidParameterError, get_tokenizer
from budgetctx.batch import OUTPUT_COLUMNS, journal_path, run_batch
from budgetctx.cli import app

from ._docs import rows

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _write_jsonl(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    return path


def _read(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    if path.suffix == ".csv":
        import csv

        with path.open(encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh))
    import pyarrow.parquet as pq

    return list(pq.read_table(path).to_pylist())


def _check_provenance(row: dict[str, Any], text: str, budget: int) -> None:
    """The context is the kept spans of the input joined by the separator, within budget."""
    spans = [tuple(s) for u in json.loads(row["provenance"]) for s in u["spans"]]
    assert int(row["tokens_used"]) == get_tokenizer("o200k_base").count(row["context"])
    if row["reason"] in (None, "") or "fits" not in str(row["reason"]):
        assert int(row["tokens_used"]) <= budget
        assert row["context"] == "\n".join(text[a:b] for a, b in spans)
    else:
        assert row["context"] == text


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_every_format_in_and_out(tmp_path: Path, suffix: str) -> None:
    if suffix == ".parquet":
        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq

    items = rows(6)
    src = tmp_path / f"in{suffix}"
    if suffix == ".jsonl":
        _write_jsonl(src, items)
    elif suffix == ".csv":
        import csv

        with src.open("w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=["id", "text"])
            w.writeheader()
            w.writerows(items)
    else:
        pq.write_table(pa.Table.from_pylist(items), src)
    out = tmp_path / f"out{suffix}"
    summary = run_batch(src, out, 150, selector="mmr")
    got = _read(out)
    assert [r["id"] for r in got] == [r["id"] for r in items]
    assert list(got[0]) == list(OUTPUT_COLUMNS)
    for row, item in zip(got, items, strict=True):
        _check_provenance(row, item["text"], 150)
    assert summary.rows == 6 and summary.written == 6 and summary.errors == 0
    assert summary.tokens_in == sum(int(r["document_tokens"]) for r in got)
    assert summary.tokens_saved == summary.tokens_in - summary.tokens_out > 0


def test_bad_rows_are_recorded_and_the_batch_goes_on(tmp_path: Path) -> None:
    good = rows(3)
    src = tmp_path / "in.jsonl"
    lines = [json.dumps(good[0]), '{"id": "cut", "text": "PHI NAME', json.dumps(good[1])]
    lines += [json.dumps({"id": "note-0", "text": "Another note with a reused id."})]
    lines += [json.dumps({"id": "empty", "text": "   "}), json.dumps({"id": "nt"})]
    lines += [json.dumps({"id": "num", "text": 3.5}), json.dumps(good[2])]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    summary = run_batch(src, tmp_path / "out.jsonl", 100, workers=2)
    got = _read(tmp_path / "out.jsonl")
    assert [(r["id"], r["row"], r["error"] is None) for r in got] == [
        ("note-0", 1, True),
        ("row-2", 2, False),
        ("note-1", 3, True),
        ("note-0", 4, False),
        ("empty", 5, False),
        ("nt", 6, False),
        ("num", 7, False),
        ("note-2", 8, True),
    ]
    errors = {r["row"]: r["error"] for r in got if r["error"]}
    assert "line 2 is not valid JSON" in errors[2] and "PHI" not in errors[2]
    assert "duplicate id 'note-0', first seen at row 1" in errors[4]
    assert "empty" in errors[5] and "no 'text' field" in errors[6] and "float" in errors[7]
    assert summary.errors == 5 and summary.rows == 8
    assert len(summary.error_samples) == 5 and "row 2" in summary.error_samples[0]


def test_rerun_skips_done_rows_and_rewrites_the_same_file(tmp_path: Path) -> None:
    src = _write_jsonl(tmp_path / "in.jsonl", rows(5))
    out = tmp_path / "out.jsonl"
    first = run_batch(src, out, 80)
    before = out.read_bytes()
    again = run_batch(src, out, 80)
    assert (first.written, first.skipped) == (5, 0)
    assert (again.written, again.skipped, again.rows) == (0, 5, 5)
    assert out.read_bytes() == before
    # Rows appended to the input are condensed on the next run, the others are skipped.
    _write_jsonl(src, rows(7))
    more = run_batch(src, out, 80)
    assert (more.written, more.skipped, more.rows) == (2, 5, 7)
    assert [r["id"] for r in _read(out)] == [f"note-{i}" for i in range(7)]


def test_another_configuration_is_refused_with_the_fix(tmp_path: Path) -> None:
    src = _write_jsonl(tmp_path / "in.jsonl", rows(2))
    out = tmp_path / "out.jsonl"
    run_batch(src, out, 80, selector="lead")
    before = out.read_bytes()
    with pytest.raises(InvalidParameterError) as info:
        run_batch(src, out, 90, selector="lead")
    message = str(info.value)
    assert "budget: 80 then, 90 now" in message and "new --out" in message
    with pytest.raises(InvalidParameterError, match="selector"):
        run_batch(src, out, 80, selector="rcd")
    assert out.read_bytes() == before


def test_an_existing_output_without_journal_is_refused(tmp_path: Path) -> None:
    src = _write_jsonl(tmp_path / "in.jsonl", rows(1))
    out = tmp_path / "out.jsonl"
    out.write_text("precious\n")
    with pytest.raises(InvalidParameterError, match="has no journal"):
        run_batch(src, out, 80)
    assert out.read_text() == "precious\n"
    assert not journal_path(out).exists()


def test_a_changed_input_is_refused(tmp_path: Path) -> None:
    src = _write_jsonl(tmp_path / "in.jsonl", rows(3))
    out = tmp_path / "out.jsonl"
    run_batch(src, out, 80)
    _write_jsonl(src, list(reversed(rows(3))))
    with pytest.raises(InputError, match="input changed"):
        run_batch(src, out, 80)


def test_bad_options_fail_before_a_journal_is_made(tmp_path: Path) -> None:
    src = _write_jsonl(tmp_path / "in.jsonl", rows(1))
    out = tmp_path / "out.jsonl"
    with pytest.raises(InvalidParameterError, match="'engine' parameter of run_batch"):
        run_batch(src, out, 80, engine="spark")
    with pytest.raises(InvalidParameterError, match="budget"):
        run_batch(src, out, -1)
    with pytest.raises(InvalidParameterError, match=r"\.txt"):
        run_batch(src, tmp_path / "out.txt", 80)
    assert list(tmp_path.iterdir()) == [src]


def test_progress_callback_counts_every_row(tmp_path: Path) -> None:
    src = _write_jsonl(tmp_path / "in.jsonl", rows(4))
    seen: list[tuple[int, int | None]] = []
    run_batch(src, tmp_path / "out.jsonl", 80, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_cli_batch_summary_and_errors(tmp_path: Path) -> None:
    src = _write_jsonl(tmp_path / "in.jsonl", [*rows(3), {"id": "x", "text": ""}])
    out = tmp_path / "out.csv"
    args = ["batch", str(src), "--out", str(out), "--budget", "90", "--no-progress"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "4 rows" in result.stderr and "1 errors" in result.stderr
    assert "tokens in" in result.stderr and "saved" in result.stderr
    assert "recorded error: row 4 (id 'x')" in result.stderr
    assert [r["id"] for r in _read(out)] == ["note-0", "note-1", "note-2", "x"]
    # Every failure: one line on stderr, exit 2.
    for bad in (
        ["--budget", "0"],
        ["--budget", "90", "--selector", "nope"],
        ["--budget", "90", "--workers", "0"],
        ["--budget", "91"],  # another configuration for the same --out
    ):
        result = runner.invoke(app, ["batch", str(src), "--out", str(out), *bad])
        assert result.exit_code == 2, (bad, result.output)
        assert result.stderr.startswith("budgetctx: error: ")
        assert result.stderr.count("\n") == 1, result.stderr
    missing = runner.invoke(app, ["batch", str(tmp_path / "no.jsonl"), "-o", "o.jsonl", "-b", "9"])
    assert missing.exit_code == 2 and "No such input file" in missing.stderr


@pytest.mark.slow
def test_sigkill_mid_batch_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    items = [{"id": f"n{i}", "text": r["text"]} for i, r in enumerate(rows(12) * 5)]
    src = _write_jsonl(tmp_path / "in.jsonl", items)
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "budgetctx.cli", "batch", str(src), "--out", str(out)]
    cmd += ["--budget", "120", "--selector", "rcd", "--workers", "2", "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    journal = journal_path(out)
    deadline = time.monotonic() + 240
    done = 0
    while time.monotonic() < deadline and proc.poll() is None:
        if journal.exists():
            try:
                with sqlite3.connect(journal) as db:
                    done = db.execute("SELECT COUNT(*) FROM rows").fetchone()[0]
            except sqlite3.OperationalError:
                done = 0
            if done >= 5:
                break
        time.sleep(0.05)
    assert proc.poll() is None, "the batch ended before it could be killed; make it longer"
    # The whole process group: the pool's workers die with the batch, as under a real kill.
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert not out.exists()  # the output is written only once complete
    with sqlite3.connect(journal) as db:
        kept = db.execute("SELECT COUNT(*) FROM rows").fetchone()[0]
    assert 5 <= kept < len(items)

    resumed = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(items) - kept} new, {kept} already done" in resumed.stderr
    got = _read(out)
    assert [r["id"] for r in got] == [it["id"] for it in items]  # none lost, none twice
    reference = tmp_path / "reference.jsonl"
    run_batch(src, reference, 120, selector="rcd")
    assert got == _read(reference)


def test_cli_batch_separator_escapes_like_select(tmp_path: Path) -> None:
    # The batch command decodes --separator as `select` does: non-ASCII kept as typed (the
    # F7 garbling through unicode_escape), unknown escapes refused in one line.
    src = _write_jsonl(tmp_path / "in.jsonl", rows(2))
    out = tmp_path / "out.jsonl"
    base = ["batch", str(src), "--out", str(out), "--budget", "60", "--no-progress"]
    result = runner.invoke(app, [*base, "--separator", " — "])
    assert result.exit_code == 0, result.output
    assert all("â" not in r["context"] for r in _read(out))
    assert any(" — " in r["context"] for r in _read(out))
    bad = runner.invoke(
        app, [*base[:3], str(tmp_path / "o2.jsonl"), *base[4:], "--separator", "\\x"]
    )
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1, bad.stderr


@pytest.mark.parametrize("workers", [1, 2])
def test_cli_batch_pins_and_reserve(tmp_path: Path, workers: int) -> None:
    notes = [
        {"id": f"n{i}", "text": f"HISTORY: Cough for {i + 2} days. Fever to 39 C. "
         "ALLERGIES:\nSulfa causes rash.\nPLAN: Amoxicillin for seven days. Warfarin held."}
        for i in range(4)
    ]  # fmt: skip
    src = _write_jsonl(tmp_path / "in.jsonl", notes)
    out = tmp_path / "out.jsonl"
    args = [
        "batch", str(src), "--out", str(out), "--budget", "30", "--reserve", "8",
        "--pin", "allergies", "--pin-regex", "(?i)warfarin", "--no-progress",
        "--workers", str(workers), "--selector", "lead",
    ]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    got = _read(out)
    assert len(got) == 4
    for row in got:
        assert int(row["tokens_used"]) <= 22
        assert "Sulfa causes rash." in row["context"] and "Warfarin held." in row["context"]
    # The same command resumes (pins are part of the journal's configuration) ...
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and "0 new, 4 already done" in again.stderr
    # ... and another pin is another configuration, refused with the fix.
    other = runner.invoke(app, [*args[:-2], "--pin-regex", "(?i)fever"])
    assert other.exit_code == 2
