"""The sweep store: one SQLite file (WAL) per run, a row per (example, unitizer, selector,
budget), written as soon as it is computed, so that a killed sweep loses nothing and a re-run
skips what is done."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from budgetctx._errors import DatasetError, InvalidParameterError

__all__ = ["SweepFailure", "SweepRow", "SweepStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rows (
    dataset TEXT NOT NULL,
    example_id TEXT NOT NULL,
    unitizer TEXT NOT NULL,
    selector TEXT NOT NULL,
    budget INTEGER NOT NULL,
    split TEXT NOT NULL,
    context_tokens INTEGER NOT NULL,
    document_tokens INTEGER NOT NULL,
    n_units INTEGER NOT NULL,
    kept TEXT NOT NULL,
    metrics TEXT NOT NULL,
    timings TEXT NOT NULL,
    stats TEXT NOT NULL,
    reason TEXT,
    created REAL NOT NULL,
    generation TEXT,
    PRIMARY KEY (dataset, example_id, unitizer, selector, budget)
);
CREATE TABLE IF NOT EXISTS failures (
    dataset TEXT NOT NULL,
    example_id TEXT NOT NULL,
    unitizer TEXT NOT NULL,
    error TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (dataset, example_id, unitizer)
);
"""
_COLUMNS = (
    "dataset",
    "example_id",
    "unitizer",
    "selector",
    "budget",
    "split",
    "context_tokens",
    "document_tokens",
    "n_units",
    "kept",
    "metrics",
    "timings",
    "stats",
    "reason",
    "created",
    "generation",
)

RowKey = tuple[str, str, str, str, int]


@dataclass(frozen=True)
class SweepFailure:
    """An example that could not be processed: its id and the error's class, never its text
    (the message of an error raised on a document may quote the document)."""

    dataset: str
    example_id: str
    unitizer: str
    error: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.dataset}/{self.example_id} ({self.unitizer}): {self.error}"


@dataclass(frozen=True)
class SweepRow:
    """One selected context and its scores."""

    dataset: str
    example_id: str
    unitizer: str
    selector: str
    budget: int
    split: str
    context_tokens: int
    document_tokens: int
    n_units: int
    kept: tuple[int, ...]
    metrics: Mapping[str, float]
    timings: Mapping[str, float] = field(default_factory=dict)
    #: document statistics and other per-row facts (relevance source, ...)
    stats: Mapping[str, Any] = field(default_factory=dict)
    reason: str | None = None
    #: LLM runs: generated text, parsed label, usage, cost, prompt id, cached, latency
    generation: Mapping[str, Any] | None = None

    @property
    def key(self) -> RowKey:
        return (self.dataset, self.example_id, self.unitizer, self.selector, self.budget)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["kept"] = list(self.kept)
        out["metrics"] = dict(self.metrics)
        out["timings"] = dict(self.timings)
        out["stats"] = dict(self.stats)
        out["generation"] = dict(self.generation) if self.generation is not None else None
        return out


