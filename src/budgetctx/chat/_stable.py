"""Condensing that keeps provider prompt caches warm across the turns of one conversation.

OpenAI and Anthropic bill a prompt prefix they have seen recently at a fraction of the price,
but only byte for byte. :func:`~budgetctx.fit_messages` on each turn alone re-selects the
history every time (the query moves, the room moves, the oldest kept turn moves), so the
prefix changes and the cache is lost. :class:`StableFitter` remembers the last fit of the
conversation:

- when the new messages extend the last input (same messages, more at the end) and the last
  *output* plus the new messages verbatim still fit, that output is reused byte for byte as
  the prefix: nothing before the new messages changes;
- otherwise it fits again, to ``budget * (1 - headroom)``, so that the next turns have room
  to be appended before the next refit (falling back to the full budget when the smaller one
  cannot be met).
- ``tools`` (the request's tool definitions) are a fixed prefix that providers put before the
  messages: they are counted as their JSON text with the fit's tokenizer (an estimate: no
  provider publishes the rule) and come off the budget; the messages get the rest, so the
  condensed history stays stable under them too. ``prompt_tokens`` counts the messages only.

>>> from budgetctx import count_message_tokens
>>> fitter = StableFitter(400, model="gpt-4o")
>>> chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi."}]
>>> first = fitter.fit(chat)
>>> second = fitter.fit(chat + [{"role": "assistant", "content": "Hello."},
...                             {"role": "user", "content": "Bye."}])
>>> second.messages[:2] == first.messages, second.notes[0].startswith("stable prefix")
(True, True)
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from budgetctx._core.validation import Interval, check
from budgetctx._errors import InputError
from budgetctx.chat._messages import FittedMessages, _tokenizer, count_message_tokens, fit_messages

__all__ = ["StableFitter"]

#: fit_messages options that also decide how messages are counted.
_COUNT_OPTIONS = ("model", "tokenizer", "image_tokens")


class StableFitter:
    """:func:`~budgetctx.fit_messages` for the successive requests of one conversation,
    reusing the last condensed output byte for byte as the prefix while it fits, so that
    provider prompt caches stay warm (see the module's notes). ``options`` are
    ``fit_messages``' own. Not thread-safe: one fitter per conversation.

    >>> fitter = StableFitter(1500, model="gpt-4o", tools=[{"type": "function",
    ...     "function": {"name": "lookup_lab", "parameters": {"type": "object"}}}])
    >>> chat = [{"role": "user", "content": "Potassium today?"}]
    >>> fit = fitter.fit(chat)
    >>> fit.prompt_tokens + fitter.tools_tokens <= 1500
    True
    """

    def __init__(
        self, budget: int, *, headroom: float = 0.25, tools: Any = None, **options: Any
    ) -> None:
        self.budget: int = check("StableFitter", "budget", budget, Interval(int, 1, None))
        self.headroom: float = check(
            "StableFitter", "headroom", headroom, Interval(float, 0, 1, closed="left")
        )
        self.options = dict(options)
        #: what the tool definitions cost, off the budget before the messages are fitted
        self.tools_tokens = 0
        if tools:
            text = tools if isinstance(tools, str) else json.dumps(tools, ensure_ascii=False)
            tok = _tokenizer("StableFitter", options.get("model"), options.get("tokenizer"))
            self.tools_tokens = tok.count(text)
        reserve = int(self.options.get("reserve", 0))
        if self.budget - self.tools_tokens <= reserve:
            raise InputError(
                f"The tool definitions alone need {self.tools_tokens} tokens, and the budget is "
                f"{self.budget} (reserve {reserve}); raise the budget or send fewer tools.",
                parameter="budget",
                value=self.budget,
            )
        self._input: list[dict[str, Any]] = []
        self._last: FittedMessages | None = None

    @property
    def _room(self) -> int:
        """The budget the messages get: the budget less the tool definitions."""
        return self.budget - self.tools_tokens

    def _count(self, messages: Sequence[Mapping[str, Any]]) -> int:
        opts = {k: self.options[k] for k in _COUNT_OPTIONS if k in self.options}
        return count_message_tokens(messages, **opts)

    def fit(self, messages: Sequence[Mapping[str, Any]]) -> FittedMessages:
        """The fitted messages of this turn (``prompt_tokens <= budget - reserve``)."""
        limit = self._room - int(self.options.get("reserve", 0))
        last, n = self._last, len(self._input)
        if last is not None and len(messages) >= n and list(messages[:n]) == self._input:
            new = [copy.deepcopy(dict(m)) for m in messages[n:]]
            candidate = [*last.messages, *new]
            tokens = self._count(candidate)
            if tokens <= limit:
                before = self._count(messages)
                kept = len(last.messages)
                fit = replace(
                    last,
                    messages=tuple(candidate),
                    prompt_tokens=tokens,
                    prompt_tokens_before=before,
                    notes=(
                        f"stable prefix: the last fit's {kept} messages reused byte for byte, "
                        f"{len(new)} new messages appended verbatim",
                    ),
                )
                self._remember(messages, fit)
                return fit
        fit = self._refit(messages)
        self._remember(messages, fit)
        return fit

    def _refit(self, messages: Sequence[Mapping[str, Any]]) -> FittedMessages:
        room = self._room
        target = max(1, math.floor(room * (1 - self.headroom)))
        reserve = int(self.options.get("reserve", 0))
        if target > reserve and target < room:
            try:
                fit = fit_messages(messages, target, **self.options)
                return replace(fit, budget=room)
            except InputError as exc:
                if exc.parameter != "budget":
                    raise
        return fit_messages(messages, room, **self.options)

    @property
    def state(self) -> tuple[list[dict[str, Any]], FittedMessages] | None:
        """The last input and its fit (None before the first), to :meth:`restore` later."""
        return None if self._last is None else (self._input, self._last)

    def restore(self, messages: Sequence[Mapping[str, Any]], fit: FittedMessages) -> None:
        """Continue a conversation from a saved :attr:`state` (a server keeps one per
        conversation, and builds a fitter per request)."""
        self._remember(messages, fit)

    def _remember(self, messages: Sequence[Mapping[str, Any]], fit: FittedMessages) -> None:
        self._input = [copy.deepcopy(dict(m)) for m in messages]
        self._last = fit
