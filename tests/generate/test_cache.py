from __future__ import annotations

import hashlib
import hmac
import json
import os
import sqlite3
import stat
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from budgetctx._errors import BudgetCtxWarning, GenerationError, InvalidParameterError
from budgetctx.generate import Generation, Generator, Message, Usage, request_key
from budgetctx.generate._cache import CachedGenerator, ResponseCache

SECRET = "patient Zebulon Quimby-Fairweather, MRN 8675309"


class CountingGenerator:
    """Echoes a digest of the prompt; counts every prompt it is asked to answer."""

    def __init__(self, model: str = "fake-1", *, temperature: float = 0.0) -> None:
        self.model = model
        self.temperature = temperature
        self.prompts_seen = 0
        self.batch_calls = 0
        self.fail_on: str | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"fake:{self.model}"

    def params(self) -> dict[str, Any]:
        return {"model": self.model, "temperature": self.temperature}

    def generate(self, messages: Sequence[Message]) -> Generation:
        with self._lock:
            self.prompts_seen += 1
        content = messages[-1].content
        if self.fail_on is not None and self.fail_on in content:
            raise GenerationError("backend down. Retry later.")
        # The reply must not contain the prompt, so the privacy test sees only the cache's doing.
        return Generation(
            text=f"reply #{len(content)}",
            usage=Usage(len(content), 2),
            latency_ms=42.0,
            model=self.name,
            finish_reason="stop",
            meta={"request_id": "r1"},
        )

    def generate_batch(self, prompts: Sequence[Sequence[Message]]) -> list[Generation]:
        self.batch_calls += 1
        return [self.generate(p) for p in prompts]


def _prompt(text: str) -> list[Message]:
    return [Message("system", "Summarize."), Message("user", text)]


def _db_bytes(path: Path) -> bytes:
    out = b""
    for suffix in ("", "-wal", "-shm", "-journal"):
        part = Path(str(path) + suffix)
        if part.exists():
            out += part.read_bytes()
    return out


def test_protocol(tmp_path: Path) -> None:
    inner = CountingGenerator()
    assert isinstance(inner, Generator)
    with CachedGenerator(inner, tmp_path / "c.sqlite") as gen:
        assert isinstance(gen, Generator)
        assert gen.name == "fake:fake-1"
        assert gen.params() == inner.params()


def test_second_identical_batch_makes_no_inner_calls(tmp_path: Path) -> None:
    inner = CountingGenerator()
    prompts = [_prompt(f"note {i}") for i in range(5)]
    with CachedGenerator(inner, tmp_path / "c.sqlite") as gen:
        first = gen.generate_batch(prompts)
        assert (inner.prompts_seen, inner.batch_calls, gen.calls, gen.hits) == (5, 1, 5, 0)
        assert all(not g.cached for g in first)
        second = gen.generate_batch(prompts)
        assert (inner.prompts_seen, inner.batch_calls, gen.calls, gen.hits) == (5, 1, 5, 5)
    assert [g.text for g in second] == [g.text for g in first]
    assert [g.usage for g in second] == [g.usage for g in first]
    for hit in second:
        assert hit.cached
        assert hit.latency_ms == 0.0
        assert hit.meta["original_latency_ms"] == 42.0
        assert hit.meta["request_id"] == "r1"
        assert hit.finish_reason == "stop"
        assert hit.model == "fake:fake-1"


def test_generate_single_hit_and_miss(tmp_path: Path) -> None:
    inner = CountingGenerator()
    with CachedGenerator(inner, tmp_path / "c.sqlite") as gen:
        a = gen.generate(_prompt("x"))
        b = gen.generate(_prompt("x"))
        assert not a.cached and b.cached
        assert (inner.prompts_seen, gen.calls, gen.hits) == (1, 1, 1)


def test_mixed_batch_sends_only_misses_in_order(tmp_path: Path) -> None:
    inner = CountingGenerator()
    with CachedGenerator(inner, tmp_path / "c.sqlite") as gen:
        gen.generate_batch([_prompt("aa"), _prompt("cccc")])
        out = gen.generate_batch([_prompt("a"), _prompt("aa"), _prompt("bbb"), _prompt("cccc")])
    assert [g.text for g in out] == ["reply #1", "reply #2", "reply #3", "reply #4"]
    assert [g.cached for g in out] == [False, True, False, True]
    assert (inner.prompts_seen, inner.batch_calls, gen.calls, gen.hits) == (4, 2, 4, 2)


