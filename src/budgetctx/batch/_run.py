"""``run_batch``: a table file in, a table file of contexts out, resumable.

Every finished row (a context or a recorded error) is committed to the journal
(``OUT.journal.sqlite``) at once; the output file is written from the journal at the end, to
a part file renamed over ``OUT``. A SIGKILL therefore loses only the rows in flight and never
leaves a half-written ``OUT``; running the same command again skips the journaled rows.

Ids must be unique: a row whose id was already seen is recorded as an error naming the row
where it first appeared (the first one is condensed). A row with no id is called ``row-N``.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from budgetctx._core.progress import Progress
from budgetctx._core.results import Context
from budgetctx._core.validation import Constraint, InstanceOf, Interval, NoneOr, OneOf, validate
from budgetctx._errors import InputError, InvalidParameterError
from budgetctx._version import __version__
from budgetctx.batch._build import ContextBuilder, ItemError, build_contexts
from budgetctx.batch._journal import Journal, journal_path
from budgetctx.batch._lock import OutLock
from budgetctx.batch._tables import (
    Record,
    context_row,
    count_records,
    read_records,
    table_format,
    write_table,
)

__all__ = ["BatchSummary", "run_batch"]

_OWNER = "run_batch"
_CONSTRAINTS: Mapping[str, Constraint] = {
    "workers": NoneOr(Interval(int, 1), fix="e.g. --workers 2."),
    "engine": OneOf(("local", "ray"), fix="'local' (a process pool) or 'ray' (Ray Data)."),
    "address": NoneOr(InstanceOf(str, "a str"), fix="e.g. 'auto' for a running Ray cluster."),
    "text_field": InstanceOf(str, "a str", fix="the column that holds the text."),
    "id_field": InstanceOf(str, "a str", fix="the column that holds the id."),
    "ray_chunk": Interval(int, 1, fix="rows handed to Ray Data at a time, e.g. 10000."),
    "overwrite": InstanceOf(bool, "a bool", fix="True to start again, False to resume."),
}


@dataclass(frozen=True)
class BatchSummary:
    """What a batch did: rows in ``out`` (all runs), rows condensed and skipped by this run,
    recorded errors, tokens in/out/saved over ``out``, and this run's time.

    >>> BatchSummary("o.jsonl", "j", 2, 2, 0, 0, 100, 40, 60, 0.5, ()).tokens_saved
    60
    """

    out: str
    journal: str
    rows: int
    written: int
    skipped: int
    errors: int
    tokens_in: int
    tokens_out: int
    tokens_saved: int
    seconds: float
    #: the first few errors recorded by this run (row, id and reason; never text)
    error_samples: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["error_samples"] = list(self.error_samples)
        return out


ProgressFn = Callable[[int, int | None], None]


def run_batch(
    input: str | Path,
    out: str | Path,
    budget: int,
    *,
    workers: int | None = None,
    engine: str = "local",
    address: str | None = None,
    text_field: str = "text",
    id_field: str = "id",
    progress: bool | ProgressFn = False,
    ray_chunk: int = 10_000,
    overwrite: bool = False,
    **options: Any,
) -> BatchSummary:
    """Condense every row of ``input`` into ``out`` (JSONL, CSV or Parquet by extension).

    ``options`` go to :func:`~budgetctx.build_context`. Re-running the same call resumes;
    another configuration for an existing ``out`` is refused, unless ``overwrite=True``, which
    deletes ``out`` and its journal first and starts again. See the module docstring.

    >>> import tempfile, pathlib, json
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "in.jsonl").write_text(json.dumps({"id": "a", "text": "Fever. Cultures."}))
    >>> run_batch(d / "in.jsonl", d / "out.jsonl", 2, selector="lead").rows
    1
    """
    start = time.perf_counter()
    settings = validate(
        _OWNER,
        _CONSTRAINTS,
        {
            "workers": workers,
            "engine": engine,
            "address": address,
            "text_field": text_field,
            "id_field": id_field,
            "ray_chunk": ray_chunk,
            "overwrite": overwrite,
        },
    )
    source, target = Path(input), Path(out)
    table_format(source, parameter="input")
    table_format(target, parameter="out")
    if not source.is_file():
        raise InputError(
            f"No such input file: {str(source)!r}; check the path.",
            parameter="input",
            value=str(source),
        )
    # A bad option fails here, before a journal is created.
    builder = ContextBuilder(budget, **options)
    # Held until OUT is written: a second batch on the same OUT fails at once (F14).
    with OutLock(target):
        return _locked_run(source, target, builder, options, settings, progress, start)


def _locked_run(
    source: Path,
    target: Path,
    builder: ContextBuilder,
    options: Mapping[str, Any],
    settings: Mapping[str, Any],
    progress: bool | ProgressFn,
    start: float,
) -> BatchSummary:
    text_field, id_field = settings["text_field"], settings["id_field"]
    jpath = journal_path(target)
    if settings["overwrite"] is True:
        # Only the output and the journal this batch would have written (SQLite's WAL and
        # shared-memory files included), never anything else in the folder.
        for stale in (target, jpath, *(jpath.with_name(jpath.name + s) for s in ("-wal", "-shm"))):
            stale.unlink(missing_ok=True)
    if target.exists() and not jpath.exists():
        raise InvalidParameterError(
            f"{str(target)!r} exists and has no journal ({jpath.name}), so it was not written "
            "by this batch; choose another --out, or remove the file.",
            parameter="out",
            value=str(target),
        )
    config = {
        "input": str(source.resolve()),
        "budget": builder.budget,
        "text_field": text_field,
        "id_field": id_field,
        "options": _describe(options),
        "budgetctx": __version__,
    }
    written = skipped = 0
    samples: list[str] = []
    with Journal(jpath) as journal:
        journal.check_settings(config, out=target)
        done = journal.done()
        total = count_records(source)
        with Progress(total, progress, label="batch", unit="rows") as bar:

            def record(rec: Record, data: dict[str, Any]) -> None:
                nonlocal written
                journal.add(rec.seq, rec.id, rec.row, {"id": rec.id, "row": rec.row, **data})
                written += 1
                if data.get("error") is not None and len(samples) < 5:
                    samples.append(f"row {rec.row} (id {rec.id!r}): {data['error']}")
                bar.advance()

            def todo() -> Iterator[Record]:
                nonlocal skipped
                first_row = dict(done.values())
                for rec in read_records(source, text_field=text_field, id_field=id_field):
                    if rec.seq in done:
                        _check_same_input(done[rec.seq], rec, target)
                        skipped += 1
                        bar.advance()
                        continue
                    if rec.id in first_row:
                        rec = dataclasses.replace(
                            rec,
                            text=None,
                            error=f"duplicate id {rec.id!r}, first seen at row "
                            f"{first_row[rec.id]}; ids must be unique (this row was not "
                            "condensed)",
                        )
                    else:
                        first_row[rec.id] = rec.row
                    if rec.error is not None:
                        record(rec, _error_row(rec))
                        continue
                    yield rec

            if settings["engine"] == "ray":
                _run_ray(todo(), builder, options, settings, record)
            else:
                _run_local(todo(), builder, options, settings["workers"], record)
        write_table(target, journal.rows())
        totals = journal.totals()
    return BatchSummary(
        out=str(target),
        journal=str(jpath),
        rows=totals["rows"],
        written=written,
        skipped=skipped,
        errors=totals["errors"],
        tokens_in=totals["tokens_in"],
        tokens_out=totals["tokens_out"],
        tokens_saved=totals["tokens_in"] - totals["tokens_out"],
        seconds=round(time.perf_counter() - start, 2),
        error_samples=tuple(samples),
    )


def _error_row(rec: Record) -> dict[str, Any]:
    data = context_row(ItemError(index=rec.seq, id=rec.id, error="InputError", message=""))
    data["error"] = f"InputError: {rec.error}"
    return data


def _check_same_input(journaled: tuple[str, int], rec: Record, out: Path) -> None:
    ident, _ = journaled
    if ident != rec.id:
        raise InputError(
            f"The input changed since {str(out)!r} was started: row {rec.row} had id "
            f"{ident!r} and now has {rec.id!r}. Write to a new --out, or restore the input.",
            parameter="input",
            value=rec.row,
        )


def _run_local(
    records: Iterator[Record],
    builder: ContextBuilder,
    options: Mapping[str, Any],
    workers: int | None,
    record: Callable[[Record, dict[str, Any]], None],
) -> None:
    in_flight: deque[Record] = deque()

    def texts() -> Iterator[str]:
        for rec in records:
            in_flight.append(rec)
            yield rec.text or ""

    results = build_contexts(
        texts(), builder.budget, workers=workers, on_error="record", **dict(options)
    )
    for result in results:
        rec = in_flight.popleft()
        record(rec, context_row(_named(result, rec)))


def _named(result: Context | ItemError, rec: Record) -> Context | ItemError:
    if isinstance(result, ItemError):
        return dataclasses.replace(result, index=rec.seq, id=rec.id)
    return result


def _run_ray(
    records: Iterator[Record],
    builder: ContextBuilder,
    options: Mapping[str, Any],
    settings: Mapping[str, Any],
    record: Callable[[Record, dict[str, Any]], None],
) -> None:
    import ray

    from budgetctx.batch.ray import build_contexts as ray_build_contexts

    if not ray.is_initialized():
        ray.init(address=settings["address"], log_to_driver=False, include_dashboard=False)
    chunk: list[Record] = []

    def flush() -> None:
        by_seq = {rec.seq: rec for rec in chunk}
        ds = ray.data.from_items([{"_seq": rec.seq, "text": rec.text} for rec in chunk])
        out = ray_build_contexts(
            ds,
            builder.budget,
            concurrency=settings["workers"] or 1,
            on_error="record",
            **dict(options),
        )
        for row in out.iter_rows():
            rec = by_seq[int(row["_seq"])]
            data = {k: _plain(row.get(k)) for k in _COLUMNS}
            if data["error"] is not None:
                # Name the row as the local engine does.
                data["error"] = str(data["error"])
            record(rec, data)
        chunk.clear()

    for rec in records:
        chunk.append(rec)
        if len(chunk) >= settings["ray_chunk"]:
            flush()
    if chunk:
        flush()


_COLUMNS = (
    "context",
    "tokens_used",
    "document_tokens",
    "tokens_saved",
    "budget",
    "selector",
    "n_units",
    "units_kept",
    "provenance",
    "reason",
    "error",
)


def _plain(value: Any) -> Any:
    """Numpy scalars from Ray rows as Python values."""
    item = getattr(value, "item", None)
    return item() if callable(item) else value


def _describe(options: Mapping[str, Any]) -> dict[str, Any]:
    """Options as JSON for the journal: instances by name and parameters, regexes (pins) by
    pattern and flags."""
    return {key: _describe_value(value) for key, value in sorted(options.items())}


def _describe_value(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [_describe_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _describe_value(v) for k, v in value.items()}
    pattern = getattr(value, "pattern", None)
    if isinstance(pattern, str):
        return {"regex": pattern, "flags": int(getattr(value, "flags", 0))}
    params = getattr(value, "params", None)
    return {
        "type": type(value).__name__,
        "name": getattr(value, "name", getattr(value, "__name__", None)),
        "params": params() if callable(params) else None,
    }
