"""The CLI is thin: it parses, calls the library, prints; errors exit 2 with the message."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from budgetctx import get_tokenizer
from budgetctx.cli import app

runner = CliRunner()
NOTE = (
    "CHIEF COMPLAINT: Shortness of breath.\n"
    "HOSPITAL COURSE: She was diuresed with IV furosemide. Apixaban was continued at 5 mg.\n"
    "DISCHARGE MEDICATIONS:\n1. Torsemide 40 mg daily.\n2. Apixaban 5 mg b.i.d.\n"
)


@pytest.fixture()
def note_file(tmp_path: Path) -> Path:
    path = tmp_path / "note.txt"
    path.write_text(NOTE, encoding="utf-8")
    return path


def test_select_prints_context_within_budget(note_file: Path) -> None:
    result = runner.invoke(app, ["select", str(note_file), "--budget", "20"])
    assert result.exit_code == 0, result.output
    context = result.stdout.rstrip("\n")
    assert 0 < get_tokenizer("o200k_base").count(context) <= 20
    assert "20 tokens" in result.stderr or "/20 tokens" in result.stderr


def test_select_json_has_provenance(note_file: Path) -> None:
    result = runner.invoke(
        app,
        [
            "select",
            str(note_file),
            "-b",
            "25",
            "--json",
            "--selector",
            "rcd",
            "--unitizer",
            "section",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["tokens_used"] <= 25
    assert data["selector"] == "rcd" and data["unitizer"] == "section"
    for unit in data["units"]:
        for a, b in unit["spans"]:
            assert NOTE[a:b] in data["text"]


def test_select_reads_stdin() -> None:
    result = runner.invoke(app, ["select", "-", "--budget", "15"], input=NOTE)
    assert result.exit_code == 0, result.output
    assert get_tokenizer("o200k_base").count(result.stdout.rstrip("\n")) <= 15


def test_invalid_utf8_names_the_byte_offset(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"Caf" + b"\xe9 au lait. " + NOTE.encode())
    result = runner.invoke(app, ["select", str(path), "--budget", "20"])
    assert result.exit_code == 2
    assert "byte offset 3" in result.stderr and "--errors replace" in result.stderr
    ok = runner.invoke(app, ["select", str(path), "--budget", "20", "--errors", "replace"])
    assert ok.exit_code == 0, ok.output


def test_binary_input_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "scan.bin"
    path.write_bytes(b"%PDF-1.7\x00\x01\x02")
    result = runner.invoke(app, ["select", str(path), "--budget", "20"])
    assert result.exit_code == 2
    assert "binary" in result.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--budget", "0"], "budget"),
        (["--budget", "20", "--selector", "nope"], "Valid selectors"),
        (["--budget", "20", "--unitizer", "nope"], "Valid unitizers"),
        (["--budget", "20", "--tokenizer", "nope"], "Valid tokenizers"),
        (["--budget", "20", "--errors", "ignore"], "errors"),
    ],
)
def test_errors_exit_2_with_message(note_file: Path, args: list[str], needle: str) -> None:
    result = runner.invoke(app, ["select", str(note_file), *args])
    assert result.exit_code == 2
    assert needle in result.stderr


def test_missing_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["select", str(tmp_path / "nope.txt"), "--budget", "20"])
    assert result.exit_code == 2
    assert "No such file" in result.stderr


def test_separator_escapes(note_file: Path) -> None:
    result = runner.invoke(
        app,
        [
            "select",
            str(note_file),
            "--budget",
            "40",
            "--separator",
            "\\n---\\n",
            "--selector",
            "lead",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "\n---\n" in result.stdout


def test_demo_runs_on_the_bundled_note() -> None:
    result = runner.invoke(app, ["demo", "--budget", "128"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.stdout.split())  # rich wraps lines to the terminal width
    assert "Provenance" in flat and "Tokens saved" in flat


def test_components_lists_registries() -> None:
    result = runner.invoke(app, ["components"])
    assert result.exit_code == 0
    assert "selectors:" in result.stdout and "rcd" in result.stdout
    generators = next(x for x in result.stdout.splitlines() if x.startswith("generators:"))
    assert "local" in generators and "openai" in generators  # tests may register more
    assert "pubmedqa" in result.stdout and "gpt-4o" in result.stdout


def test_console_script_entry_point(note_file: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "budgetctx.cli", "select", str(note_file), "--budget", "12"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert get_tokenizer("o200k_base").count(proc.stdout.rstrip("\n")) <= 12


def test_separator_keeps_non_ascii(note_file: Path) -> None:
    result = runner.invoke(
        app, ["select", str(note_file), "-b", "40", "--selector", "lead", "--separator", " — "]
    )
    assert result.exit_code == 0, result.output
    assert " — " in result.stdout and "\u00e2" not in result.stdout


@pytest.mark.parametrize("bad", ["\\x", "\\N", "\\u12", "\\", "\\ud800", "a\\qb"])
def test_bad_separator_escape_is_named(note_file: Path, bad: str) -> None:
    result = runner.invoke(app, ["select", str(note_file), "-b", "40", "--separator", bad])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1
    assert "unknown escape" in result.stderr and "Traceback" not in result.output


def test_decode_escapes() -> None:
    from budgetctx.cli._format import decode_escapes

    assert decode_escapes("\\n\\t\\r\\\\\\u00e9 — ü") == "\n\t\r\\é — ü"
    assert decode_escapes("\\\\n") == "\\n"  # an escaped backslash, then a plain n
