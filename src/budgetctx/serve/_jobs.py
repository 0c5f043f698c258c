"""The selection work of a request, as top-level functions that a worker thread or a worker
process can run alike.

With ``selection_processes = N`` the server hands these jobs to N processes, so condensing
uses N cores instead of the one the event loop shares with every thread. Everything crossing
the process boundary is plain data: tokenizers travel as spec strings (each process builds
each tokenizer once), contexts come back as ``to_dict()``, and errors come back as
``("error", status, body, kind)`` because the library's exceptions do not all survive
pickling. :func:`call` is the one entry point, in a thread as in a process, so both paths
share their error handling.

>>> call(context_job, "Chest pain. Troponin negative.", 5, {"selector": "lead"}, None)[1]["text"]
'Chest pain.'
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from budgetctx import (
    BudgetCtxError,
    FittedMessages,
    InputError,
    Tokenizer,
    build_context,
    count_message_tokens,
    fit_messages,
    get_tokenizer,
)
from budgetctx.serve._logging import configure_logging
from budgetctx.serve._problems import ApiError, from_library

__all__ = [
    "call",
    "context_job",
    "contexts_job",
    "fit_job",
    "init_worker",
    "load_tokenizer",
    "warm_job",
]

Outcome = tuple[Any, ...]


@functools.lru_cache(maxsize=64)
def load_tokenizer(spec: str) -> Tokenizer:
    """A tokenizer built once per process: loading a vocabulary costs far more than a count."""
    return get_tokenizer(spec)


def call(fn: Callable[..., Any], *args: Any) -> Outcome:
    """``fn(*args)`` as ``("ok", result)``, ``("error", status, body, kind)`` for a refusal in
    the library's words, or ``("crash", class name)``: never an exception's message."""
    try:
        return ("ok", fn(*args))
    except ApiError as exc:
        return ("error", exc.status, exc.body(), exc.kind)
    except BudgetCtxError as exc:
        err = from_library(exc)
        return ("error", err.status, err.body(), err.kind)
    except Exception as exc:
        return ("crash", type(exc).__name__)


def context_job(
    documents: Any, budget: Any, options: Mapping[str, Any], tokenizer: str | None
) -> dict[str, Any]:
    """``build_context(...).to_dict()``; ``tokenizer`` is a spec the server has checked."""
    opts = dict(options)
    if tokenizer is not None:
        opts["tokenizer"] = load_tokenizer(tokenizer)
    return build_context(documents, budget, **opts).to_dict()


def contexts_job(items: list[tuple[Any, Any, Mapping[str, Any], str | None]]) -> list[Outcome]:
    """Each item's :func:`call` outcome, in order: one item's error does not stop the rest."""
    return [call(context_job, *item) for item in items]


def fit_job(
    messages: Any,
    budget: int | None,
    tokenizer: str,
    reserve: int,
    selector: str,
    tools: str | None = None,
    image_tokens: int | None = None,
) -> tuple[int, FittedMessages | None]:
    """The prompt's count, and the fitted messages when it is over the budget (else None).

    The system and last user messages stay verbatim unless nothing else can make the prompt
    fit (a single long user message, the usual shape of "summarise this note"): then the last
    user message is condensed too, with itself as the query. ``tools`` (the request's tool
    definitions as JSON) are counted as their text, an estimate, and come off the budget the
    messages get: the count returned includes them, the fitted messages' counts do not.
    """
    tok = load_tokenizer(tokenizer)
    fixed = tok.count(tools) if tools else 0
    if budget is None:
        return count_message_tokens(
            messages, tokenizer=tok, image_tokens=image_tokens
        ) + fixed, None
    if budget - fixed <= reserve:
        raise InputError(
            f"The request's tool definitions alone need {fixed} tokens, and the budget is "
            f"{budget} (reserve {reserve}); raise the budget or send fewer tools.",
            parameter="budget",
            value=budget,
        )
    options: dict[str, Any] = {
        "tokenizer": tok,
        "reserve": reserve,
        "selector": selector,
        "image_tokens": image_tokens,
    }
    # One call counts and fits (messages that fit come back unchanged, counted once). Only
    # when the verbatim part alone is over does a second call condense the last user message:
    # the first stops at that check, before anything is unitized or selected.
    try:
        fitted = fit_messages(messages, budget - fixed, **options)
    except InputError as exc:
        if exc.parameter != "budget":
            raise
        fitted = fit_messages(messages, budget - fixed, keep_last_user=False, **options)
    before = fitted.prompt_tokens_before + fixed
    return before, (None if before <= budget - reserve else fitted)


def init_worker(parent: int) -> None:
    """A worker process's set-up: the server's JSON logs (warnings by class only), and an exit
    as soon as the server process is gone, however it ended (a pool is not always shut down:
    SIGKILL, a crash)."""
    configure_logging(level=logging.WARNING)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="budgetctx-parent-watch", daemon=True).start()


def warm_job() -> int:
    """Import and build what a first request would (run once per worker process at start):
    a real note condensed both ways, so that no first request pays for an import."""
    from budgetctx.data import sample_note

    note = sample_note()
    context_job(note, 200, {}, "o200k_base")
    messages = [
        {"role": "user", "content": note},
        {"role": "user", "content": "What was the discharge diagnosis?"},
    ]
    return fit_job(messages, 300, "o200k_base", 0, "mmr")[0]
