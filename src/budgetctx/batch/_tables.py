"""Tables of documents in and contexts out: JSON Lines, CSV or Parquet, chosen by extension.

Reading never stops at a bad row: a row that cannot be used (a corrupt line, no text, a text
that is not a string) comes back as a :class:`Record` with ``error`` set and no text, so the
batch records it and goes on. Parquet goes through pyarrow, imported only when a Parquet file
is read or written.
"""

from __future__ import annotations

import csv
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from budgetctx._core.private_files import create_private
from budgetctx._core.results import Context
from budgetctx._errors import InputError, InvalidParameterError
from budgetctx.batch._build import ItemError

__all__ = [
    "OUTPUT_COLUMNS",
    "Record",
    "context_row",
    "count_records",
    "read_records",
    "table_format",
    "text_problem",
    "write_table",
]

_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet"}

#: columns of every output row, in order, with their Arrow types (all nullable)
OUTPUT_COLUMNS: dict[str, str] = {
    "id": "string",
    "row": "int64",
    "context": "string",
    "tokens_used": "int64",
    "document_tokens": "int64",
    "tokens_saved": "int64",
    "budget": "int64",
    "selector": "string",
    "n_units": "int64",
    "units_kept": "int64",
    "provenance": "string",
    "reason": "string",
    "error": "string",
}


def table_format(path: str | Path, *, parameter: str = "path") -> str:
    """``"jsonl"``, ``"csv"`` or ``"parquet"`` from the file extension."""
    suffix = Path(path).suffix.lower()
    fmt = _FORMATS.get(suffix)
    if fmt is None:
        raise InvalidParameterError(
            f"Cannot tell the format of {str(path)!r} from its extension {suffix!r}; use "
            f"one of {', '.join(sorted(_FORMATS))}.",
            parameter=parameter,
            value=str(path),
        )
    return fmt


@dataclass(frozen=True)
class Record:
    """One input row: its 0-based position, its 1-based row (line) number, its id, and its
    text, or ``error`` (never quoting the text) when the row cannot be used."""

    seq: int
    row: int
    id: str
    text: str | None
    error: str | None = None


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as exc:  # pragma: no cover - pyarrow is in the batch extra
        raise InvalidParameterError(
            "Parquet files need pyarrow, which is not installed; pip install "
            "'budgetctx[batch]', or use a .jsonl or .csv file.",
            parameter="path",
            value="parquet",
        ) from exc
    return pyarrow


def read_records(
    path: str | Path, *, text_field: str = "text", id_field: str = "id"
) -> Iterator[Record]:
    """Every row of ``path`` as a :class:`Record`; rows without an id get ``row-N``."""
    p = Path(path)
    fmt = table_format(p, parameter="input")
    if not p.is_file():
        raise InputError(
            f"No such input file: {str(p)!r}; check the path.", parameter="input", value=str(p)
        )
    if fmt == "jsonl":
        yield from _jsonl(p, text_field, id_field)
    elif fmt == "csv":
        yield from _csv(p, text_field, id_field)
    else:
        yield from _parquet(p, text_field, id_field)


def count_records(path: str | Path) -> int | None:
    """How many rows ``path`` has (for the progress bar); None when it is costly to tell."""
    p = Path(path)
    fmt = table_format(p, parameter="input")
    if fmt == "jsonl":
        with p.open("rb") as fh:
            return sum(1 for line in fh if line.strip())
    if fmt == "parquet":
        return int(_pyarrow().parquet.ParquetFile(p).metadata.num_rows)
    return None


def _record(
    seq: int, row: int, fields: Mapping[str, Any], text_field: str, id_field: str
) -> Record:
    raw_id = fields.get(id_field)
    ident = f"row-{row}" if raw_id is None or raw_id == "" else str(raw_id)
    if text_field not in fields:
        return Record(
            seq,
            row,
            ident,
            None,
            f"row {row} has no {text_field!r} field; name the text field with --text-field.",
        )
    text = fields[text_field]
    problem = text_problem(text, text_field)
    if problem is not None:
        return Record(seq, row, ident, None, f"row {row}: {problem}")
    return Record(seq, row, ident, text)


def text_problem(text: Any, text_field: str) -> str | None:
    """Why ``text`` cannot be condensed as a row's text (None when it can): the one rule of
    ``budgetctx batch`` and ``budgetctx.batch.ray``, so that both record the same rows."""
    if text is None:
        return f"{text_field!r} is null; give it a text."
    if not isinstance(text, str):
        return (
            f"{text_field!r} holds a {type(text).__name__} value, not a string; store the "
            "document's text there."
        )
    if not text.strip():
        return f"{text_field!r} is empty; drop the row."
    return None


def _jsonl(p: Path, text_field: str, id_field: str) -> Iterator[Record]:
    seq = 0
    with p.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            error: str | None = None
            try:
                value = json.loads(raw.decode("utf-8-sig" if lineno == 1 else "utf-8"))
            except UnicodeDecodeError as exc:
                error = f"line {lineno} is not valid UTF-8 (byte offset {exc.start} in the line)"
            except json.JSONDecodeError as exc:
                # exc.msg and the column only: str(exc) would be safe too, but say no more.
                error = f"line {lineno} is not valid JSON ({exc.msg} at column {exc.colno})"
            else:
                if not isinstance(value, dict):
                    error = f"line {lineno} is a JSON {type(value).__name__}, not an object"
            if error is not None:
                yield Record(seq, lineno, f"row-{lineno}", None, error + "; fix or remove it.")
            else:
                yield _record(seq, lineno, value, text_field, id_field)
            seq += 1


