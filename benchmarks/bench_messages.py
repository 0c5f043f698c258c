"""fit_messages on a 60-turn agent transcript: latency and tokens kept; and how much of each
turn's prompt stays a cacheable prefix of the turn before, re-fitting every turn
(``fit_messages``) against reusing the last fit (``StableFitter``), without and with
``tools=`` definitions (which the proxy refitted every turn before).

The transcript (tests/chat/_agent_chat.py) has, per turn, a user question, an assistant tool call,
a JSON tool result and the assistant's answer. Run::

    PYTHONPATH=src:. python benchmarks/bench_messages.py [--turns 60] [--budgets 1500 3000]

Cacheable prefix: providers cache a prompt prefix they saw recently, byte for byte. For turn
t the prefix counted is the leading run of messages equal to turn t-1's prompt (whole
messages, counted by the cookbook formula: a slight underestimate of the token-level prefix,
the same for both). Share = sum of those prefix tokens / sum of prompt tokens, turns 2..T.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.chat._agent_chat import TOOLS, agent_transcript

from budgetctx import count_message_tokens, fit_messages
from budgetctx.chat._stable import StableFitter


def _prefix_tokens(prev: list[dict[str, Any]], cur: list[dict[str, Any]]) -> int:
    n = 0
    for a, b in zip(prev, cur, strict=False):
        if json.dumps(a, sort_keys=True) != json.dumps(b, sort_keys=True):
            break
        n += 1
    return count_message_tokens(cur[:n]) - 3 if n else 0  # not the reply priming


def cache_share(turns: int, budget: int, *, tools: bool = False) -> dict[str, float]:
    """With ``tools``, every request also sends TOOLS: a fixed prefix the provider puts before
    the messages, so it is counted in both the prompt and the cached prefix; "refit every
    turn" is then what the proxy did before (fit_job: the messages refitted to the budget less
    the tools' tokens each turn)."""
    full = agent_transcript(turns)
    # the request at turn t: everything up to and including the t-th user question
    users = [i for i, m in enumerate(full) if m["role"] == "user"]
    requests = [full[: i + 1] for i in users]
    fixed = StableFitter(budget, tools=TOOLS).tools_tokens if tools else 0
    out: dict[str, float] = {}
    for name in ("refit every turn", "StableFitter"):
        fitter = StableFitter(budget, tools=TOOLS if tools else None)
        prompts: list[list[dict[str, Any]]] = []
        ms: list[float] = []
        for req in requests:
            t0 = time.perf_counter()
            stable = name == "StableFitter"
            fit = fitter.fit(req) if stable else fit_messages(req, budget - fixed)
            ms.append((time.perf_counter() - t0) * 1000)
            assert fit.prompt_tokens + fixed <= budget
            prompts.append(list(fit.messages))
        total = sum(fixed + count_message_tokens(p) for p in prompts[1:])
        cached = sum(fixed + _prefix_tokens(a, b) for a, b in itertools.pairwise(prompts))
        messages_only = sum(count_message_tokens(p) for p in prompts[1:])
        out[name] = cached / total
        out[name + " messages only"] = (cached - fixed * (len(prompts) - 1)) / messages_only
        out[name + " ms/turn"] = statistics.median(ms)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--budgets", type=int, nargs="+", default=[1500, 3000])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    msgs = agent_transcript(args.turns)
    before = count_message_tokens(msgs)
    print(f"transcript: {args.turns} turns, {len(msgs)} messages, {before} prompt tokens")
    print(f"load average: {os.getloadavg()[0]:.2f}")
    fit_messages(msgs, args.budgets[0])  # warm: imports, tokenizer
    print("\nbudget | median ms | p95 ms | prompt tokens | turns dropped | messages condensed")
    for budget in args.budgets:
        times = []
        fit = None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            fit = fit_messages(msgs, budget)
            times.append((time.perf_counter() - t0) * 1000)
        assert fit is not None
        times.sort()
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        dropped_turns = sum(1 for i in fit.dropped if msgs[i]["role"] == "user")
        print(
            f"{budget:6d} | {statistics.median(times):9.1f} | {p95:6.1f} | "
            f"{fit.prompt_tokens:6d} / {budget} | {dropped_turns:13d} | {len(fit.compressed)}"
        )
    print("\ncacheable prefix share over the conversation (turns 2..T)")
    for tools in (False, True):
        for budget in args.budgets:
            share = cache_share(args.turns, budget, tools=tools)
            label = "with tools=" if tools else "no tools"
            extra = (
                f" [messages only: {share['refit every turn messages only']:.1%} -> "
                f"{share['StableFitter messages only']:.1%}]"
                if tools
                else ""
            )
            print(
                f"{label} budget {budget}: refit every turn {share['refit every turn']:.1%} "
                f"({share['refit every turn ms/turn']:.0f} ms/turn), StableFitter "
                f"{share['StableFitter']:.1%} ({share['StableFitter ms/turn']:.0f} ms/turn)" + extra
            )
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
