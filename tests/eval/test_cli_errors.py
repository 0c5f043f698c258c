"""The CLI error contract, for every command: a failure the user can cause is one line on
stderr, exit status 2, no traceback and no document text (issue 10: F6, F9, F10)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from budgetctx.cli import app
from budgetctx.eval import SweepRow, SweepStore
from budgetctx.eval._lock import RunLock

runner = CliRunner()
#: A word that appears only in the test documents: it must never reach an error message.
MARKER = "qzxmarkerword"
DOC = " ".join(f"Sentence {i} about {MARKER} and heart failure number {i}." for i in range(20))


def _assert_one_line_exit_2(args: list[str], *, input: str | None = None) -> str:
    result = runner.invoke(app, args, input=input)
    assert result.exit_code == 2, (args, result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, (args, result.stderr)
    assert lines[0].startswith("budgetctx: error: "), lines
    assert "Traceback" not in result.output
    assert MARKER not in result.output, (args, result.output)
    return lines[0]


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    note = tmp_path / "note.txt"
    note.write_text(DOC, encoding="utf-8")
    data = tmp_path / "data.jsonl"
    data.write_text(
        json.dumps({"id": "a", "text": DOC, "summary": "Heart failure."}) + "\n",
        encoding="utf-8",
    )
    random_store = tmp_path / "random"
    random_store.mkdir()
    (random_store / SweepStore.FILENAME).write_bytes(bytes(range(256)) * 8)
    empty_store = tmp_path / "empty"
    empty_store.mkdir()
    (empty_store / SweepStore.FILENAME).write_bytes(b"")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    with sqlite3.connect(foreign / SweepStore.FILENAME) as con:
        con.execute("CREATE TABLE patients (name TEXT)")
    truncated = tmp_path / "truncated"
    with SweepStore(truncated) as store:
        store.write(
            SweepRow("d", f"e{i}", "sentence", "lead", 64, "test", 60, 900, 9, (0,), {"r": 0.5})
            for i in range(2000)
        )
    db = truncated / SweepStore.FILENAME
    db.write_bytes(db.read_bytes()[: db.stat().st_size // 2])
    return {
        "note": note,
        "data": data,
        "random": random_store,
        "empty": empty_store,
        "foreign": foreign,
        "truncated": truncated,
        "tmp": tmp_path,
    }


def _jsonl(path: Path) -> str:
    return f"jsonl:{path}?document=text&reference=summary&id=id"


BAD_SWEEPS = {
    "dataset": ["-d", "nope"],
    "selector": ["-d", "{jsonl}", "--selectors", "nope"],
    "selector option": ["-d", "{jsonl}", "--selectors", "mmr:lambda_"],
    "tokenizer": ["-d", "{jsonl}", "--tokenizer", "nope"],
    "unitizer": ["-d", "{jsonl}", "--unitizers", "nope"],
    "representation": ["-d", "{jsonl}", "--representation", "nope"],
    "generator": ["-d", "{jsonl}", "--generate", "nope:x", "--no-oracle"],
    "missing jsonl": ["-d", "jsonl:{tmp}/missing.jsonl"],
    "data dir": ["-d", "cochrane", "--data-dir", "{tmp}/nowhere"],
    "budgets": ["-d", "{jsonl}", "--budgets", "64,abc"],
    "zero budget": ["-d", "{jsonl}", "--budgets", "0"],
    "split": ["-d", "{jsonl}", "--split", "train"],
    "workers": ["-d", "{jsonl}", "--workers", "0"],
    "prompt": ["-d", "{jsonl}", "--generate", "local", "--no-oracle", "--prompt", "nope"],
    "gen option": ["-d", "{jsonl}", "--generate", "local", "--no-oracle", "--gen-option", "x"],
}


@pytest.mark.parametrize("case", sorted(BAD_SWEEPS))
def test_sweep_bad_arguments(case: str, files: dict[str, Path]) -> None:
    args = [a.format(jsonl=_jsonl(files["data"]), tmp=files["tmp"]) for a in BAD_SWEEPS[case]]
    workers = [] if "--workers" in args else ["--workers", "1"]
    _assert_one_line_exit_2(["sweep", *args, "--out", str(files["tmp"] / "run"), *workers])


@pytest.mark.parametrize("store", ["random", "empty", "foreign", "truncated"])
def test_damaged_store_is_refused_by_every_reader(store: str, files: dict[str, Path]) -> None:
    run = str(files[store])
    before = (files[store] / SweepStore.FILENAME).read_bytes()
    sweep = ["sweep", "-d", _jsonl(files["data"]), "--out", run, "--workers", "1"]
    for args in (sweep, ["report", run], ["calibrate", run, "--out", f"{run}.json"]):
        line = _assert_one_line_exit_2(args)
        assert SweepStore.FILENAME in line and "move it away" in line, line
    route = runner.invoke(app, ["route-eval", run])
    assert route.exit_code == 2 and len(route.stderr.splitlines()) == 1
    # Nothing was written over the file: it may still be worth recovering.
    assert (files[store] / SweepStore.FILENAME).read_bytes() == before


def test_out_pointing_at_a_file(files: dict[str, Path]) -> None:
    line = _assert_one_line_exit_2(
        ["sweep", "-d", _jsonl(files["data"]), "--out", str(files["note"])]
    )
    assert "is a file" in line


@pytest.mark.parametrize(
    "args",
    [
        ["select", "{note}"],
        ["select", "{note}", "-b", "abc"],
        ["select", "{tmp}/missing.txt", "-b", "10"],
        ["select", "{tmp}", "-b", "10"],
        ["select", "{note}", "-b", "10", "--router", "{note}"],
        ["select", "{note}", "-b", "10", "--query", "x", "--representation", "nope"],
        ["demo", "--budget", "0"],
        ["demo", "--selector", "nope"],
        ["datasets", "info", "nope"],
        ["datasets", "list", "--data-dir", "{note}"],
        ["datasets", "fetch", "nope"],
        ["report", "{tmp}/nowhere"],
        ["report", "{tmp}", "--metric", "nope"],
        ["cost", "--budget", "0"],
        ["cost", "--budget", "100", "--model", "nope"],
        ["cost", "--budget", "100", "--prices", "{note}"],
        ["cost", "--budget", "100", "-d", "nope"],
        ["calibrate", "{tmp}/nowhere", "--out", "{tmp}/r.json"],
        ["route-eval", "{tmp}/nowhere"],
        ["nosuchcommand"],
    ],
)
def test_every_command_bad_input(args: list[str], files: dict[str, Path]) -> None:
    _assert_one_line_exit_2([a.format(note=files["note"], tmp=files["tmp"]) for a in args])


def test_second_sweep_on_a_locked_run_exits_at_once(files: dict[str, Path]) -> None:
    """Two processes: one holds the run folder, the other is refused and told who holds it."""
    run = files["tmp"] / "run"
    run.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from budgetctx.eval._lock import RunLock\n"
            "with RunLock(sys.argv[1]):\n    print('held', flush=True); sys.stdin.read()",
            str(run),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        start = time.perf_counter()
        line = _assert_one_line_exit_2(
            ["sweep", "-d", _jsonl(files["data"]), "--out", str(run), "--workers", "1"]
        )
        assert f"pid {holder.pid}" in line and "in use by another sweep" in line
        assert time.perf_counter() - start < 30  # it did not wait for the holder
        assert not (run / SweepStore.FILENAME).exists()  # refused before touching the store
    finally:
        holder.communicate("")
    # Released with the process: the same sweep now runs.
    ok = runner.invoke(
        app, ["sweep", "-d", _jsonl(files["data"]), "--out", str(run), "--workers", "1"]
    )
    assert ok.exit_code == 0, ok.output


def test_lock_is_released_by_a_killed_holder(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from budgetctx.eval._lock import RunLock\n"
            "lock = RunLock(sys.argv[1]); lock.acquire(); print('held', flush=True)\n"
            "time.sleep(60)",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    with pytest.raises(ValueError, match="in use"):
        RunLock(tmp_path).acquire()
    holder.kill()
    holder.wait()
    with RunLock(tmp_path):
        pass


# -- fuzz: random bad arguments and files for every command ---------------------------------

_junk = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=12,
)
_bad_int = st.one_of(st.integers(max_value=0).map(str), _junk.filter(lambda s: not s.isdigit()))
_bytes = st.binary(max_size=64)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_fuzz_error_contract(files: dict[str, Path], data: st.DataObject) -> None:
    tmp = files["tmp"]
    junk_file = tmp / "junk.bin"
    junk_file.write_bytes(MARKER.encode() + b"\x00" + data.draw(_bytes, label="junk"))
    store_dir = tmp / "fuzzstore"
    store_dir.mkdir(exist_ok=True)
    (store_dir / SweepStore.FILENAME).write_bytes(data.draw(_bytes, label="store"))
    name = data.draw(_junk.map(lambda s: "x" + s), label="name")
    note, jsonl = str(files["note"]), _jsonl(files["data"])
    commands = [
        ["select", note, "-b", data.draw(_bad_int)],
        ["select", str(junk_file), "-b", "10"],
        ["select", note, "-b", "10", "--selector", name],
        ["select", note, "-b", "10", "--unitizer", name],
        ["select", note, "-b", "10", "--tokenizer", name],
        ["select", note, "-b", "10", "--separator", "\\" + data.draw(st.sampled_from("xNu8a"))],
        ["select", note, "-b", "10", "--router", str(junk_file)],
        ["demo", "--budget", data.draw(_bad_int)],
        ["datasets", "info", name],
        ["sweep", "-d", name, "--out", str(tmp / "r")],
        ["sweep", "-d", jsonl, "--out", str(store_dir)],
        ["sweep", "-d", jsonl, "--budgets", data.draw(_bad_int), "--out", str(tmp / "r")],
        ["sweep", "-d", jsonl, "--selectors", name, "--out", str(tmp / "r")],
        ["report", str(store_dir)],
        ["cost", "--budget", data.draw(_bad_int)],
        ["cost", "--budget", "10", "--model", name],
        ["calibrate", str(store_dir), "--out", str(tmp / "r.json")],
        ["route-eval", str(store_dir)],
    ]
    _assert_one_line_exit_2(data.draw(st.sampled_from(commands), label="command"))
