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

from budgetctx._errors import InvalidParameterError

__all__ = ["SweepRow", "SweepStore"]

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
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.run_dir / self.FILENAME
        # check_same_thread=False: the sweep writes from the thread that reads results; the
        # connection is never shared between threads at the same time.
        self._db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        # Stores written before LLM runs existed lack the generation column.
        present = {r[1] for r in self._db.execute("PRAGMA table_info(rows)")}
        if "generation" not in present:
            self._db.execute("ALTER TABLE rows ADD COLUMN generation TEXT")
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SweepStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- run settings -------------------------------------------------------------------------

    def settings(self) -> dict[str, Any] | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
        return json.loads(row[0]) if row else None

    def check_settings(self, settings: Mapping[str, Any]) -> None:
        """Record ``settings`` on first use; later runs must use the same ones, so that rows
        written by different runs stay comparable."""
        current = self.settings()
        wanted = json.loads(json.dumps(dict(settings), sort_keys=True))
        if current is None:
            with self._db:
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
        with self._db:
            self._db.executemany(f"INSERT OR REPLACE INTO rows ({names}) VALUES ({marks})", values)
        return len(values)

    def done_keys(self, dataset: str | None = None) -> set[RowKey]:
        sql = "SELECT dataset, example_id, unitizer, selector, budget FROM rows"
        args: tuple[Any, ...] = ()
        if dataset is not None:
            sql += " WHERE dataset = ?"
            args = (dataset,)
        return {(d, e, u, s, int(b)) for d, e, u, s, b in self._db.execute(sql, args)}

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM rows").fetchone()[0])

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
        for rec in self._db.execute(sql, tuple(where.values())):
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
