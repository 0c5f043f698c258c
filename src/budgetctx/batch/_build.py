"""``build_contexts``: many documents, one configuration, in input order, optionally in a
process pool whose workers set the components up once."""

from __future__ import annotations

import inspect
import multiprocessing
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass
from typing import Any, Literal

from budgetctx._core.private_files import die_with_parent
from budgetctx._core.results import Context
from budgetctx._core.validation import (
    Constraint,
    InstanceOf,
    Interval,
    NoneOr,
    OneOf,
    Predicate,
    check,
    validate,
)
from budgetctx._errors import BudgetCtxError, InputError, InvalidParameterError
from budgetctx.build._options import BuildOptions, check_budget, check_reserve
from budgetctx.build._pins import check_pins
from budgetctx.build._pipeline import _build, _resolve_selector, build_context
from budgetctx.representations import get_representation
from budgetctx.tokenizers import get_tokenizer
from budgetctx.tokenizers._native import is_native_failure
from budgetctx.unitizers import get_unitizer

__all__ = ["ContextBuilder", "ItemError", "build_contexts", "item_id", "item_text"]

_OWNER = "build_contexts"


@dataclass(frozen=True)
class ItemError:
    """An item that could not be condensed (``on_error="record"``).

    ``message`` never contains the item's text: it says what was wrong and how to fix it.

    >>> ItemError(index=3, id="n-17", error="InputError", message="text is empty").to_dict()
    {'index': 3, 'id': 'n-17', 'error': 'InputError', 'message': 'text is empty'}
    """

    index: int
    id: str | None
    error: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def item_id(item: object, *, id_field: str = "id") -> str | None:
    """The id of an item: ``item[id_field]`` of a mapping, ``item.id`` of an object, else None."""
    raw = item.get(id_field) if isinstance(item, Mapping) else getattr(item, "id", None)
    return None if raw is None or isinstance(item, str) else str(raw)


def item_text(item: object, index: int, *, text_field: str = "text") -> object:
    """What to pass to ``build_context`` for one item.

    A str is the text itself; a mapping gives ``item[text_field]``; anything else (a future
    ``Document``) is passed unchanged, for ``build_context`` to accept or refuse.
    """
    if isinstance(item, Mapping):
        if text_field not in item:
            raise InputError(
                f"item {index} has no {text_field!r} field; name the field that holds the "
                "text with text_field=... (--text-field).",
                value=sorted(map(str, item))[:10],
            )
        return item[text_field]
    return item


def _accepted_options() -> frozenset[str]:
    params = inspect.signature(build_context).parameters.values()
    return frozenset(p.name for p in params if p.kind is p.KEYWORD_ONLY)


def _known_option(name: str) -> Predicate:
    return Predicate(
        lambda _: name in _accepted_options(),
        f"a keyword option of build_context ({', '.join(sorted(_accepted_options()))})",
        fix="pass only build_context's options through **options.",
    )


