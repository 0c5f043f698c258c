"""Chat messages fitted to a budget: counting as the model's API does, the history strategy,
structural shrinking of JSON tool results, and cache-stable condensing across turns.

Where a change belongs: counting, parsing and the fitting loop in ``_messages``; which turns
are kept or condensed in ``_history``; JSON as units in ``_json_units``; reuse of the last
fit as the next request's prefix in ``_stable``; the async twin in ``_async``.

>>> from budgetctx.chat import fit_messages
>>> fit_messages([{"role": "user", "content": "Hello."}], 100).prompt_tokens
9
"""

from __future__ import annotations

from budgetctx.chat._async import afit_messages
from budgetctx.chat._messages import (
    FittedMessages,
    MessageProvenance,
    count_message_tokens,
    fit_messages,
)
from budgetctx.chat._stable import StableFitter

__all__ = [
    "FittedMessages",
    "MessageProvenance",
    "StableFitter",
    "afit_messages",
    "count_message_tokens",
    "fit_messages",
]
