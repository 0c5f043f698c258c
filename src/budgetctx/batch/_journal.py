"""The batch journal: a SQLite file (WAL) beside the output, one row per input row, committed
as each completes, so that a killed batch loses only the rows in flight and a re-run of the
same command skips what is done."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from budgetctx._core.private_files import create_private
from budgetctx._errors import InvalidParameterError

__all__ = ["Journal", "journal_path"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rows (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    row INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    document_tokens INTEGER,
    tokens_used INTEGER,
    data TEXT NOT NULL
);
"""


def journal_path(out: str | Path) -> Path:
    """Where the journal of output ``out`` lives: ``OUT.journal.sqlite`` beside it."""
    p = Path(out)
    return p.with_name(p.name + ".journal.sqlite")


class Journal:
    """Completed rows of one batch, keyed by input position.

    >>> import tempfile, pathlib
    >>> j = Journal(pathlib.Path(tempfile.mkdtemp()) / "out.jsonl.journal.sqlite")
    >>> j.add(0, "a", 1, {"id": "a", "tokens_used": 5, "document_tokens": 9, "error": None})
    >>> j.totals()
    {'rows': 1, 'errors': 0, 'tokens_in': 9, 'tokens_out': 5}
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        # The journal holds context text: 0600, and SQLite gives its -wal and -shm files the
        # database file's mode.
        create_private(self.path)
        self._db = sqlite3.connect(self.path, timeout=30.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL: a commit survives a killed process (it is in the WAL); only a power cut
        # can lose the last commits, which a re-run then recomputes.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def check_settings(self, settings: Mapping[str, Any], *, out: str | Path) -> None:
        """Record ``settings`` on first use; refuse others later (rows would be mixed)."""
        wanted = json.dumps(dict(settings), sort_keys=True, default=str)
        row = self._db.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
        if row is None:
            with self._db:
                self._db.execute("INSERT INTO meta VALUES ('settings', ?)", (wanted,))
            return
        current = json.loads(row[0])
        new = json.loads(wanted)
        diff = {k: (current.get(k), new.get(k)) for k in set(current) | set(new)}
        diff = {k: v for k, v in diff.items() if v[0] != v[1]}
        if diff:
            shown = "; ".join(f"{k}: {a!r} then, {b!r} now" for k, (a, b) in sorted(diff.items()))
            raise InvalidParameterError(
                f"{str(out)!r} was started with another configuration ({shown}). Run the "
                f"same command as before to resume it, write to a new --out, or pass "
                f"--overwrite (overwrite=True) to delete {str(out)!r} and its journal and "
                "start again.",
                parameter="out",
                value=str(out),
            )

    def done(self) -> dict[int, tuple[str, int]]:
        """``seq -> (id, row)`` of every journaled row."""
        return {
            int(s): (str(i), int(r))
            for s, i, r in self._db.execute("SELECT seq, id, row FROM rows")
        }

    def add(self, seq: int, ident: str, row: int, data: Mapping[str, Any]) -> None:
        """Journal one finished row (a context or a recorded error) and commit it."""
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO rows VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    seq,
                    ident,
                    row,
                    int(data.get("error") is not None),
                    data.get("document_tokens"),
                    data.get("tokens_used"),
                    json.dumps(dict(data), ensure_ascii=False),
                ),
            )

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every journaled row in input order."""
        for (data,) in self._db.execute("SELECT data FROM rows ORDER BY seq"):
            yield json.loads(data)

    def totals(self) -> dict[str, int]:
        n, errors, tokens_in, tokens_out = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(failed), 0), COALESCE(SUM(document_tokens), 0), "
            "COALESCE(SUM(tokens_used), 0) FROM rows"
        ).fetchone()
        return {
            "rows": int(n),
            "errors": int(errors),
            "tokens_in": int(tokens_in),
            "tokens_out": int(tokens_out),
        }
