"""The second adversarial review's batch findings: a native panic is one row's error (F1),
outputs and journals are 0600, one batch per OUT (F14), workers die with a SIGKILLed batch
(F13), an undecodable CSV row is recorded like a JSONL one (F15), Ray rows as batch's (F16)."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from budgetctx import InvalidParameterError
from budgetctx.batch import build_contexts, journal_path, run_batch
from budgetctx.batch._lock import OutLock
from budgetctx.cli import app

from .._native_panic import panicking_encoder
from ._docs import rows

REPO = Path(__file__).resolve().parents[2]
MARKER = "PANIC-ME"


@pytest.fixture
def panicking() -> Iterator[None]:
    """tiktoken's encoder panics on any text holding MARKER (inherited by forked workers)."""
    with panicking_encoder(MARKER):
        yield


def _write_jsonl(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    return path


def _items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = rows(4)
    items.insert(2, {"id": "panic", "text": f"Chest pain. {MARKER} Troponin negative."})
    return items


@pytest.mark.parametrize("workers", [1, 2])
def test_a_native_panic_is_one_rows_error_and_the_batch_finishes(
    tmp_path: Path, panicking: None, workers: int
) -> None:
    src = _write_jsonl(tmp_path / "in.jsonl", _items())
    out = tmp_path / "out.jsonl"
    summary = run_batch(src, out, 60, selector="lead", workers=workers)
    assert (summary.rows, summary.errors) == (5, 1)
    got = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert got[2]["id"] == "panic" and "native code" in got[2]["error"]
    assert MARKER not in got[2]["error"]
    assert all(r["error"] is None for i, r in enumerate(got) if i != 2)
    # A resume has nothing left to do and does not die on the row either.
    again = run_batch(src, out, 60, selector="lead", workers=workers)
    assert (again.written, again.skipped, again.rows) == (0, 5, 5)


def test_build_contexts_records_a_native_panic(panicking: None) -> None:
    texts = ["Fever. Cultures.", f"Chest pain. {MARKER}", "Cough. Clear lungs."]
    results = list(build_contexts(texts, 5, selector="lead", on_error="record"))
    assert [type(r).__name__ for r in results] == ["Context", "ItemError", "Context"]


def test_select_cli_turns_a_native_panic_into_one_line(tmp_path: Path, panicking: None) -> None:
    doc = tmp_path / "note.txt"
    doc.write_text(f"Chest pain. {MARKER}. Troponin negative.", encoding="utf-8")
    result = CliRunner().invoke(app, ["select", str(doc), "--budget", "5"])
    assert result.exit_code == 2, result.output
    assert "native code" in result.stderr and "Traceback" not in result.stderr
    assert MARKER not in result.stderr


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_outputs_and_journal_are_private(tmp_path: Path, suffix: str) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    src = _write_jsonl(tmp_path / "in.jsonl", rows(3))
    out = tmp_path / f"out{suffix}"
    old = os.umask(0o022)
    try:
        run_batch(src, out, 40, selector="lead")
    finally:
        os.umask(old)
    journal = journal_path(out)
    assert _mode(out) == 0o600
    assert _mode(journal) == 0o600
    for extra in (
        journal.with_name(journal.name + "-wal"),
        journal.with_name(journal.name + "-shm"),
    ):
        if extra.exists():
            assert _mode(extra) == 0o600


def test_a_second_batch_on_the_same_out_is_refused(tmp_path: Path) -> None:
    src = _write_jsonl(tmp_path / "in.jsonl", rows(2))
    out = tmp_path / "out.jsonl"
    with OutLock(out), pytest.raises(InvalidParameterError, match="another batch") as info:
        run_batch(src, out, 40, selector="lead")
    assert f"pid {os.getpid()}" in str(info.value)
    assert not out.exists()
    # Released: the same command now runs.
    assert run_batch(src, out, 40, selector="lead").rows == 2


def test_an_undecodable_csv_row_is_recorded_like_a_jsonl_one(tmp_path: Path) -> None:
    good = rows(3)
    csv_src = tmp_path / "in.csv"
    lines = [b"id,text"] + [f'{r["id"]},"{r["text"][:200]}"'.encode() for r in good]
    lines.insert(2, b'bad,"Chest pain \xb2 here."')
    csv_src.write_bytes(b"\r\n".join(lines) + b"\r\n")
    jsonl_src = tmp_path / "in.jsonl"
    jl = [json.dumps({"id": r["id"], "text": r["text"][:200]}).encode() for r in good]
    jl.insert(1, b'{"id": "bad", "text": "Chest pain \xb2 here."}')
    jsonl_src.write_bytes(b"\n".join(jl) + b"\n")
    for src in (csv_src, jsonl_src):
        out = tmp_path / f"out-{src.suffix[1:]}.jsonl"
        summary = run_batch(src, out, 40, selector="lead")
        got = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert (summary.rows, summary.errors) == (4, 1), src
        assert "not valid UTF-8" in got[1]["error"]
        assert [r["error"] is None for r in got] == [True, False, True, True]


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text()
        out += [int(c) for c in text.split()]
    return out


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_workers_die_with_a_sigkilled_batch(tmp_path: Path) -> None:
    items = [{"id": f"n{i}", "text": r["text"]} for i, r in enumerate(rows(12) * 6)]
    src = _write_jsonl(tmp_path / "in.jsonl", items)
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "budgetctx.cli", "batch", str(src), "--out", str(out)]
    cmd += ["--budget", "120", "--selector", "rcd", "--workers", "2", "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    workers: list[int] = []
    while time.monotonic() < deadline and proc.poll() is None and len(workers) < 2:
        workers = _children(proc.pid)
        time.sleep(0.05)
    assert proc.poll() is None and len(workers) >= 2, "the batch ended before its workers started"
    # Only the batch process, not its group: what an OOM killer or `kill -9 PID` does.
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    left = [w for w in workers if _alive(w)]
    for w in left:
        os.kill(w, signal.SIGKILL)
    assert not left, f"{len(left)} workers outlived the batch"
