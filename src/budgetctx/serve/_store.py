"""A durable provenance store: SQLite on a local file, offsets and counts only.

This is the server's default store (``provenance_store = "sqlite"``). The in-memory store
(``provenance_store = "memory"``) loses every record on restart and differs per replica. This
one keeps them in one SQLite file that replicas on one host (or a shared volume) can share:

- **Where**: ``provenance_path``, by default :func:`default_provenance_path` (the user's state
  folder: ``$XDG_STATE_HOME/budgetctx/provenance.sqlite3``, else
  ``~/.local/state/budgetctx/provenance.sqlite3`` on Linux), its folder created 0700.

- **What is kept**: a record with every text removed (document text, message contents,
  unit texts, queries, document metadata): what stays are ids, character offsets (spans),
  token counts, scores, the selector and notes. ``keep_text=True`` keeps the texts too
  (opt-in: the file then holds document text, PHI in a clinical setting).
- **The file** is created with mode 0600 (owner read/write only), WAL journal.
- **Retention**: a record older than ``retention_s`` seconds (default 7 days) is deleted, and
  beyond ``max_records`` the oldest go; both are enforced on every write. ``delete(id)``
  (``DELETE /v1/provenance/{id}``) removes one record at once. Deleting the file deletes all.
- **Who may read**: the record's owner (a hash of the caller's API key, when keys are on) is
  kept beside it, so that after a restart a record is still readable only with its key.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "prov.sqlite3")
>>> store = SqliteProvenanceStore(path)
>>> pid = store.put({"endpoint": "context", "context": {"text": "Chest pain.", "tokens_used": 3}})
>>> store.get(pid), oct(os.stat(path).st_mode & 0o777)
({'endpoint': 'context', 'context': {'tokens_used': 3}}, '0o600')
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from budgetctx._core.validation import Boolean, Interval, check
from budgetctx._errors import InvalidParameterError

__all__ = ["TEXT_KEYS", "SqliteProvenanceStore", "default_provenance_path", "strip_text"]

#: Keys whose values are text taken from a request: removed unless ``keep_text``. Document
#: ``metadata`` is the client's own and may hold identifiers; ``omitted`` names JSON keys.
TEXT_KEYS = frozenset({"text", "messages", "content", "query", "document", "metadata", "omitted"})


def default_provenance_path() -> Path:
    """Where the server keeps provenance when ``provenance_path`` is not set: the user's
    state folder (platformdirs), which outlives restarts and is not shared with other users.

    >>> default_provenance_path().name
    'provenance.sqlite3'
    """
    import platformdirs

    return platformdirs.user_state_path("budgetctx") / "provenance.sqlite3"


def strip_text(value: Any) -> Any:
    """``value`` without any member named in :data:`TEXT_KEYS`, at any depth."""
    if isinstance(value, dict):
        return {k: strip_text(v) for k, v in value.items() if k not in TEXT_KEYS}
    if isinstance(value, list):
        return [strip_text(v) for v in value]
    return value


class SqliteProvenanceStore:
    """Provenance records in a SQLite file, by random id (see the module's notes)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        retention_s: float = 7 * 24 * 3600.0,
        max_records: int = 100_000,
        keep_text: bool = False,
    ) -> None:
        owner = "SqliteProvenanceStore"
        self.retention_s = check(owner, "retention_s", retention_s, Interval(float, 0, None))
        self.size: int = check(owner, "max_records", max_records, Interval(int, 1, None))
        self.keep_text = check(owner, "keep_text", keep_text, Boolean())
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        try:
            self._db = self._open()
        except (OSError, sqlite3.Error) as exc:
            # At start, not on the first request: the message names the file, never a record.
            raise InvalidParameterError(
                f"The provenance store {str(self.path)!r} cannot be opened "
                f"({type(exc).__name__}: {exc}); set provenance_path (--provenance-path) to a "
                "writable file, or provenance_store = 'memory' (--provenance-store memory).",
                parameter="provenance_path",
                value=str(self.path),
            ) from exc

    def _open(self) -> sqlite3.Connection:
        # A folder made here is the owner's alone (the records' ids are the only secret).
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Create the file 0600 before SQLite opens it, so it is never readable by others.
        fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
        os.close(fd)
        self.path.chmod(0o600)
        db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(
            "CREATE TABLE IF NOT EXISTS provenance "
            "(id TEXT PRIMARY KEY, created REAL NOT NULL, record TEXT NOT NULL, owner TEXT)"
        )
        columns = {row[1] for row in db.execute("PRAGMA table_info(provenance)")}
        if "owner" not in columns:  # a file written before owners were kept
            db.execute("ALTER TABLE provenance ADD COLUMN owner TEXT")
        return db
        self._db.execute("CREATE INDEX IF NOT EXISTS provenance_created ON provenance(created)")

    @property
    def enabled(self) -> bool:
        return True

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM provenance").fetchone()[0])

    def put(self, record: dict[str, Any], *, owner: str | None = None) -> str:
        """Store ``record`` (its texts removed unless ``keep_text``) and return its id;
        ``owner`` is the caller's id (a hash of its key), None without authentication."""
        key = uuid.uuid4().hex
        kept = record if self.keep_text else strip_text(record)
        now = time.time()
        with self._lock:
            self._db.execute(
                "INSERT INTO provenance (id, created, record, owner) VALUES (?, ?, ?, ?)",
                (key, now, json.dumps(kept, ensure_ascii=False), owner),
            )
            self._db.execute("DELETE FROM provenance WHERE created < ?", (now - self.retention_s,))
            self._db.execute(
                "DELETE FROM provenance WHERE id IN (SELECT id FROM provenance "
                "ORDER BY created DESC LIMIT -1 OFFSET ?)",
                (self.size,),
            )
        return key

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT record FROM provenance WHERE id = ? AND created >= ?",
                (key, time.time() - self.retention_s),
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def owner_of(self, key: str) -> tuple[bool, str | None]:
        """Whether the record is there, and its owner."""
        with self._lock:
            row = self._db.execute("SELECT owner FROM provenance WHERE id = ?", (key,)).fetchone()
        return (False, None) if row is None else (True, row[0])

    def delete(self, key: str) -> bool:
        """Remove one record; True when it was there."""
        with self._lock:
            cur = self._db.execute("DELETE FROM provenance WHERE id = ?", (key,))
        return cur.rowcount > 0

    def close(self) -> None:
        with self._lock:
            self._db.close()