def _csv(p: Path, text_field: str, id_field: str) -> Iterator[Record]:
    # Clinical notes are longer than the csv module's 128 KiB default field limit.
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    # surrogateescape: a byte that is not UTF-8 becomes a lone surrogate in its field, so
    # that its row is recorded as an error and the rest is read, as for a JSON Lines file.
    with p.open(encoding="utf-8-sig", newline="", errors="surrogateescape") as fh:
        reader = csv.DictReader(fh)
        seq = 0
        while True:
            line = reader.line_num
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                if reader.line_num == line:  # no progress: the reader cannot go on
                    raise InputError(
                        f"{str(p)!r} cannot be read past line {line} ({exc}); fix the file "
                        "(is it CSV with a header row?) and run the same command again.",
                        parameter="input",
                        value=line,
                    ) from None
                error = f"line {reader.line_num} is not valid CSV ({exc}); fix or remove it."
                yield Record(seq, seq + 1, f"row-{seq + 1}", None, error)
            else:
                bad = [k for k in (text_field, id_field) if _undecodable(fields.get(k))]
                if bad:
                    error = (
                        f"row {seq + 1} (line {reader.line_num}) is not valid UTF-8; fix or "
                        "remove it."
                    )
                    yield Record(seq, seq + 1, f"row-{seq + 1}", None, error)
                else:
                    yield _record(seq, seq + 1, fields, text_field, id_field)
            seq += 1


_SURROGATE = re.compile("[\udc80-\udcff]")


def _undecodable(value: Any) -> bool:
    return isinstance(value, str) and _SURROGATE.search(value) is not None


def _parquet(p: Path, text_field: str, id_field: str) -> Iterator[Record]:
    pa = _pyarrow()
    try:
        pf = pa.parquet.ParquetFile(p)
    except Exception as exc:
        raise InputError(
            f"{str(p)!r} is not a readable Parquet file ({type(exc).__name__}); check it, or "
            "convert the table to .jsonl.",
            parameter="input",
            value=str(p),
        ) from None
    names = set(pf.schema_arrow.names)
    columns = [c for c in (text_field, id_field) if c in names]
    seq = 0
    for batch in pf.iter_batches(columns=columns or None, batch_size=1024):
        for fields in batch.to_pylist():
            yield _record(seq, seq + 1, fields, text_field, id_field)
            seq += 1


def context_row(result: Context | ItemError) -> dict[str, Any]:
    """The output columns (all but ``id`` and ``row``) of one result."""
    if isinstance(result, ItemError):
        row: dict[str, Any] = dict.fromkeys(OUTPUT_COLUMNS)
        row["error"] = f"{result.error}: {result.message}"
    else:
        provenance = [
            {"unit": u.id, "spans": [list(s) for s in u.spans], "truncated": u.truncated}
            for u in result.units
        ]
        row = {
            "context": result.text,
            "tokens_used": result.tokens_used,
            "document_tokens": result.document_tokens,
            "tokens_saved": result.tokens_saved,
            "budget": result.budget,
            "selector": result.selector,
            "n_units": result.n_units,
            "units_kept": len(result.units),
            "provenance": json.dumps(provenance, separators=(",", ":")),
            "reason": result.reason,
            "error": None,
        }
    row.pop("id", None)
    row.pop("row", None)
    return row


def write_table(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write ``rows`` (the :data:`OUTPUT_COLUMNS`) to ``path`` atomically; returns the count.

    The rows go to a hidden part file beside ``path`` that replaces it only once complete,
    so a reader, or a kill, never sees half a file.
    """
    p = Path(path)
    fmt = table_format(p, parameter="out")
    part = p.with_name(f".{p.name}.part")
    n = 0
    try:
        # Contexts are document text: the part file (and so OUT) is 0600 from the start.
        part.unlink(missing_ok=True)
        create_private(part)
        if fmt == "parquet":
            n = _write_parquet(part, rows)
        else:
            with part.open("w", encoding="utf-8", newline="") as fh:
                if fmt == "csv":
                    writer = csv.DictWriter(fh, fieldnames=list(OUTPUT_COLUMNS))
                    writer.writeheader()
                    for r in rows:
                        writer.writerow({k: r.get(k) for k in OUTPUT_COLUMNS})
                        n += 1
                else:
                    for r in rows:
                        fh.write(json.dumps({k: r.get(k) for k in OUTPUT_COLUMNS}) + "\n")
                        n += 1
                fh.flush()
                os.fsync(fh.fileno())
        part.replace(p)
    finally:
        part.unlink(missing_ok=True)
    return n


def _write_parquet(part: Path, rows: Iterable[Mapping[str, Any]]) -> int:
    pa = _pyarrow()
    schema = pa.schema([(k, getattr(pa, t)()) for k, t in OUTPUT_COLUMNS.items()])
    n = 0
    with pa.parquet.ParquetWriter(part, schema) as writer:
        chunk: list[Mapping[str, Any]] = []
        for r in rows:
            chunk.append(r)
            if len(chunk) >= 4096:
                writer.write_table(pa.Table.from_pylist(chunk, schema=schema))
                n, chunk = n + len(chunk), []
        if chunk or n == 0:
            writer.write_table(pa.Table.from_pylist(chunk, schema=schema))
            n += len(chunk)
    return n
