"""jsonl / csv loaders with a column mapping, and the MIMIC-IV-Ext-BHC CSV format."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest

from budgetctx import DatasetError, InvalidParameterError
from budgetctx.eval.datasets import dataset_info, load_dataset

ROWS = [
    {"nid": "n1", "text": "Chest pain. Troponin negative.", "summary": "Ruled out MI.", "q": "MI?"},
    {"nid": "n2", "text": "Fever. Cultures grew E. coli.", "summary": "Urosepsis.", "q": ""},
    {"nid": "n3", "text": "Fall at home. CT negative.", "summary": "Mechanical fall.", "q": "CT?"},
]


def _jsonl(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _csv(path: Path, rows: list[dict[str, str]], *, bom: bool = False) -> Path:
    with path.open("w", encoding="utf-8-sig" if bom else "utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_mapping(tmp_path: Path, fmt: str) -> None:
    path = (_jsonl if fmt == "jsonl" else _csv)(tmp_path / f"notes.{fmt}", ROWS)
    examples = load_dataset(
        fmt, path=path, document="text", reference="summary", query="q", id="nid"
    )
    assert [e.id for e in examples] == ["n1", "n2", "n3"]
    assert [e.query for e in examples] == ["MI?", None, "CT?"]
    assert examples[0].document == ROWS[0]["text"] and examples[0].reference == "Ruled out MI."
    assert examples[0].meta["row"] == 0
    # Without id=, ids are <file stem>:<row>.
    plain = load_dataset(fmt, path=str(path), document="text", reference="summary")
    assert [e.id for e in plain] == ["notes:0", "notes:1", "notes:2"]
    assert [e.split for e in plain] == [e.split for e in examples]


def test_splits_follow_the_document_not_the_file_order(tmp_path: Path) -> None:
    rows = [{"text": f"Note number {i}.", "summary": f"S{i}."} for i in range(60)]
    forward = load_dataset(
        "jsonl", path=_jsonl(tmp_path / "a.jsonl", rows), document="text", reference="summary"
    )
    backward = load_dataset(
        "jsonl",
        path=_jsonl(tmp_path / "b.jsonl", rows[::-1]),
        document="text",
        reference="summary",
    )
    assert {e.document: e.split for e in forward} == {e.document: e.split for e in backward}
    assert {e.split for e in forward} == {"validation", "test"}


def test_group_column_keeps_a_patient_together(tmp_path: Path) -> None:
    rows = [{"patient": f"p{i % 5}", "text": f"Note {i}.", "summary": "S."} for i in range(40)]
    path = _jsonl(tmp_path / "notes.jsonl", rows)
    for seed in range(4):
        examples = load_dataset(
            "jsonl", path=path, document="text", reference="summary", group="patient", seed=seed
        )
        by_patient: dict[str, set[str]] = {}
        for ex, row in zip(examples, rows, strict=True):
            by_patient.setdefault(row["patient"], set()).add(ex.split)
        assert all(len(s) == 1 for s in by_patient.values())


def test_label_and_gzip(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for row in ROWS:
            fh.write(json.dumps({**row, "y": "yes"}) + "\n")
    examples = load_dataset("jsonl", path=path, document="text", reference="summary", label="y")
    assert [e.label for e in examples] == ["yes"] * 3


def test_csv_with_bom(tmp_path: Path) -> None:
    path = _csv(tmp_path / "notes.csv", ROWS, bom=True)
    examples = load_dataset("csv", path=path, document="text", reference="summary", id="nid")
    assert examples[0].id == "n1"


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_missing_column_lists_the_available_ones(tmp_path: Path, fmt: str) -> None:
    path = (_jsonl if fmt == "jsonl" else _csv)(tmp_path / f"notes.{fmt}", ROWS)
    with pytest.raises(InvalidParameterError) as info:
        load_dataset(fmt, path=path, document="text", reference="abstract")
    message = str(info.value)
    assert "'abstract'" in message
    for column in ("'nid'", "'text'", "'summary'", "'q'"):
        assert column in message
    assert message.endswith("Pass reference= with one of them.")
    assert info.value.parameter == "reference"
    with pytest.raises(InvalidParameterError, match="option query="):
        load_dataset(fmt, path=path, document="text", reference="summary", query="question")


def test_row_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text(
        json.dumps(ROWS[0]) + "\n\n" + json.dumps({"text": "x"}) + "\n", encoding="utf-8"
    )
    with pytest.raises(DatasetError, match="line 3 has no 'summary' column"):
        load_dataset("jsonl", path=path, document="text", reference="summary")
    path.write_text(json.dumps(ROWS[0]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="line 2 is not valid JSON"):
        load_dataset("jsonl", path=path, document="text", reference="summary")
    path.write_text(json.dumps(ROWS[0]) + "\n[1, 2]\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="line 2 is a JSON list"):
        load_dataset("jsonl", path=path, document="text", reference="summary")
    path.write_text(json.dumps({**ROWS[0], "text": "  "}) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="line 1: column 'text' is empty"):
        load_dataset("jsonl", path=path, document="text", reference="summary")


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "notes.jsonl", [ROWS[0], ROWS[0]])
    with pytest.raises(DatasetError, match=r"duplicated id.*'n1'"):
        load_dataset("jsonl", path=path, document="text", reference="summary", id="nid")


def test_path_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="needs path=") as info:
        load_dataset("jsonl", document="text")
    assert info.value.parameter == "path"
    with pytest.raises(DatasetError, match="was not found"):
        load_dataset("csv", path=tmp_path / "nope.csv")
    with pytest.raises(InvalidParameterError, match="Unknown option"):
        load_dataset("csv", path=tmp_path / "nope.csv", text="document")


def _bhc(path: Path, rows: list[dict[str, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return _csv(path, rows)


BHC = [
    {"note_id": f"{10000000 + i // 3}-DS-{i}", "input": f"Note {i}. " * 5, "target": f"BHC {i}."}
    for i in range(30)
]


def test_mimic_bhc_from_the_data_dir_and_from_path(tmp_path: Path) -> None:
    _bhc(tmp_path / "mimic-bhc" / "mimic-iv-bhc.csv", BHC)
    examples = load_dataset("mimic-bhc", data_dir=tmp_path)
    assert [e.id for e in examples] == [r["note_id"] for r in BHC]
    assert examples[1].document == BHC[1]["input"] and examples[1].reference == "BHC 1."
    assert examples == load_dataset("mimic-bhc", path=tmp_path / "mimic-bhc" / "mimic-iv-bhc.csv")
    info = dataset_info("mimic-bhc", data_dir=tmp_path)
    assert info.available and not info.fetchable and info.n_examples["total"] == 30


def test_mimic_bhc_groups_by_patient(tmp_path: Path) -> None:
    path = _bhc(tmp_path / "bhc.csv", BHC)
    for seed in range(5):
        by_subject: dict[str, set[str]] = {}
        for ex in load_dataset("mimic-bhc", path=path, seed=seed):
            by_subject.setdefault(ex.id.split("-")[0], set()).add(ex.split)
        assert all(len(s) == 1 for s in by_subject.values())


def test_mimic_bhc_long_fields_and_no_note_id(tmp_path: Path) -> None:
    # Real notes can exceed csv's default 128 KiB field limit.
    rows = [{"input": "word " * 60_000, "target": "short"}, {"input": "b", "target": "c"}]
    examples = load_dataset("mimic-bhc", path=_bhc(tmp_path / "bhc.csv", rows))
    assert [e.id for e in examples] == ["mimic-bhc:0", "mimic-bhc:1"]
    assert len(examples[0].document) == 300_000


def test_mimic_bhc_missing_says_how_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"physionet\.org") as info:
        load_dataset("mimic-bhc", data_dir=tmp_path)
    assert "credentialed" in str(info.value)
    assert str(tmp_path / "mimic-bhc" / "mimic-iv-bhc.csv") in str(info.value)
    bad = _bhc(tmp_path / "bad.csv", [{"text": "a", "summary": "b"}])
    with pytest.raises(DatasetError, match=r"\['text', 'summary'\], not the MIMIC"):
        load_dataset("mimic-bhc", path=bad)
