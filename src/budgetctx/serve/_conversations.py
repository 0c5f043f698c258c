"""Cache-stable condensing in the proxy: the last fit of each conversation, reused byte for
byte as the next request's prefix while it fits (:class:`budgetctx.chat._stable.StableFitter`).

A conversation is recognised by its opening (model, budget, and its first two messages): the
next request of the same conversation starts with the same messages and adds some. The cache
is a bounded LRU in the server's memory (``conversations_size`` entries; 0 turns it off), so
it holds request text as the in-memory provenance store does, and is lost at restart.

>>> cache = ConversationCache(size=2)
>>> key = cache.key("gpt-4o", 100, [{"role": "user", "content": "Hi"}])
>>> cache.get(key) is None
True
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from budgetctx import FittedMessages, InputError, count_message_tokens
from budgetctx.chat._stable import StableFitter
from budgetctx.serve._jobs import fit_job, load_tokenizer

__all__ = ["ConversationCache", "stable_fit_job"]

#: (the last input messages, the last fit)
State = tuple[list[dict[str, Any]], FittedMessages]


class ConversationCache:
    """A bounded LRU from a conversation's key to its last (input, fit)."""

    def __init__(self, *, size: int = 1000) -> None:
        self.size = size
        self._items: OrderedDict[str, State] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(model: str, budget: int | None, messages: Any) -> str:
        head = messages[:2] if isinstance(messages, list) else messages
        text = json.dumps([model, budget, head], ensure_ascii=False, sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get(self, key: str) -> State | None:
        with self._lock:
            state = self._items.get(key)
            if state is not None:
                self._items.move_to_end(key)
            return state

    def put(self, key: str, state: State) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._items[key] = state
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


def stable_fit_job(
    messages: Sequence[Mapping[str, Any]],
    budget: int | None,
    tokenizer: str,
    reserve: int,
    selector: str,
    tools: str | None,
    image_tokens: int | None,
    previous: State | None,
) -> tuple[int, FittedMessages | None, State | None]:
    """:func:`~budgetctx.serve._jobs.fit_job`, but reusing ``previous`` (the conversation's
    last fit) as the prefix while it fits, and refitting with headroom otherwise; also the
    state to remember (None: nothing to remember). ``tools`` (the definitions' JSON) are a
    fixed prefix: counted, and off the budget the messages get, as in ``fit_job``."""
    tok = load_tokenizer(tokenizer)
    fixed = tok.count(tools) if tools else 0
    if budget is None or budget - fixed <= reserve:  # fit_job answers (or names the error)
        before, fitted = fit_job(
            messages, budget, tokenizer, reserve, selector, tools, image_tokens
        )
        return before, fitted, None
    before = count_message_tokens(messages, tokenizer=tok, image_tokens=image_tokens) + fixed
    if previous is None and before <= budget - reserve:
        return before, None, None
    fitter = StableFitter(
        budget,
        tools=tools,
        tokenizer=tok,
        reserve=reserve,
        selector=selector,
        image_tokens=image_tokens,
    )
    if previous is not None:
        fitter.restore(*previous)
    try:
        fit = fitter.fit(messages)
    except InputError as exc:
        if exc.parameter != "budget":
            raise
        # only condensing the last user message too can fit it: fit_job's fallback
        before, fitted = fit_job(
            messages, budget, tokenizer, reserve, selector, tools, image_tokens
        )
        return before, fitted, None
    return before, fit, fitter.state
