"""A persistent response cache (one SQLite file) and a generator wrapper that uses it.

Rows are keyed by HMAC-SHA256 of the :func:`~budgetctx.generate.request_key` (a SHA-256 of
model, messages and params) under a random 32-byte secret made with the cache and kept beside
it in ``<cache>.key`` (mode 0600), not in the file: a plain digest would let anyone who can
read the file test whether a guessed prompt was sent, and a secret stored in the same file
would not stop them. The prompt text itself is not stored unless ``store_prompts=True``.
Replies are stored in clear (they are the point of a cache).

A cache file of the first format (keys were plain request keys) is migrated in place when
opened: every key is re-keyed with a new secret, the old keys are overwritten on disk
(``secure_delete``, ``VACUUM``). A cache whose ``.key`` file is missing or belongs to
another cache is refused: without it no stored reply can be found.

A cache hit comes back with ``cached=True`` and ``latency_ms=0.0`` (no model was called); the
latency of the call that produced it is kept in ``meta["original_latency_ms"]``.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import stat
import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, cast

from budgetctx._core.validation import Boolean, Constraint, InstanceOf, validate
from budgetctx._errors import BudgetCtxWarning, GenerationError, InvalidParameterError
from budgetctx.generate._base import Generation, Generator, Message, Usage, request_key

__all__ = ["CachedGenerator", "ResponseCache"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created TEXT NOT NULL,
    prompt TEXT
)
"""
_META_SCHEMA = """
CREATE TABLE IF NOT EXISTS cache_meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
)
"""
_ORIGINAL_LATENCY = "original_latency_ms"
_FORMAT = "2"  # 1: keys were plain request keys (no cache_meta table)
_KEY_BYTES = 32
# What the cache_meta table holds to tell the right key file from another cache's: an HMAC of
# a fixed text, which says nothing about any prompt.
_KEY_CHECK_TEXT = b"budgetctx response cache key check"


def _key_check(secret: bytes) -> str:
    return hmac.new(secret, _KEY_CHECK_TEXT, hashlib.sha256).hexdigest()[:16]


def _row_key(secret: bytes, request: str) -> str:
    return hmac.new(secret, request.encode("utf-8"), hashlib.sha256).hexdigest()


