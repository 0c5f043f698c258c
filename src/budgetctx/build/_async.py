"""Async twin of :func:`~budgetctx.build_context` (the chat twin is in ``budgetctx.chat``).

Selection is CPU work in Python and numpy: there is nothing to await inside it, so the async
API runs the same function in a worker thread (``asyncio.to_thread``). The event loop keeps
serving other requests meanwhile; the result, the errors and the budget contract are those of
the sync function, argument for argument. numpy and the BPE encoders release the GIL for
part of the work, so a few concurrent selections overlap; for more throughput, run selection
in processes (``budgetctx serve --selection-processes N`` does).

>>> import asyncio
>>> ctx = asyncio.run(abuild_context("Chest pain. Troponin negative. Discharged home.", 6))
>>> ctx.tokens_used <= 6
True
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from budgetctx._core.results import Context
from budgetctx.build._pipeline import build_context

__all__ = ["abuild_context"]


async def abuild_context(text: Any, budget: int, /, **options: Any) -> Context:
    """``await abuild_context(text, budget, ...)``: :func:`~budgetctx.build_context` in a
    worker thread; same arguments, same result."""
    return await asyncio.to_thread(functools.partial(build_context, text, budget, **options))
