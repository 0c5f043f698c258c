"""The async API: the sync results, errors as the sync ones, and the loop kept free."""

from __future__ import annotations

import asyncio
import time

import pytest

from budgetctx import InputError, abuild_context, afit_messages, build_context, fit_messages
from tests.chat._agent_chat import agent_transcript

NOTE = " ".join(f"Visit {i}: potassium {3 + i % 2}.{i % 10} mmol/L, stable." for i in range(400))


def test_async_results_equal_the_sync_ones() -> None:
    msgs = agent_transcript(30)

    async def main() -> tuple[object, ...]:
        return tuple(
            await asyncio.gather(
                afit_messages(msgs, 1500),
                abuild_context(NOTE, 120, selector="mmr"),
            )
        )

    fit, ctx = asyncio.run(main())
    assert fit == fit_messages(msgs, 1500)
    assert ctx.text == build_context(NOTE, 120, selector="mmr").text  # type: ignore[attr-defined]


def test_errors_are_the_sync_ones() -> None:
    with pytest.raises(InputError, match="messages is empty"):
        asyncio.run(afit_messages([], 10))


def test_the_event_loop_keeps_running_during_a_selection() -> None:
    ticks: list[float] = []

    async def ticker(stop: asyncio.Event) -> None:
        while not stop.is_set():
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.005)

    async def main() -> float:
        stop = asyncio.Event()
        task = asyncio.create_task(ticker(stop))
        start = time.perf_counter()
        await abuild_context(NOTE * 4, 300, selector="mmr")
        took = time.perf_counter() - start
        stop.set()
        await task
        return took

    took = asyncio.run(main())
    # A blocking call would let the ticker run once; in a thread it keeps ticking.
    assert len(ticks) >= 3, (len(ticks), took)
