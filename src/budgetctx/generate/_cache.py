"""A persistent response cache (one SQLite file) and a generator wrapper that uses it.

Rows are keyed by :func:`~budgetctx.generate.request_key` (a sha256 of model, messages and
params), so the prompt text itself is not stored unless asked for with ``store_prompts=True``.
A cache hit comes back with ``cached=True`` and ``latency_ms=0.0`` (no model was called); the
latency of the call that produced it is kept in ``meta["original_latency_ms"]``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, cast

from budgetctx._errors import GenerationError, InvalidParameterError
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
_ORIGINAL_LATENCY = "original_latency_ms"


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

    The prompt column stays NULL unless ``store_prompts=True``; responses are always stored.

    >>> import tempfile, pathlib
    >>> from budgetctx.generate import Generation, Usage
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     with ResponseCache(pathlib.Path(tmp) / "cache.sqlite") as cache:
    ...         cache.put("k1", Generation("hi", Usage(3, 1), 12.5, "m"))
    ...         hit = cache.get("k1")
    ...         (len(cache), hit.text, hit.cached, hit.latency_ms, hit.meta)
    (1, 'hi', True, 0.0, {'original_latency_ms': 12.5})
    """

    def __init__(self, path: str | Path, *, store_prompts: bool = False) -> None:
        self.path = Path(path).expanduser()
        self.store_prompts = store_prompts
        if self.path.is_dir():
            raise InvalidParameterError(
                f"path {str(self.path)!r} is a directory. Pass a file path such as "
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
            self._conn.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            self._conn = None
            raise InvalidParameterError(
                f"{str(self.path)!r} is not a usable response cache ({exc}). Pass a new path or "
                "delete the file.",
                parameter="path",
                value=str(path),
            ) from exc

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise GenerationError(
                f"The response cache {str(self.path)!r} is closed. Open a new ResponseCache."
            )
        return self._conn

    def get(self, key: str) -> Generation | None:
        """The stored generation for ``key`` (with ``cached=True``), or None."""
        with self._lock:
            row = (
                self._connection()
                .execute("SELECT response FROM responses WHERE key = ?", (key,))
                .fetchone()
            )
        return None if row is None else _from_row(row[0])

    def put(
        self, key: str, generation: Generation, messages: Sequence[Message] | None = None
    ) -> None:
        """Store ``generation`` under ``key`` (replacing any earlier row)."""
        self._put_many([(key, generation, messages)])

    def _put_many(self, items: Iterable[tuple[str, Generation, Sequence[Message] | None]]) -> None:
        created = datetime.now(UTC).isoformat(timespec="seconds")
        rows = [
            (
                key,
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

    def __init__(
        self,
        inner: Generator,
        cache: ResponseCache | str | Path,
        *,
        store_prompts: bool = False,
    ) -> None:
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