class ContextBuilder:
    """One configuration checked and set up once (tokenizer, unitizer, representation,
    selector), then called per document: what a pool worker, a Ray actor or an adapter holds.

    ``options`` (a :class:`~budgetctx.BuildOptions`) and the keyword options of
    :func:`~budgetctx.build_context` are taken as ``build_context`` takes them. Calling it
    checks nothing again: only a per-call ``budget`` or option change is checked.

    >>> builder = ContextBuilder(8, selector="lead")
    >>> print(builder("Chest pain. Troponin negative. Discharged home.").text)
    Chest pain.
    Troponin negative.
    """

    def __init__(
        self,
        budget: int,
        *,
        _probe: bool = True,
        options: BuildOptions | None = None,
        **keywords: Any,
    ) -> None:
        self.budget = check_budget(_OWNER, budget)
        for name in keywords:
            check(_OWNER, name, name, _known_option(name))
        opts = BuildOptions.merge(options, _OWNER, **keywords)
        check_reserve(self.budget, opts.reserve)
        # Resolved once here, as build_context would per call: "auto" becomes the router.
        self._selector = _resolve_selector(opts.selector, opts.selector_options)
        #: the checked options, with the components as the instances every call reuses
        self.options = opts.replace(
            tokenizer=get_tokenizer(opts.tokenizer),
            unitizer=get_unitizer(opts.unitizer, **dict(opts.unitizer_options or {})),
            unitizer_options=None,
            representation=get_representation(opts.representation),
        )
        # A probe: a value only a document can test (a header template, a tokenizer that
        # fails to count) fails here, once, not as an error on every item. Pool workers skip
        # it: the parent has probed the same options before forking them.
        if _probe:
            # Pins are checked for what they are, not run: on the probe a section pin would
            # match nothing (a warning) and a unit id could be out of range.
            check_pins(opts.pin)
            probe = self.options.replace(pin=None)
            ctx = _build(
                "Probe sentence one. Probe sentence two.", self.budget, probe, self._selector
            )
            # a probe that fits is only counted (issue 27's count-first exit): reading its
            # units runs the rest (the unitizer, the segments' counts) as it did before
            _ = ctx.units

    def __call__(self, document: Any) -> Context:
        """The context of ``document`` at the builder's budget."""
        return _build(document, self.budget, self.options, self._selector)

    def _call(self, document: Any, budget: int, **changes: Any) -> Context:
        """The context of ``document`` at ``budget`` (checked by the caller, e.g. an adapter
        taking a budget per request) with option ``changes`` (``query=...``) for this call."""
        opts = self.options.replace(**changes) if changes else self.options
        selector = self._selector
        if "selector" in changes or "selector_options" in changes:
            selector = _resolve_selector(opts.selector, opts.selector_options)
        check_reserve(budget, opts.reserve)
        return _build(document, budget, opts, selector)


_WORKER: dict[str, ContextBuilder] = {}


def _init_worker(budget: int, options: dict[str, Any], parent: int) -> None:
    # A SIGKILLed batch runs no pool shutdown: its workers must not outlive it (F13).
    die_with_parent(parent)
    _WORKER["builder"] = ContextBuilder(budget, _probe=False, **options)


# (index, id, document) of an item to condense, or the error of one that could not be read
_Entry = tuple[int, str | None, object] | ItemError


def _run_chunk(entries: list[_Entry]) -> list[Context | ItemError]:
    out: list[Context | ItemError] = []
    for entry in entries:
        if isinstance(entry, ItemError):  # its item could not even be read
            out.append(entry)
            continue
        index, ident, document = entry
        try:
            out.append(_WORKER["builder"](document))
        except BaseException as exc:
            if not _recordable(exc):
                raise
            out.append(_failure(index, ident, exc))
    return out


def _recordable(exc: BaseException) -> bool:
    """An item's own failure: any Exception, or a native one (a Rust panic is a
    BaseException), but never Ctrl-C or an exit."""
    return isinstance(exc, Exception) or is_native_failure(exc)


def _failure(index: int, ident: str | None, exc: BaseException) -> ItemError:
    if isinstance(exc, BudgetCtxError):
        message = str(exc)
    else:
        # A foreign exception's message may quote the document; say only what it was.
        message = (
            f"unexpected {type(exc).__name__} while condensing this item; please report it "
            "with the item id (the traceback is not shown because it may contain the text)"
        )
    return ItemError(index=index, id=ident, error=type(exc).__name__, message=message)


_CONSTRAINTS: Mapping[str, Constraint] = {
    "workers": NoneOr(Interval(int, 1), fix="e.g. workers=2 (None or 1: this process)."),
    "on_error": OneOf(("raise", "record"), fix="'record' yields an ItemError and goes on."),
    "window": NoneOr(Interval(int, 1), fix="e.g. window=64 items in flight."),
    "text_field": InstanceOf(str, "a str", fix="the key that holds each item's text."),
    "id_field": InstanceOf(str, "a str", fix="the key that holds each item's id."),
}