def test_duplicates_in_one_batch_are_sent_once(tmp_path: Path) -> None:
    inner = CountingGenerator()
    prompts = [_prompt("same"), _prompt("other"), _prompt("same"), _prompt("same")]
    with CachedGenerator(inner, tmp_path / "c.sqlite") as gen:
        out = gen.generate_batch(prompts)
        assert (inner.prompts_seen, gen.calls, gen.hits) == (2, 2, 2)
    assert [g.text for g in out] == ["reply #4", "reply #5", "reply #4", "reply #4"]
    assert [g.cached for g in out] == [False, False, True, True]
    assert out[2].meta["original_latency_ms"] == 42.0


@pytest.mark.parametrize(
    ("model", "temperature", "text"),
    [("fake-2", 0.0, "note"), ("fake-1", 0.7, "note"), ("fake-1", 0.0, "note!")],
    ids=["model", "params", "messages"],
)
def test_any_change_is_a_miss(tmp_path: Path, model: str, temperature: float, text: str) -> None:
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        base = CachedGenerator(CountingGenerator(), cache)
        base.generate(_prompt("note"))
        inner = CountingGenerator(model, temperature=temperature)
        other = CachedGenerator(inner, cache)
        out = other.generate(_prompt(text))
        assert not out.cached
        assert (inner.prompts_seen, other.calls, other.hits) == (1, 1, 0)
        assert len(cache) == 2


def test_role_change_is_a_miss(tmp_path: Path) -> None:
    with CachedGenerator(CountingGenerator(), tmp_path / "c.sqlite") as gen:
        gen.generate([Message("user", "hi")])
        gen.generate([Message("system", "hi")])
        assert (gen.calls, gen.hits) == (2, 0)


def test_persists_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "c.sqlite"
    with CachedGenerator(CountingGenerator(), path) as gen:
        gen.generate_batch([_prompt("one"), _prompt("two")])
    assert path.is_file()
    inner = CountingGenerator()
    with CachedGenerator(inner, ResponseCache(path)) as again:
        out = again.generate_batch([_prompt("one"), _prompt("two")])
        assert len(again.cache) == 2
    assert inner.prompts_seen == 0
    assert [g.text for g in out] == ["reply #3", "reply #3"]
    assert all(g.cached for g in out)


def test_prompt_text_not_stored_by_default(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    gen = CachedGenerator(CountingGenerator(), path)
    gen.generate_batch([_prompt(SECRET)])
    gen.generate(_prompt(SECRET + " again"))
    # Before close the rows live in the WAL; look there too.
    assert SECRET.encode() not in _db_bytes(path)
    gen.close()
    data = _db_bytes(path)
    assert b"reply #" in data  # the reader sees the stored rows, so absence means something
    assert SECRET.encode() not in data
    assert b"Summarize." not in data
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM responses WHERE prompt IS NULL").fetchone() == (
            2,
        )


def test_prompt_text_stored_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with CachedGenerator(CountingGenerator(), path, store_prompts=True) as gen:
        gen.generate_batch([_prompt(SECRET)])
    assert SECRET.encode() in _db_bytes(path)
    with sqlite3.connect(path) as conn:
        (prompt,) = conn.execute("SELECT prompt FROM responses").fetchone()
    assert SECRET in prompt and "Summarize." in prompt


