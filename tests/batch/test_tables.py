"""Reading and writing tables: bad rows come back as records with an error (never their
text); output files appear whole or not at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from budgetctx import InputError, InvalidParameterError
from budgetctx.batch import OUTPUT_COLUMNS, read_records, write_table


def test_jsonl_bad_rows_are_records_with_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    lines = [
        json.dumps({"id": "a", "text": "Fever."}),
        '{"id": "b", "text": "SECRET NOTE',  # cut off mid-string
        "",
        json.dumps({"text": "No id here."}),
        json.dumps(["not", "an", "object"]),
        json.dumps({"id": "c", "text": None}),
    ]
    path.write_bytes(("\n".join(lines) + "\n").encode() + b'{"id": "d", "text": "\xff"}\n')
    recs = list(read_records(path))
    assert [(r.seq, r.row, r.id) for r in recs] == [
        (0, 1, "a"),
        (1, 2, "row-2"),
        (2, 4, "row-4"),
        (3, 5, "row-5"),
        (4, 6, "c"),
        (5, 7, "row-7"),
    ]
    assert recs[0].text == "Fever." and recs[0].error is None
    assert recs[2].text == "No id here."
    assert recs[1].error is not None and "line 2 is not valid JSON" in recs[1].error
    assert "SECRET" not in recs[1].error
    assert recs[3].error is not None and "not an object" in recs[3].error
    assert recs[4].error is not None and "null" in recs[4].error
    assert recs[5].error is not None and "UTF-8" in recs[5].error


def test_csv_with_long_multiline_fields(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    long_text = "Line one.\nLine two, with a comma.\n" + "word " * 60_000  # > csv's 128 KiB
    import csv

    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["id", "text"])
        writer.writeheader()
        writer.writerow({"id": "1", "text": long_text})
        writer.writerow({"id": "2", "text": ""})
    recs = list(read_records(path))
    assert recs[0].text == long_text
    assert recs[1].error is not None and "empty" in recs[1].error


def test_parquet_rows_and_text_field(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"note_id": [10, 11], "body": ["Fever.", None]}), path)
    recs = list(read_records(path, text_field="body", id_field="note_id"))
    assert [(r.id, r.text) for r in recs] == [("10", "Fever."), ("11", None)]
    assert recs[1].error is not None and "'body' is null" in recs[1].error


def test_missing_and_unknown_inputs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="No such input file"):
        list(read_records(tmp_path / "absent.jsonl"))
    with pytest.raises(InvalidParameterError, match=r"\.xlsx"):
        list(read_records(tmp_path / "in.xlsx"))
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet at all")
    pytest.importorskip("pyarrow")
    with pytest.raises(InputError, match="not a readable Parquet file"):
        list(read_records(bad))


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_write_table_is_atomic_and_complete(tmp_path: Path, suffix: str) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    out = tmp_path / f"out{suffix}"
    out.write_text("old")
    row = dict.fromkeys(OUTPUT_COLUMNS)
    row.update(id="a", row=1, context="Fever.", tokens_used=3)

    def failing() -> object:
        yield row
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError):
        write_table(out, failing())  # type: ignore[arg-type]
    assert out.read_text() == "old"  # the old file is untouched, no part file is left
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]
    assert write_table(out, [row, {**row, "id": "b", "row": 2}]) == 2
    assert out.read_bytes() != b"old"