def build_contexts(
    items: Iterable[Any],
    budget: int,
    *,
    workers: int | None = None,
    on_error: Literal["raise", "record"] = "raise",
    window: int | None = None,
    text_field: str = "text",
    id_field: str = "id",
    **options: Any,
) -> Iterator[Context | ItemError]:
    """Condense every item, yielding one result per item in input order.

    Items are texts, mappings (``item[text_field]``, ``item[id_field]``) or anything
    :func:`~budgetctx.build_context` accepts; ``options`` go to it unchanged. ``workers > 1``
    runs a process pool whose workers set the components up once; at most ``window`` items
    (default ``16 * workers``) are in flight, so an endless iterable uses bounded memory. With
    ``on_error="record"`` a failing item yields an :class:`ItemError` instead of stopping; a
    bad option raises before any item is read, whatever ``on_error`` says.

    >>> notes = ["Chest pain. Troponin negative. Home.", {"id": "b", "text": "Fever. Cultures."}]
    >>> [c.text for c in build_contexts(notes, 4, selector="lead")]
    ['Chest pain.', 'Fever.']
    """
    settings = validate(
        _OWNER,
        _CONSTRAINTS,
        {
            "workers": workers,
            "on_error": on_error,
            "window": window,
            "text_field": text_field,
            "id_field": id_field,
        },
    )
    n_workers = settings["workers"] or 1
    if n_workers == 1:
        builder = ContextBuilder(budget, **options)
        return _serial(items, builder, on_error, text_field, id_field)
    # Fail in the caller, not in every worker, when the configuration is bad.
    ContextBuilder(budget, **options)
    return _pooled(
        items,
        budget,
        options,
        n_workers,
        settings["window"] or 16 * n_workers,
        on_error,
        text_field,
        id_field,
    )


def _serial(
    items: Iterable[Any], builder: ContextBuilder, on_error: str, text_field: str, id_field: str
) -> Iterator[Context | ItemError]:
    for index, item in enumerate(items):
        ident = item_id(item, id_field=id_field)
        result: Context | ItemError
        try:
            result = builder(item_text(item, index, text_field=text_field))
        except BaseException as exc:
            if on_error == "raise" or not _recordable(exc):
                exc.add_note(_naming(index, ident))
                raise
            result = _failure(index, ident, exc)
        yield result


def _naming(index: int, ident: str | None) -> str:
    return f"while condensing item {index}" + (f" (id {ident!r})" if ident is not None else "")


