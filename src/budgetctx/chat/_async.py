"""Async twin of :func:`~budgetctx.fit_messages`, run in a worker thread for the reason given
in ``budgetctx.build._async``."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping, Sequence
from typing import Any

from budgetctx.chat._messages import FittedMessages, fit_messages

__all__ = ["afit_messages"]


async def afit_messages(
    messages: Sequence[Mapping[str, Any]], budget: int, /, **options: Any
) -> FittedMessages:
    """``await afit_messages(messages, budget, ...)``: :func:`~budgetctx.fit_messages` in a
    worker thread; same arguments, same result.

    >>> import asyncio
    >>> msgs = [{"role": "user", "content": "Hello."}]
    >>> asyncio.run(afit_messages(msgs, 100)).prompt_tokens
    9
    """
    return await asyncio.to_thread(functools.partial(fit_messages, messages, budget, **options))