class SweepStore:
    """Rows of one sweep in ``<run>/sweep.sqlite``.

    >>> import tempfile
    >>> store = SweepStore(tempfile.mkdtemp())
    >>> store.count()
    0
    """

    FILENAME = "sweep.sqlite"

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = self.check_run_dir(run_dir)
        self.path = self.run_dir / self.FILENAME
        _check_header(self.path)
        try:
            self._db = _open(self.path)
        except sqlite3.DatabaseError as exc:
            raise _unreadable(self.path, exc) from exc

    @staticmethod
    def check_run_dir(run_dir: str | Path) -> Path:
        """Create the run folder if needed; a file in its place is a clear error."""
        path = Path(run_dir)
        if path.exists() and not path.is_dir():
            raise InvalidParameterError(
                f"The run folder {path} is a file, not a folder; pass a folder path "
                "(it is created if missing), e.g. --out runs/my-sweep.",
                parameter="out",
                value=str(path),
            )
        path.mkdir(parents=True, exist_ok=True)
        return path

    def close(self) -> None:
        self._db.close()

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        """All result rows; a file damaged after opening still gives the one clear error."""
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as exc:
            raise _unreadable(self.path, exc) from exc

    def __enter__(self) -> SweepStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- run settings -------------------------------------------------------------------------

    def settings(self) -> dict[str, Any] | None:
        found = self._query("SELECT value FROM meta WHERE key = 'settings'")
        return json.loads(found[0][0]) if found else None

    def check_settings(self, settings: Mapping[str, Any]) -> None:
        """Record ``settings`` on first use; later runs must use the same ones, so that rows
        written by different runs stay comparable."""
        current = self.settings()
        wanted = json.loads(json.dumps(dict(settings), sort_keys=True))
        if current is None:
            with self._db:  # a write error here is a full disk, not a damaged store
                self._db.execute(
                    "INSERT INTO meta (key, value) VALUES ('settings', ?)",
                    (json.dumps(wanted, sort_keys=True),),
                )
            return
        diff = {
            k: (current.get(k), wanted.get(k))
            for k in set(current) | set(wanted)
            if current.get(k) != wanted.get(k)
        }
        if diff:
            raise InvalidParameterError(
                f"{self.path} was written with other settings: {diff} (stored, requested). "
                "Use a new --out folder, or the settings the run was started with.",
                parameter="out",
                value=str(self.run_dir),
            )

    def meta(self, key: str) -> Any:
        """A value recorded with :meth:`set_meta` (None when absent), e.g. what kind of
        sweep wrote the store."""
        if key == "settings":
            return self.settings()
        found = self._query("SELECT value FROM meta WHERE key = ?", (key,))
        return json.loads(found[0][0]) if found else None

    def set_meta(self, key: str, value: Any) -> None:
        """Record a JSON value beside the rows (not one of the run settings: those are
        written once, by :meth:`check_settings`)."""
        if key == "settings":
            raise InvalidParameterError(
                "The run settings are written by check_settings only; pass another key.",
                parameter="key",
                value=key,
            )
        try:
            with self._db:
                self._db.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                    (key, json.dumps(value, sort_keys=True)),
                )
        except sqlite3.DatabaseError as exc:
            raise _unreadable(self.path, exc) from exc

    # -- rows ---------------------------------------------------------------------------------

    def write(self, rows: Iterable[SweepRow]) -> int:
        """Insert (or replace) rows in one transaction; returns how many."""
        now = time.time()
        values = [
            (
                r.dataset,
                r.example_id,
                r.unitizer,
                r.selector,
                int(r.budget),
                r.split,
                int(r.context_tokens),
                int(r.document_tokens),
                int(r.n_units),
                json.dumps(list(r.kept)),
                json.dumps(dict(r.metrics), sort_keys=True),
                json.dumps(dict(r.timings), sort_keys=True),
                json.dumps(dict(r.stats), sort_keys=True),
                r.reason,
                now,
                None
                if r.generation is None
                else json.dumps(dict(r.generation), sort_keys=True, ensure_ascii=False),
            )
            for r in rows
        ]
        names = ", ".join(_COLUMNS)
        marks = ", ".join("?" * len(_COLUMNS))
        # An example that failed before and now has rows is no longer a failure.
        solved = sorted({(v[0], v[1], v[2]) for v in values})
        try:
            with self._db:
                self._db.executemany(
                    f"INSERT OR REPLACE INTO rows ({names}) VALUES ({marks})", values
                )
                self._db.executemany(
                    "DELETE FROM failures WHERE dataset = ? AND example_id = ? AND unitizer = ?",
                    solved,
                )
        except sqlite3.DatabaseError as exc:
            raise _unreadable(self.path, exc) from exc
        return len(values)

    def record_failure(self, failure: SweepFailure) -> None:
        """Remember that an example failed; a resumed sweep tries it again."""
        try:
            with self._db:
                self._db.execute(
                    "INSERT OR REPLACE INTO failures (dataset, example_id, unitizer, error, "
                    "created) VALUES (?, ?, ?, ?, ?)",
                    (
                        failure.dataset,
                        failure.example_id,
                        failure.unitizer,
                        failure.error,
                        time.time(),
                    ),
                )
        except sqlite3.DatabaseError as exc:
            raise _unreadable(self.path, exc) from exc

    def failures(self) -> list[SweepFailure]:
        """Examples that failed and have not succeeded since, in key order."""
        return [
            SweepFailure(*rec)
            for rec in self._query(
                "SELECT dataset, example_id, unitizer, error FROM failures "
                "ORDER BY dataset, example_id, unitizer"
            )
        ]

    def done_keys(self, dataset: str | None = None) -> set[RowKey]:
        sql = "SELECT dataset, example_id, unitizer, selector, budget FROM rows"
        args: tuple[Any, ...] = ()
        if dataset is not None:
            sql += " WHERE dataset = ?"
            args = (dataset,)
        return {(d, e, u, s, int(b)) for d, e, u, s, b in self._query(sql, args)}

    def count(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM rows")[0][0])

    def rows(self, **where: Any) -> Iterator[SweepRow]:
        """Rows, optionally filtered by column equality (``dataset=..., split=...``)."""
        allowed = {"dataset", "example_id", "unitizer", "selector", "budget", "split"}
        bad = set(where) - allowed
        if bad:
            raise InvalidParameterError(
                f"Cannot filter rows by {sorted(bad)}; use one of {sorted(allowed)}.",
                parameter="where",
                value=sorted(bad),
            )
        sql = f"SELECT {', '.join(_COLUMNS)} FROM rows"
        if where:
            sql += " WHERE " + " AND ".join(f"{k} = ?" for k in where)
        sql += " ORDER BY dataset, example_id, unitizer, selector, budget"
        for rec in self._query(sql, tuple(where.values())):
            yield SweepRow(
                dataset=rec[0],
                example_id=rec[1],
                unitizer=rec[2],
                selector=rec[3],
                budget=int(rec[4]),
                split=rec[5],
                context_tokens=int(rec[6]),
                document_tokens=int(rec[7]),
                n_units=int(rec[8]),
                kept=tuple(json.loads(rec[9])),
                metrics=json.loads(rec[10]),
                timings=json.loads(rec[11]),
                stats=json.loads(rec[12]),
                reason=rec[13],
                generation=json.loads(rec[15]) if rec[15] is not None else None,
            )


# The first 16 bytes of every SQLite 3 database file.
_MAGIC = b"SQLite format 3\x00"


def _check_header(path: Path) -> None:
    """Refuse a file that is not a SQLite database before SQLite touches it.

    A zero-byte file is refused too: it may be a store whose first write was lost, and
    starting over in it would silently throw away what the user thinks is there.
    """
    try:
        with path.open("rb") as fh:
            head = fh.read(len(_MAGIC))
    except FileNotFoundError:
        return
    except IsADirectoryError as exc:
        raise DatasetError(
            f"{path} is a folder, not a sweep store; move it away or pick another --out."
        ) from exc
    if not head:
        raise DatasetError(
            f"{path} is empty (0 bytes), so it is not a sweep store this version can resume; "
            "move it away (or delete it if it holds nothing you need) or pick another --out."
        )
    if head != _MAGIC:
        raise DatasetError(
            f"{path} is not a SQLite database (a damaged or foreign file); move it away or "
            "pick another --out."
        )


def _open(path: Path) -> sqlite3.Connection:
    # check_same_thread=False: the sweep writes from the thread that reads results; the
    # connection is never shared between threads at the same time.
    db = sqlite3.connect(path, timeout=30.0, check_same_thread=False)
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if tables and not {"meta", "rows"} <= tables:
            raise DatasetError(
                f"{path} is a SQLite database of something else (tables: "
                f"{', '.join(sorted(tables)[:5])}); move it away or pick another --out."
            )
        # quick_check reads every page once: a truncated file fails here, before the run
        # spends an hour and then cannot record its rows.
        verdict = db.execute("PRAGMA quick_check").fetchone()
        if verdict is None or verdict[0] != "ok":
            raise sqlite3.DatabaseError(f"quick_check: {verdict[0] if verdict else 'no answer'}")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        # Stores written before LLM runs existed lack the generation column.
        present = {r[1] for r in db.execute("PRAGMA table_info(rows)")}
        if "generation" not in present:
            db.execute("ALTER TABLE rows ADD COLUMN generation TEXT")
        db.commit()
    except BaseException:
        db.close()
        raise
    return db


def _unreadable(path: Path, exc: sqlite3.DatabaseError) -> DatasetError:
    # sqlite's own words (e.g. "database disk image is malformed") never quote row contents.
    return DatasetError(
        f"{path} cannot be read as a sweep store ({exc}); it is damaged or was written by "
        "something else: move it away or pick another --out."
    )