def _pooled(
    items: Iterable[Any],
    budget: int,
    options: dict[str, Any],
    workers: int,
    window: int,
    on_error: str,
    text_field: str,
    id_field: str,
) -> Iterator[Context | ItemError]:
    ctx = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")

    def new_pool() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=workers,
            mp_context=ctx,
            initializer=_init_worker,
            initargs=(budget, options, os.getpid()),
        )

    pool = new_pool()
    # Items travel in chunks: one task per item costs the parent ~1 ms of queue and pickling
    # work, a few % of a 2k-token context; two chunks per worker keep every worker busy.
    chunk = max(1, min(_MAX_CHUNK, window // (2 * workers)))
    queue: deque[tuple[list[_Entry], Future[list[Context | ItemError]]]] = deque()
    # Items read, not yet sent. One more than the window is read, so that the last items
    # are known to be the last before they are sent: they go in chunks that shrink (guided
    # self-scheduling), and the workers finish together instead of one idling while the other
    # does a whole chunk (with 40 items in chunks of 8, 24 against 16: at most 1.67x).
    unsent: deque[_Entry] = deque()
    source = enumerate(items)
    exhausted = False
    in_flight = 0
    try:
        while True:
            while not exhausted and in_flight + len(unsent) <= window:
                nxt = next(source, None)
                if nxt is None:
                    exhausted = True
                    break
                index, item = nxt
                ident = item_id(item, id_field=id_field)
                try:
                    unsent.append((index, ident, item_text(item, index, text_field=text_field)))
                except Exception as exc:
                    if on_error == "raise":
                        exc.add_note(_naming(index, ident))
                        raise
                    unsent.append(_failure(index, ident, exc))
            while unsent and (exhausted or len(unsent) > chunk) and in_flight < window:
                size = chunk if not exhausted else _tail_chunk(len(unsent), chunk, workers)
                entries = [unsent.popleft() for _ in range(min(size, len(unsent)))]
                queue.append((entries, pool.submit(_run_chunk, entries)))
                in_flight += len(entries)
            if not queue:
                return
            try:
                results = queue[0][1].result()
            except BrokenProcessPool:
                # A worker died (killed for memory, a crash in native code): every chunk in
                # flight is lost with it. Redo them one item at a time in a fresh pool, so
                # that the item that kills a worker is found and named, and go on.
                lost = [e for chunk_entries, _ in queue for e in chunk_entries]
                queue.clear()
                in_flight = 0
                pool.shutdown(wait=True, cancel_futures=True)
                pool, redone = _redo_one_by_one(lost, new_pool)
                for result in redone:
                    if isinstance(result, ItemError) and on_error == "raise":
                        raise _raised(result) from None
                    yield result
                continue
            entries_done, _ = queue.popleft()
            in_flight -= len(entries_done)
            for result in results:
                if isinstance(result, ItemError) and on_error == "raise":
                    raise _raised(result)
                yield result
    finally:
        for _, pending in queue:
            pending.cancel()
        pool.shutdown(wait=True, cancel_futures=True)


def _redo_one_by_one(
    entries: list[_Entry], new_pool: Callable[[], ProcessPoolExecutor]
) -> tuple[ProcessPoolExecutor, list[Context | ItemError]]:
    """Condense ``entries`` one per task in a fresh pool; an item whose worker dies again is
    an :class:`ItemError`. Returns the pool to go on with and the results in order."""
    pool = new_pool()
    out: list[Context | ItemError] = []
    for entry in entries:
        try:
            out.extend(pool.submit(_run_chunk, [entry]).result())
        except BrokenProcessPool:
            pool.shutdown(wait=True, cancel_futures=True)
            pool = new_pool()
            if isinstance(entry, ItemError):  # never run by a worker: not what killed it
                out.append(entry)
                continue
            index, ident, _ = entry
            out.append(
                ItemError(
                    index=index,
                    id=ident,
                    error="WorkerDied",
                    message=(
                        "the worker process died while condensing this item (killed, e.g. "
                        "for lack of memory, or a crash in native code); the batch went on "
                        "in a new worker. Give the workers more memory, or split the item."
                    ),
                )
            )
    return pool, out


_MAX_CHUNK = 8


def _tail_chunk(remaining: int, chunk: int, workers: int) -> int:
    """The size of the next chunk once the input is known to end after ``remaining`` items:
    a share of what is left per worker (halved again), so chunks shrink to one item.

    >>> [_tail_chunk(r, 8, 2) for r in (30, 8, 3, 1)]
    [8, 2, 1, 1]
    """
    return max(1, min(chunk, -(-remaining // (2 * workers))))


def _raised(error: ItemError) -> BaseException:
    kinds: dict[str, type[BudgetCtxError]] = {
        "InputError": InputError,
        "InvalidParameterError": InvalidParameterError,
    }
    kind = kinds.get(error.error)
    exc: BaseException = (
        kind(error.message)
        if kind is not None
        else _ItemFailedError(f"{error.error}: {error.message}")
    )
    exc.add_note(_naming(error.index, error.id))
    return exc


class _ItemFailedError(BudgetCtxError):
    """An item failed in a worker with an error that is not one of budgetctx's input errors."""