def _read_secret(key_path: Path) -> bytes:
    try:
        text = key_path.read_text(encoding="ascii").strip()
        secret = bytes.fromhex(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidParameterError(
            f"The key file {str(key_path)!r} of the response cache cannot be read "
            f"({type(exc).__name__}). Restore it, or delete the cache and its key file to "
            "start an empty cache.",
            parameter="path",
            value=str(key_path),
        ) from None
    if len(secret) != _KEY_BYTES:
        raise InvalidParameterError(
            f"The key file {str(key_path)!r} of the response cache holds {len(secret)} bytes, "
            f"not {_KEY_BYTES}. Restore it, or delete the cache and its key file to start an "
            "empty cache.",
            parameter="path",
            value=str(key_path),
        )
    if os.name == "posix" and stat.S_IMODE(key_path.stat().st_mode) & 0o077:
        warnings.warn(
            f"The response cache key {str(key_path)!r} is readable by other users; with it "
            f"and the cache they can test guessed prompts. Run: chmod 600 {str(key_path)!r}.",
            BudgetCtxWarning,
            stacklevel=4,
        )
    return secret


def _new_secret(key_path: Path) -> bytes:
    """A fresh secret written to ``key_path`` (0600), or the one already there."""
    secret = secrets.token_bytes(_KEY_BYTES)
    try:
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # left by a cache file that was deleted: still ours to use
        return _read_secret(key_path)
    except OSError as exc:
        raise InvalidParameterError(
            f"Cannot create the key file {str(key_path)!r} of the response cache "
            f"({type(exc).__name__}: {exc.strerror}). Pass a cache path in a folder you can "
            "write to.",
            parameter="path",
            value=str(key_path),
        ) from None
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(secret.hex() + "\n")
    return secret


def _response_json(generation: Generation) -> str:
    data = generation.to_dict()
    del data["cached"]
    meta = dict(data["meta"])
    if generation.cached:
        # Re-storing a hit keeps the latency of the call that produced it.
        original = meta.pop(_ORIGINAL_LATENCY, None)
        if original is not None:
            data["latency_ms"] = original
    data["meta"] = meta
    # Backend meta that JSON cannot hold is kept as its str(), rather than losing the reply.
    return json.dumps(data, ensure_ascii=False, sort_keys=True, default=str)


def _from_row(response: str) -> Generation:
    data = json.loads(response)
    meta = dict(data.get("meta") or {})
    meta[_ORIGINAL_LATENCY] = float(data["latency_ms"])
    usage = data["usage"]
    return Generation(
        text=data["text"],
        usage=Usage(int(usage["input_tokens"]), int(usage["output_tokens"])),
        latency_ms=0.0,
        model=data["model"],
        cached=True,
        finish_reason=data.get("finish_reason"),
        meta=meta,
    )


class ResponseCache:
    """Generations stored by request key in one SQLite file (WAL mode, safe across threads).

    Rows are keyed by an HMAC of the request key under the secret in :attr:`key_path` (made
    with the cache, mode 0600); keep that file with the cache, and leave it out when sharing
    the cache. The prompt column stays NULL unless ``store_prompts=True``; responses are
    always stored.

    >>> import tempfile, pathlib
    >>> from budgetctx.generate import Generation, Usage
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     with ResponseCache(pathlib.Path(tmp) / "cache.sqlite") as cache:
    ...         cache.put("k1", Generation("hi", Usage(3, 1), 12.5, "m"))
    ...         hit = cache.get("k1")
    ...         (len(cache), hit.text, hit.cached, hit.latency_ms, hit.meta)
    (1, 'hi', True, 0.0, {'original_latency_ms': 12.5})
    """

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "path": InstanceOf(
            (str, os.PathLike), "a str or Path", fix="e.g. 'runs/responses.sqlite'."
        ),
        "store_prompts": Boolean(fix="True also stores prompt text, which is PHI."),
    }

    def __init__(self, path: str | Path, *, store_prompts: bool = False) -> None:
        validate("ResponseCache", self._constraints, {"path": path, "store_prompts": store_prompts})
        self.path = Path(path).expanduser()
        self.store_prompts = store_prompts
        if self.path.is_dir():
            raise InvalidParameterError(
                f"The 'path' parameter of ResponseCache must be a file path. Got "
                f"{str(self.path)!r}, a directory, instead; pass e.g. "
                f"{str(self.path / 'responses.sqlite')!r}.",
                parameter="path",
                value=str(path),
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # One connection shared by all threads; the lock serialises its use.
        self._conn: sqlite3.Connection | None = sqlite3.connect(
            self.path, check_same_thread=False, isolation_level=None, timeout=30.0
        )
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            # overwritten rows (a replaced reply, a migrated key) are zeroed, not left in free
            # pages; some SQLite builds do this by default, not all
            self._conn.execute("PRAGMA secure_delete=ON")
            self._secret = self._open_format(self._conn)
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            self._conn = None
            raise InvalidParameterError(
                f"{str(self.path)!r} is not a usable response cache ({exc}). Pass a new path or "
                "delete the file.",
                parameter="path",
                value=str(path),
            ) from exc
        except BaseException:
            self._conn.close()
            self._conn = None
            raise

    @property
    def key_path(self) -> Path:
        """Where the cache's secret lives: beside the file, ``<name>.key``, mode 0600."""
        return self.path.with_name(self.path.name + ".key")

    def _open_format(self, conn: sqlite3.Connection) -> bytes:
        """The secret, after creating the tables, or migrating a first-format file."""
        # IMMEDIATE: two processes opening one new cache must not make two secrets
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(_SCHEMA)
            conn.execute(_META_SCHEMA)
            meta = dict(conn.execute("SELECT name, value FROM cache_meta").fetchall())
            rows = int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
            migrated = False
            if not meta:
                secret = _new_secret(self.key_path)
                if rows:  # first format: plain request keys, re-keyed in place
                    old = [k for (k,) in conn.execute("SELECT key FROM responses").fetchall()]
                    conn.executemany(
                        "UPDATE responses SET key = ? WHERE key = ?",
                        [(_row_key(secret, k), k) for k in old],
                    )
                    migrated = True
                conn.executemany(
                    "INSERT INTO cache_meta (name, value) VALUES (?, ?)",
                    [("format", _FORMAT), ("key_check", _key_check(secret))],
                )
            elif meta.get("format") != _FORMAT:
                raise InvalidParameterError(
                    f"{str(self.path)!r} is a response cache of format {meta.get('format')!r}, "
                    f"newer than this budgetctx reads ({_FORMAT}). Upgrade budgetctx or pass "
                    "another path.",
                    parameter="path",
                    value=str(self.path),
                )
            else:
                secret = self._stored_secret(conn, meta, rows)
        except BaseException:
            with contextlib.suppress(sqlite3.Error):  # the failure may have ended it already
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        if migrated:
            # leave no plain request key on disk: not in the main file, not in the WAL
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return secret

    def _stored_secret(self, conn: sqlite3.Connection, meta: Mapping[str, str], rows: int) -> bytes:
        if not self.key_path.exists():
            if rows:
                raise InvalidParameterError(
                    f"The response cache {str(self.path)!r} holds {rows} replies keyed with a "
                    f"secret kept in {str(self.key_path)!r}, which is missing. Restore that "
                    "file, or delete the cache to start an empty one.",
                    parameter="path",
                    value=str(self.path),
                )
            secret = _new_secret(self.key_path)  # an empty cache: nothing to lose
            conn.execute(
                "UPDATE cache_meta SET value = ? WHERE name = 'key_check'", (_key_check(secret),)
            )
            return secret
        secret = _read_secret(self.key_path)
        if not hmac.compare_digest(_key_check(secret), meta.get("key_check", "")):
            raise InvalidParameterError(
                f"The key file {str(self.key_path)!r} does not belong to the response cache "
                f"{str(self.path)!r} (copied from another cache?). Restore the cache's own "
                "key file, or delete both to start an empty cache.",
                parameter="path",
                value=str(self.path),
            )
        return secret

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise GenerationError(
                f"The response cache {str(self.path)!r} is closed. Open a new ResponseCache."
            )
        return self._conn

    def get(self, key: str) -> Generation | None:
        """The stored generation for request key ``key`` (with ``cached=True``), or None."""
        with self._lock:
            row = (
                self._connection()
                .execute(
                    "SELECT response FROM responses WHERE key = ?", (_row_key(self._secret, key),)
                )
                .fetchone()
            )
        return None if row is None else _from_row(row[0])

    def put(
        self, key: str, generation: Generation, messages: Sequence[Message] | None = None
    ) -> None:
        """Store ``generation`` under request key ``key`` (replacing any earlier row)."""
        self._put_many([(key, generation, messages)])

    def _put_many(self, items: Iterable[tuple[str, Generation, Sequence[Message] | None]]) -> None:
        created = datetime.now(UTC).isoformat(timespec="seconds")
        rows = [
            (
                _row_key(self._secret, key),
                generation.model,
                _response_json(generation),
                created,
                (
                    json.dumps([m.to_dict() for m in messages], ensure_ascii=False)
                    if self.store_prompts and messages is not None
                    else None
                ),
            )
            for key, generation, messages in items
        ]
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(
                    "INSERT OR REPLACE INTO responses (key, model, response, created, prompt) "
                    "VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def __len__(self) -> int:
        with self._lock:
            row = self._connection().execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def close(self) -> None:
        """Checkpoint the WAL into the main file and close; calling it again does nothing."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r}, store_prompts={self.store_prompts})"


class CachedGenerator:
    """Wraps a generator so that a request already answered is read from a ResponseCache.

    ``calls`` counts prompts sent to the inner generator, ``hits`` prompts answered without a
    call (stored, or a duplicate of an earlier prompt in the same batch); every prompt adds one
    to exactly one of them. Failed requests are not stored. ``store_prompts`` applies when
    ``cache`` is a path.

    >>> gen = CachedGenerator(get_generator("local"), "runs/cache.sqlite")  # doctest: +SKIP
    >>> gen.generate_batch(prompts); gen.generate_batch(prompts)  # doctest: +SKIP
    >>> gen.calls, gen.hits  # doctest: +SKIP
    (10, 10)
    """

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "inner": InstanceOf(
            Generator, "a Generator", fix="e.g. get_generator('local') or an OpenAIGenerator."
        ),
        "cache": InstanceOf(
            (ResponseCache, str, os.PathLike),
            "a ResponseCache or a path",
            fix="e.g. 'runs/responses.sqlite'.",
        ),
        "store_prompts": Boolean(fix="True also stores prompt text, which is PHI."),
    }

    def __init__(
        self,
        inner: Generator,
        cache: ResponseCache | str | Path,
        *,
        store_prompts: bool = False,
    ) -> None:
        validate(
            "CachedGenerator",
            self._constraints,
            {"inner": inner, "cache": cache, "store_prompts": store_prompts},
        )
        if isinstance(cache, ResponseCache):
            if store_prompts and not cache.store_prompts:
                raise InvalidParameterError(
                    "store_prompts=True conflicts with the given ResponseCache, which was "
                    "opened with store_prompts=False. Pass store_prompts to ResponseCache.",
                    parameter="store_prompts",
                    value=store_prompts,
                )
            self.cache = cache
            self._owns_cache = False
        else:
            self.cache = ResponseCache(cache, store_prompts=store_prompts)
            self._owns_cache = True
        self.inner = inner
        self.calls = 0
        self.hits = 0
        self._count_lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.inner.name

    def params(self) -> dict[str, Any]:
        return self.inner.params()

    def _count(self, *, calls: int = 0, hits: int = 0) -> None:
        with self._count_lock:
            self.calls += calls
            self.hits += hits

    def generate(self, messages: Sequence[Message]) -> Generation:
        key = request_key(self.name, messages, self.params())
        hit = self.cache.get(key)
        if hit is not None:
            self._count(hits=1)
            return hit
        self._count(calls=1)
        generation = self.inner.generate(messages)
        self.cache.put(key, generation, messages)
        return generation

    def generate_batch(self, prompts: Sequence[Sequence[Message]]) -> list[Generation]:
        """Answers hits from the cache and sends the distinct misses in one inner batch."""
        name, params = self.name, self.params()
        keys = [request_key(name, messages, params) for messages in prompts]
        results: list[Generation | None] = [None] * len(prompts)
        misses: dict[str, int] = {}  # key -> index of its first prompt, in prompt order
        for i, key in enumerate(keys):
            if key in misses:
                continue
            hit = self.cache.get(key)
            if hit is None:
                misses[key] = i
            else:
                results[i] = hit
        hits = sum(1 for r in results if r is not None)
        if misses:
            first = list(misses.values())
            self._count(calls=len(first))
            fresh = self.inner.generate_batch([prompts[i] for i in first])
            if len(fresh) != len(first):
                raise GenerationError(
                    f"{name} returned {len(fresh)} generations for {len(first)} prompts. "
                    "Fix the generator's generate_batch to return one per prompt."
                )
            self.cache._put_many(
                (keys[i], generation, prompts[i])
                for i, generation in zip(first, fresh, strict=True)
            )
            by_key = dict(zip(misses, fresh, strict=True))
            for i, key in enumerate(keys):
                if results[i] is not None:
                    continue
                if misses[key] == i:
                    results[i] = by_key[key]
                else:
                    # A repeat of a prompt answered earlier in this batch: no call was made.
                    results[i] = _from_row(_response_json(by_key[key]))
                    hits += 1
        self._count(hits=hits)
        # Every slot is filled: a hit, a fresh answer, or a repeat of one.
        return cast(list[Generation], results)

    def close(self) -> None:
        """Closes the cache if this wrapper opened it from a path."""
        if self._owns_cache:
            self.cache.close()

    def __enter__(self) -> CachedGenerator:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"CachedGenerator({self.inner!r}, {self.cache!r})"
