"""Your own data: JSON Lines or CSV files with a column mapping."""

from __future__ import annotations

import csv
import gzip
import json
import os
from pathlib import Path
from typing import Any, TextIO

from budgetctx._errors import DatasetError, InvalidParameterError
from budgetctx.eval.datasets._base import Dataset, DatasetRead, Row

__all__ = ["CsvDataset", "JsonlDataset", "open_table"]

Record = tuple[int, dict[str, Any]]  # (line number, row)


def _open_text(path: Path) -> TextIO:
    # utf-8-sig: spreadsheets often write a byte-order mark before the header.
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return path.open(encoding="utf-8-sig", newline="")


def _jsonl_records(path: Path) -> tuple[list[str], list[Record]]:
    records: list[Record] = []
    with _open_text(path) as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path} line {lineno} is not valid JSON: {exc}.") from exc
            if not isinstance(value, dict):
                raise DatasetError(
                    f"{path} line {lineno} is a JSON {type(value).__name__}, not an object; "
                    'write one {"column": value, ...} object per line.'
                )
            records.append((lineno, value))
    return (list(records[0][1]) if records else []), records


def _csv_records(path: Path) -> tuple[list[str], list[Record]]:
    # Clinical notes can exceed csv's default 128 KiB field limit; 2**31 - 1 fits a C long
    # everywhere, and the limit is only ever raised.
    if csv.field_size_limit() < 2**31 - 1:
        csv.field_size_limit(2**31 - 1)
    with _open_text(path) as handle:
        reader = csv.DictReader(handle)
        try:
            columns = list(reader.fieldnames or [])
            records = [(reader.line_num, dict(row)) for row in reader]
        except csv.Error as exc:
            raise DatasetError(f"{path} line {reader.line_num} is not valid CSV: {exc}.") from exc
    return columns, records


def open_table(path: Path, fmt: str) -> tuple[list[str], list[Record]]:
    """The columns (of the header, or the first JSON object) and the rows of a file."""
    if not path.is_file():
        raise DatasetError(f"File {path} was not found. Pass path= pointing to an existing file.")
    try:
        return _jsonl_records(path) if fmt == "jsonl" else _csv_records(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"Cannot read {path}: {exc}. Pass a UTF-8 {fmt} file.") from exc


def check_columns(path: Path, columns: list[str], mapping: dict[str, str | None]) -> None:
    for option, column in mapping.items():
        if column is not None and column not in columns:
            listing = ", ".join(repr(c) for c in columns) or "none"
            raise InvalidParameterError(
                f"Column {column!r} (option {option}=) is not in {path}; the columns are: "
                f"{listing}. Pass {option}= with one of them.",
                parameter=option,
                value=column,
            )


def cell(path: Path, lineno: int, row: dict[str, Any], column: str, *, required: bool) -> Any:
    if column not in row:
        raise DatasetError(
            f"{path} line {lineno} has no {column!r} column (present: "
            f"{', '.join(repr(c) for c in row)}). Give every row the same columns."
        )
    value = row[column]
    if required and (value is None or (isinstance(value, str) and not value.strip())):
        raise DatasetError(
            f"{path} line {lineno}: column {column!r} is empty. Remove the row or fill it in."
        )
    return value


class _TableDataset(Dataset):
    fmt = ""
    license = "that of your file"
    split_rule = "hash of the group column, else of the document text"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        document: str = "document",
        reference: str = "reference",
        query: str | None = None,
        id: str | None = None,  # shadows the builtin: the mapping reads best with field names
        label: str | None = None,
        group: str | None = None,
    ) -> None:
        self.path = None if path is None else Path(path).expanduser()
        self.columns: dict[str, str | None] = {
            "document": document,
            "reference": reference,
            "query": query,
            "id": id,
            "label": label,
            "group": group,
        }

    def expected_files(self) -> tuple[str, ...]:
        return (str(self.path),) if self.path else ()

    def read(self, root: Path) -> DatasetRead:
        del root  # the file is named by path=, not looked up in the data dir
        if self.path is None:
            raise InvalidParameterError(
                f"The {self.name!r} dataset reads your own file and needs path=, e.g. "
                f"load_dataset({self.name!r}, path='notes.{self.fmt}', document='text', "
                "reference='summary').",
                parameter="path",
                value=None,
            )
        path = self.path
        columns, records = open_table(path, self.fmt)
        check_columns(path, columns, self.columns)
        c = self.columns
        rows: list[Row] = []
        for index, (lineno, record) in enumerate(records):
            document = str(cell(path, lineno, record, c["document"] or "", required=True))
            reference = str(cell(path, lineno, record, c["reference"] or "", required=True))
            extra = {
                key: cell(path, lineno, record, column, required=key in ("id", "group"))
                for key, column in c.items()
                if column is not None and key not in ("document", "reference")
            }
            query = extra.get("query")
            label = extra.get("label")
            rows.append(
                Row(
                    id=str(extra["id"]) if "id" in extra else f"{path.stem}:{index}",
                    document=document,
                    reference=reference,
                    group=str(extra["group"]) if "group" in extra else document,
                    query=str(query) if query not in (None, "") else None,
                    label=str(label) if label not in (None, "") else None,
                    meta={"path": str(path), "row": index, "line": lineno},
                )
            )
        return DatasetRead(rows)


class JsonlDataset(_TableDataset):
    """``load_dataset("jsonl", path=..., document=..., reference=..., query=..., id=...)``."""

    name = "jsonl"
    fmt = "jsonl"
    description = "Your JSON Lines file (one object a line), mapped with document=/reference=/..."


class CsvDataset(_TableDataset):
    """``load_dataset("csv", path=..., document=..., reference=..., query=..., id=...)``."""

    name = "csv"
    fmt = "csv"
    description = "Your CSV file with a header row, mapped with document=/reference=/..."