def test_store_prompts_conflict_with_open_cache(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache, pytest.raises(InvalidParameterError):
        CachedGenerator(CountingGenerator(), cache, store_prompts=True)


def test_errors_are_not_cached(tmp_path: Path) -> None:
    inner = CountingGenerator()
    inner.fail_on = "boom"
    with CachedGenerator(inner, tmp_path / "c.sqlite") as gen:
        with pytest.raises(GenerationError):
            gen.generate_batch([_prompt("fine"), _prompt("boom")])
        assert len(gen.cache) == 0
        with pytest.raises(GenerationError):
            gen.generate(_prompt("boom"))
        assert len(gen.cache) == 0
        inner.fail_on = None
        out = gen.generate(_prompt("boom"))
        assert not out.cached
        assert len(gen.cache) == 1
        assert gen.calls == 4  # every prompt sent counts, failed or not


def test_response_cache_roundtrip_and_replace(tmp_path: Path) -> None:
    key = request_key("m", _prompt("x"), {})
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        assert cache.get(key) is None
        cache.put(key, Generation("v1", Usage(1, 1), 5.0, "m"))
        cache.put(key, Generation("v2", Usage(1, 2), 6.0, "m", finish_reason="length"))
        hit = cache.get(key)
        assert len(cache) == 1
        assert hit is not None
        # Storing a hit again keeps the original latency rather than 0.0.
        cache.put(key, hit)
        again = cache.get(key)
    assert again is not None
    assert (again.text, again.usage, again.finish_reason) == ("v2", Usage(1, 2), "length")
    assert dict(again.meta) == {"original_latency_ms": 6.0}


def test_closed_cache_and_bad_path(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.close()
    cache.close()
    with pytest.raises(GenerationError, match="closed"):
        cache.get("k")
    with pytest.raises(InvalidParameterError, match="directory"):
        ResponseCache(tmp_path)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(InvalidParameterError, match="not a usable response cache"):
        ResponseCache(junk)


def test_threads_hammering_one_cache(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    inner = CountingGenerator()
    errors: list[BaseException] = []
    with CachedGenerator(inner, path) as gen:

        def work(worker: int) -> None:
            try:
                for round_ in range(30):
                    i = (worker * 7 + round_) % 40 + 1
                    if round_ % 3 == 0:
                        got = gen.generate_batch([_prompt("x" * i), _prompt("y" * i)])
                        assert [g.text for g in got] == [f"reply #{i}", f"reply #{i}"]
                    else:
                        assert gen.generate(_prompt("x" * i)).text == f"reply #{i}"
            except BaseException as exc:  # surfaced in the main thread below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        calls, hits = gen.calls, gen.hits
    with ResponseCache(path) as cache:
        assert len(cache) == 80  # 40 "x" and 40 "y" prompts, no duplicates, nothing lost
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    total = 8 * (20 * 1 + 10 * 2)
    assert calls + hits == total
    assert inner.prompts_seen == calls
    assert 80 <= calls < total


# --- the cache key is an HMAC under a per-cache secret ------------------------------------------


def _stored_keys(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [k for (k,) in conn.execute("SELECT key FROM responses ORDER BY key")]


def test_stored_key_is_an_hmac_not_the_request_key(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    key = request_key("m", _prompt(SECRET), {})
    with ResponseCache(path) as cache:
        cache.put(key, Generation("v", Usage(1, 1), 5.0, "m"))
        assert cache.get(key) is not None  # same request -> same row within a cache
        assert cache.key_path == tmp_path / "c.sqlite.key"
    secret = bytes.fromhex(cache.key_path.read_text().strip())
    assert len(secret) == 32
    expected = hmac.new(secret, key.encode(), hashlib.sha256).hexdigest()
    assert _stored_keys(path) == [expected]
    # a reader of the file alone cannot test a guessed prompt: the plain digest is not there
    assert key.encode() not in _db_bytes(path)
    assert secret.hex().encode() not in _db_bytes(path)
    with sqlite3.connect(path) as conn:
        meta = dict(conn.execute("SELECT name, value FROM cache_meta"))
    assert meta["format"] == "2" and len(meta["key_check"]) == 16


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_key_file_is_private(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        pass
    assert stat.S_IMODE(cache.key_path.stat().st_mode) == 0o600


def test_two_caches_key_the_same_request_differently(tmp_path: Path) -> None:
    key = request_key("m", _prompt("same"), {})
    for name in ("a.sqlite", "b.sqlite"):
        with ResponseCache(tmp_path / name) as cache:
            cache.put(key, Generation("v", Usage(1, 1), 5.0, "m"))
    assert _stored_keys(tmp_path / "a.sqlite") != _stored_keys(tmp_path / "b.sqlite")


def test_reopening_finds_rows_with_the_same_secret(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    key = request_key("m", _prompt("x"), {})
    with ResponseCache(path) as cache:
        cache.put(key, Generation("v", Usage(1, 1), 5.0, "m"))
    with ResponseCache(path) as cache:
        hit = cache.get(key)
    assert hit is not None and hit.text == "v"


def _first_format_cache(path: Path, keys: list[str]) -> None:
    """A cache as budgetctx wrote it before the HMAC: plain request keys, no cache_meta."""
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
            "response TEXT NOT NULL, created TEXT NOT NULL, prompt TEXT)"
        )
        for i, key in enumerate(keys):
            response = Generation(f"old reply {i}", Usage(2, 3), 7.0, "m").to_dict()
            del response["cached"]
            conn.execute(
                "INSERT INTO responses VALUES (?, ?, ?, ?, NULL)",
                (key, "m", json.dumps(response), "2026-01-01T00:00:00+00:00"),
            )
    conn.close()


def test_first_format_cache_is_migrated_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    keys = [request_key("m", _prompt(f"old {i}"), {}) for i in range(20)]
    _first_format_cache(path, keys)
    assert keys[0].encode() in _db_bytes(path)  # the leak the migration removes
    with ResponseCache(path) as cache:
        assert len(cache) == 20
        hits = [cache.get(k) for k in keys]
    assert [h.text if h else None for h in hits] == [f"old reply {i}" for i in range(20)]
    assert all(h is not None and h.cached for h in hits)
    data = _db_bytes(path)
    assert not any(k.encode() in data for k in keys)  # overwritten, not only unlinked
    assert set(_stored_keys(path)).isdisjoint(keys)
    with ResponseCache(path) as cache:  # and it opens again as a current cache
        assert cache.get(keys[3]) is not None


def test_missing_or_foreign_key_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    key = request_key("m", _prompt("x"), {})
    with ResponseCache(path) as cache:
        cache.put(key, Generation("v", Usage(1, 1), 5.0, "m"))
    with ResponseCache(tmp_path / "other.sqlite"):
        pass
    own = cache.key_path.read_bytes()
    cache.key_path.unlink()
    (tmp_path / "other.sqlite.key").rename(cache.key_path)
    with pytest.raises(InvalidParameterError, match="does not belong"):
        ResponseCache(path)
    cache.key_path.unlink()
    with pytest.raises(InvalidParameterError, match=r"holds 1 replies .* missing\. Restore"):
        ResponseCache(path)
    cache.key_path.write_bytes(b"not hex")
    cache.key_path.chmod(0o600)
    with pytest.raises(InvalidParameterError, match="cannot be read"):
        ResponseCache(path)
    cache.key_path.write_bytes(own)
    with ResponseCache(path) as again:
        assert again.get(key) is not None


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_a_key_file_others_can_read_is_warned_about(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        pass
    cache.key_path.chmod(0o644)
    with pytest.warns(BudgetCtxWarning, match="chmod 600"), ResponseCache(tmp_path / "c.sqlite"):
        pass


def test_an_empty_cache_without_its_key_gets_a_new_one(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        pass
    cache.key_path.unlink()
    with ResponseCache(path) as cache:
        cache.put("k", Generation("v", Usage(1, 1), 5.0, "m"))
    with ResponseCache(path) as cache:
        assert cache.get("k") is not None


@pytest.mark.parametrize(
    ("options", "parameter"), [({"path": 3}, "path"), ({"store_prompts": "yes"}, "store_prompts")]
)
def test_bad_cache_arguments(tmp_path: Path, options: dict[str, Any], parameter: str) -> None:
    options = {"path": tmp_path / "c.sqlite", **options}
    with pytest.raises(InvalidParameterError) as info:
        ResponseCache(**options)
    assert info.value.parameter == parameter
    assert str(info.value).startswith(f"The {parameter!r} parameter of ResponseCache must be")
    assert not (tmp_path / "c.sqlite").exists()


def test_cached_generator_arguments_are_checked(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="'inner' parameter of CachedGenerator"):
        CachedGenerator(object(), tmp_path / "c.sqlite")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="'cache' parameter of CachedGenerator"):
        CachedGenerator(CountingGenerator(), 3)  # type: ignore[arg-type]


def test_a_key_file_that_cannot_be_written_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("budgetctx.generate._cache.os.open", refuse)
    with pytest.raises(InvalidParameterError, match=r"Cannot create the key file .*folder you can"):
        ResponseCache(tmp_path / "c.sqlite")
