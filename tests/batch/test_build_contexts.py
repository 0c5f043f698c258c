"""build_contexts: the same Contexts as build_context in a loop, in input order, serially or in
a process pool, with errors raised or recorded and options checked before any work."""

from __future__ import annotations

import itertools
import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from budgetctx import (
    BudgetCtxError,
    InputError,
    InvalidParameterError,
    UnknownComponentError,
    build_context,
    build_contexts,
)
from budgetctx._core.results import Context
from budgetctx.batch import ItemError
from budgetctx.unitizers import get_unitizer

from ._docs import notes, rows


def _comparable(ctx: Context | ItemError) -> dict[str, Any]:
    assert isinstance(ctx, Context), ctx
    out = ctx.to_dict()
    out.pop("timings_ms")
    return out


@pytest.mark.parametrize("workers", [None, 2])
def test_same_contexts_as_build_context_in_input_order(workers: int | None) -> None:
    docs = notes(9)
    expected = [_comparable(build_context(d, 120, selector="rcd")) for d in docs]
    got = list(build_contexts(docs, 120, workers=workers, selector="rcd"))
    assert [_comparable(c) for c in got] == expected
    # Different lengths: a pool that yielded in completion order would shuffle them.
    assert len({c["document_tokens"] for c in expected}) > 3


def test_mappings_and_strings_mix() -> None:
    items: list[Any] = [rows(2)[0], notes(3)[2], {"id": 7, "text": notes(2)[1]}]
    got = list(build_contexts(items, 64, selector="lead"))
    assert [c.text for c in got if isinstance(c, Context)] == [
        build_context(t, 64, selector="lead").text for t in (notes(1)[0], notes(3)[2], notes(2)[1])
    ]


def test_text_field_names_the_key() -> None:
    got = list(build_contexts([{"body": "Fever. Cultures drawn."}], 3, text_field="body"))
    assert isinstance(got[0], Context)
    assert got[0].tokens_used <= 3


@pytest.mark.parametrize("workers", [None, 2])
def test_record_yields_item_errors_naming_the_item(workers: int | None) -> None:
    secret = "PATIENT JANE ROE"
    items: list[Any] = [
        {"id": "ok", "text": notes(1)[0]},
        {"id": "nul", "text": f"{secret}\x00binary"},
        {"id": "no-text"},
        {"id": "num", "text": 12},
        notes(2)[1],
    ]
    got = list(build_contexts(items, 50, workers=workers, on_error="record"))
    assert [type(r).__name__ for r in got] == [
        "Context",
        "ItemError",
        "ItemError",
        "ItemError",
        "Context",
    ]
    errors = [r for r in got if isinstance(r, ItemError)]
    assert [(e.index, e.id, e.error) for e in errors] == [
        (1, "nul", "InputError"),
        (2, "no-text", "InputError"),
        (3, "num", "InputError"),
    ]
    for e in errors:
        assert secret not in e.message
        assert e.to_dict()["id"] == e.id
    assert "'text' field" in errors[1].message


@pytest.mark.parametrize("workers", [None, 2])
def test_raise_stops_at_the_bad_item_and_names_it(workers: int | None) -> None:
    items = [notes(1)[0], {"id": "bad", "text": "a\x00b"}, notes(2)[1]]
    with pytest.raises(InputError) as info:
        list(build_contexts(items, 50, workers=workers))
    assert "NUL" in str(info.value)
    assert any("item 1" in n and "'bad'" in n for n in info.value.__notes__)


def _untouchable() -> Iterator[str]:
    raise AssertionError("the items were read before the options were checked")
    yield ""  # pragma: no cover


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"workers": 0}, InvalidParameterError, "The 'workers' parameter of build_contexts"),
        ({"on_error": "skip"}, InvalidParameterError, "'on_error'"),
        ({"window": 0}, InvalidParameterError, "'window'"),
        ({"selectr": "lead"}, InvalidParameterError, "'selectr'"),
        ({"selector": "nope", "on_error": "record"}, UnknownComponentError, "nope"),
        ({"tokenizer": "nope", "workers": 2}, UnknownComponentError, "nope"),
        ({"order": "backwards"}, InvalidParameterError, "order"),
    ],
)
def test_bad_options_raise_before_any_item_is_read(
    kwargs: dict[str, Any], error: type[BudgetCtxError], needle: str
) -> None:
    with pytest.raises(error, match=needle):
        build_contexts(_untouchable(), 50, **kwargs)


def test_bad_budget_raises_with_the_template() -> None:
    with pytest.raises(InvalidParameterError, match="'budget' parameter of build_contexts"):
        build_contexts(_untouchable(), 0)


def test_an_endless_iterable_is_read_a_window_at_a_time() -> None:
    pulled = 0
    base = notes(4)

    def endless() -> Iterator[str]:
        nonlocal pulled
        for i in itertools.count():
            pulled += 1
            yield base[i % len(base)]

    results = build_contexts(endless(), 40, workers=2, window=3, selector="lead")
    first = list(itertools.islice(results, 5))
    results.close()  # type: ignore[attr-defined]
    assert len(first) == 5
    # 5 yielded, at most 3 more in flight (plus the one being submitted when the head is ready).
    assert pulled <= 5 + 3 + 1


class _KillingUnitizer:
    """Sentence units, except that a document containing KILL-WORKER kills its process, as
    the kernel's out-of-memory killer would."""

    name = "killing"

    def params(self) -> dict[str, Any]:
        return {}

    def unitize(self, text: str) -> Any:
        if "KILL-WORKER" in text:
            os.kill(os.getpid(), signal.SIGKILL)
        return get_unitizer("sentence").unitize(text)


def test_a_worker_killed_mid_batch_costs_only_its_item() -> None:
    items = notes(7)
    items[3] = "KILL-WORKER. " + items[3]
    results = list(
        build_contexts(items, 40, workers=2, unitizer=_KillingUnitizer(), on_error="record")
    )
    assert len(results) == 7
    dead = results[3]
    assert isinstance(dead, ItemError) and dead.index == 3 and dead.error == "WorkerDied"
    assert "worker process died" in dead.message
    for i, got in enumerate(results):
        if i != 3:
            want = build_context(items[i], 40, unitizer=_KillingUnitizer())
            assert _comparable(got) == _comparable(want)
    with pytest.raises(BudgetCtxError, match="worker process died") as info:
        list(build_contexts(items, 40, workers=2, unitizer=_KillingUnitizer()))
    assert "item 3" in "".join(getattr(info.value, "__notes__", []))


def test_the_last_items_go_in_shrinking_chunks_so_workers_finish_together(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """40 items in chunks of 8 would leave one worker doing a whole chunk (24 items against
    16) while the other idles; the items known to be the last are sent in smaller chunks."""
    from concurrent.futures import ProcessPoolExecutor

    from budgetctx.batch import _build

    sizes: list[int] = []

    class Recording(ProcessPoolExecutor):
        def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
            sizes.append(len(args[0]))
            return super().submit(fn, *args, **kwargs)

    monkeypatch.setattr(_build, "ProcessPoolExecutor", Recording)
    docs = notes(40)
    got = list(build_contexts(docs, 30, workers=2, selector="lead"))
    assert [_comparable(c) for c in got] == [
        _comparable(build_context(d, 30, selector="lead")) for d in docs
    ]
    assert sum(sizes) == 40
    assert sizes[:4] == [8, 8, 8, 8]  # window 32: two chunks per worker in flight
    assert max(sizes[5:]) <= 2 and sizes[-1] == 1
