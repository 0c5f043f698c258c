"""StableFitter: the budget holds every turn, the last output is reused byte for byte while it
fits, and more of each prompt stays a cacheable prefix than re-fitting every turn."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx import InputError, count_message_tokens, fit_messages
from budgetctx.chat import StableFitter
from budgetctx.tokenizers import get_tokenizer
from tests.chat._agent_chat import TOOLS, agent_transcript


def _requests(turns: int) -> list[list[dict[str, Any]]]:
    full = agent_transcript(turns)
    return [full[: i + 1] for i, m in enumerate(full) if m["role"] == "user"]


def _prefix(prev: list[dict[str, Any]], cur: list[dict[str, Any]]) -> int:
    n = 0
    for a, b in zip(prev, cur, strict=False):
        if json.dumps(a, sort_keys=True) != json.dumps(b, sort_keys=True):
            break
        n += 1
    return n


def test_budget_holds_and_the_prefix_is_reused() -> None:
    fitter = StableFitter(800, headroom=0.3)
    prompts = []
    for req in _requests(20):
        fit = fitter.fit(req)
        out = list(fit.messages)
        assert fit.prompt_tokens == count_message_tokens(out) <= 800
        assert out[-1] == req[-1]  # the question, verbatim
        if fit.notes and fit.notes[0].startswith("stable prefix"):
            assert out[: len(prompts[-1])] == prompts[-1]  # byte for byte
        prompts.append(out)
    reused = sum(_prefix(a, b) == len(a) for a, b in itertools.pairwise(prompts))
    assert reused >= 10  # most turns append to the last prompt


def test_more_is_cacheable_than_refitting_every_turn() -> None:
    requests = _requests(20)
    fitter = StableFitter(800)
    stable = [list(fitter.fit(r).messages) for r in requests]
    refit = [list(fit_messages(r, 800).messages) for r in requests]

    def share(prompts: list[list[dict[str, Any]]]) -> float:
        cached = sum(
            count_message_tokens(b[: _prefix(a, b)]) if _prefix(a, b) else 0
            for a, b in itertools.pairwise(prompts)
        )
        return cached / sum(count_message_tokens(p) for p in prompts[1:])

    assert share(stable) > share(refit) + 0.2


def test_a_changed_history_is_fitted_again() -> None:
    requests = _requests(6)
    fitter = StableFitter(10_000)
    fitter.fit(requests[3])
    edited = [dict(m) for m in requests[4]]
    edited[1] = {**edited[1], "content": "A different first question."}
    fit = fitter.fit(edited)
    assert list(fit.messages) == edited  # fits whole: sent as is, not the stale prefix
    assert not fit.notes[0].startswith("stable prefix")


def test_bad_settings() -> None:
    with pytest.raises(ValueError, match="headroom"):
        StableFitter(100, headroom=1.0)


def test_tools_are_a_fixed_prefix_off_the_budget() -> None:
    fitter = StableFitter(900, headroom=0.3, tools=TOOLS)
    tools_tokens = get_tokenizer("o200k_base").count(json.dumps(TOOLS, ensure_ascii=False))
    assert fitter.tools_tokens == tools_tokens > 100
    assert StableFitter(900, tools=json.dumps(TOOLS)).tools_tokens == tools_tokens
    prompts = []
    for req in _requests(20):
        fit = fitter.fit(req)
        out = list(fit.messages)
        assert count_message_tokens(out) + tools_tokens <= 900
        prompts.append(out)
    reused = sum(_prefix(a, b) == len(a) for a, b in itertools.pairwise(prompts))
    assert reused >= 10
    # the refit every turn that the proxy did with tools keeps far less as a prefix
    refit = [list(fit_messages(r, 900 - tools_tokens).messages) for r in _requests(20)]
    assert reused > sum(_prefix(a, b) == len(a) for a, b in itertools.pairwise(refit)) + 5


def test_tools_larger_than_the_budget_are_refused() -> None:
    with pytest.raises(InputError, match=r"tool definitions alone need \d+ tokens"):
        StableFitter(50, tools=TOOLS)


@settings(max_examples=12, deadline=None)
@given(
    st.integers(0, 10_000),
    st.integers(1, 4),
    st.integers(500, 2500),
    st.booleans(),
    st.floats(0.0, 0.5),
)
def test_every_turn_fits_with_or_without_tools(
    seed: int, rows: int, budget: int, tools: bool, headroom: float
) -> None:
    full = agent_transcript(12, seed=seed, rows=rows)
    requests = [full[: i + 1] for i, m in enumerate(full) if m["role"] == "user"]
    fitter = StableFitter(budget, headroom=headroom, tools=TOOLS if tools else None)
    previous: list[dict[str, Any]] | None = None
    for req in requests:
        fit = fitter.fit(req)
        out = list(fit.messages)
        assert count_message_tokens(out) + fitter.tools_tokens <= budget
        assert out[-1] == req[-1]
        if previous is not None and fit.notes and fit.notes[0].startswith("stable prefix"):
            assert out[: len(previous)] == previous
        previous = out
