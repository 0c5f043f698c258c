"""`budgetctx select` over several files, stdin and JSONL, with pins and a reserve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from budgetctx import get_tokenizer
from budgetctx.cli import app

runner = CliRunner()
TOK = get_tokenizer("o200k_base")
DISCHARGE = (
    "ALLERGIES:\nSulfa causes rash.\n"
    "HOSPITAL COURSE: Diuresed with furosemide. Weight down 3 kg. Warfarin held for a high INR."
)
RADIOLOGY = "Chest film: small bilateral effusions. No consolidation. Heart size normal."


def write(tmp: Path, name: str, text: str) -> str:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_several_files_share_one_budget_with_pins_and_reserve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ids are the paths as given, and headers count: short relative paths keep them cheap.
    monkeypatch.chdir(tmp_path)
    a = write(Path(), "dc.txt", DISCHARGE)
    b = write(Path(), "rad.txt", RADIOLOGY)
    result = runner.invoke(
        app,
        [
            "select", a, b, "--budget", "45", "--reserve", "10", "--pin", "allergies",
            "--pin-regex", "(?i)warfarin", "--query", "effusions", "--json",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["tokens_used"] <= 35 == data["budget"] - data["reserve"]
    assert TOK.count(data["text"]) == data["tokens_used"]
    pinned = [u["text"] for u in data["units"] if u["pinned"]]
    assert any("Sulfa" in t for t in pinned) and any("Warfarin" in t for t in pinned)
    assert {d["id"] for d in data["documents"]} == {a, b}
    texts = {a: DISCHARGE, b: RADIOLOGY}
    for unit in data["units"]:
        source = texts[unit["document_id"]]
        assert unit["text"] == " ".join(source[x:y] for x, y in unit["spans"])


def test_jsonl_and_stdin(tmp_path: Path) -> None:
    lines = [{"note_id": "n1", "body": DISCHARGE}, {"note_id": "n2", "body": RADIOLOGY}]
    path = tmp_path / "notes.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    result = runner.invoke(
        app,
        [
            "select", "-", "--jsonl", str(path), "--text-field", "body", "--id-field", "note_id",
            "--budget", "60", "--json", "--document-header", "=== {id} ===",
        ],
        input="Pasted question: is the effusion new?",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [d["id"] for d in data["documents"]] == ["-", "n1", "n2"]
    assert data["tokens_used"] <= 60
    assert "=== n2 ===" in data["text"] or data["documents"][2]["units_kept"] == 0


def test_bad_multi_document_input_is_reported(tmp_path: Path) -> None:
    a = write(tmp_path, "a.txt", "Alpha.")
    result = runner.invoke(app, ["select", a, a, "--budget", "10"])
    assert result.exit_code == 2 and "share the id" in result.output
    result = runner.invoke(app, ["select", a, "--budget", "10", "--pin-regex", "(bad"])
    assert result.exit_code == 2 and "'(bad' does not compile" in result.output
    result = runner.invoke(app, ["select", "--budget", "10"])
    assert result.exit_code == 2 and "No input" in result.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\nnot json\n', encoding="utf-8")
    result = runner.invoke(app, ["select", "--jsonl", str(bad), "--budget", "10"])
    assert result.exit_code == 2 and "line 2 is not valid JSON" in result.output
    result = runner.invoke(app, ["select", a, "--budget", "10", "--reserve", "10"])
    assert result.exit_code == 2 and "reserve" in result.output
