from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from budgetctx._errors import GenerationError, InvalidParameterError
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
