"""Chats as agents send them: long histories (whole turns dropped oldest first), tool calls
kept with their results, JSON tool results that still parse, code blocks and tables whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budgetctx import InputError, count_message_tokens, fit_messages
from budgetctx.chat._history import split_turns
from budgetctx.chat._json_units import NOTE_KEY, condense_json
from budgetctx.tokenizers import get_tokenizer
from budgetctx.unitizers import get_unitizer
from tests.chat._agent_chat import SYSTEM, agent_transcript

TOK = get_tokenizer("o200k_base")


def _orphans(messages: list[dict[str, Any]]) -> list[int]:
    """Positions of tool results whose call is not in an earlier kept assistant message."""
    calls: set[str] = set()
    bad = []
    for i, m in enumerate(messages):
        for c in m.get("tool_calls") or ():
            calls.add(c["id"])
        if m["role"] == "tool" and m.get("tool_call_id") not in calls:
            bad.append(i)
    return bad


def _first_kept_turn_role(messages: list[dict[str, Any]]) -> str | None:
    rest = [m["role"] for m in messages if m["role"] not in ("system", "developer")]
    return rest[0] if rest else None


def test_a_60_turn_agent_chat_fits_1500_tokens() -> None:
    msgs = agent_transcript(60)
    before = count_message_tokens(msgs)
    assert before > 5000  # a long history: condensing the user/tool texts alone cannot fit it
    with pytest.raises(InputError, match="cannot be condensed"):
        fit_messages(msgs, 1500, history="keep")
    fit = fit_messages(msgs, 1500)
    out = list(fit.messages)
    assert fit.prompt_tokens == count_message_tokens(out) <= 1500
    assert fit.prompt_tokens_before == before
    assert out[0] == {"role": "system", "content": SYSTEM}
    assert out[-1] == msgs[-1]  # the question, verbatim
    assert fit.dropped and fit.dropped == tuple(range(1, 1 + len(fit.dropped)))  # oldest first
    assert _orphans(out) == []
    assert _first_kept_turn_role(out) == "user"
    assert fit.notes[0].startswith("history: dropped the")
    for m in out:
        if m["role"] == "tool":
            json.loads(m["content"])
    # provenance indices are the input's
    assert all(msgs[p.index]["role"] in ("user", "tool") for p in fit.compressed)
    assert len(fit.sources) == len(out) and set(fit.sources).isdisjoint(fit.dropped)


def test_keep_turns_protects_the_last_turns() -> None:
    msgs = agent_transcript(10)
    budget = count_message_tokens(msgs[:1] + msgs[-8:]) + 40
    fit = fit_messages(msgs, budget, keep_turns=2)
    out = list(fit.messages)
    # the last turn and the whole turn before it are there (condensed, maybe, never dropped)
    assert [m["role"] for m in out[-5:]] == ["user", "assistant", "tool", "assistant", "user"]
    assert out[-4]["tool_calls"] == msgs[-4]["tool_calls"]
    assert out[-3]["tool_call_id"] == msgs[-3]["tool_call_id"]
    assert len(fit.sources) < len(msgs)
    assert fit.prompt_tokens <= budget
    with pytest.raises(InputError, match="cannot be condensed"):
        fit_messages(msgs, 60, keep_turns=10)


def test_a_long_document_in_the_current_turn_is_condensed_not_dropped() -> None:
    note = " ".join(f"Visit {i}: potassium {3 + i % 2}.{i % 10} mmol/L, stable." for i in range(80))
    msgs = [
        {"role": "system", "content": "Answer from the note."},
        {"role": "user", "content": note},
        {"role": "user", "content": "What was the potassium at visit 7?"},
    ]
    fit = fit_messages(msgs, 200)
    assert fit.dropped == ()
    assert fit.compressed[0].index == 1
    assert "Visit 7:" in fit.messages[1]["content"]


def test_turns_never_split_a_tool_call_from_its_result() -> None:
    msgs: list[dict[str, Any]] = [
        {"role": "system", "content": "s"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "x"}, {"id": "y"}]},
        {"role": "tool", "tool_call_id": "x", "content": "1"},
        {"role": "user", "content": "interjection"},  # before y answered: same turn
        {"role": "tool", "tool_call_id": "y", "content": "2"},
        {"role": "user", "content": "b"},  # right after a tool result: the same exchange
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "c"},
        {"role": "user", "content": "d"},
    ]
    assert split_turns(msgs) == [[1], [2, 3, 4, 5, 6, 7, 8], [9, 10]]


def test_condensed_json_is_valid_and_says_what_was_left_out() -> None:
    data = {
        "query": "potassium",
        "results": [
            {"id": i, "text": f"Potassium {3 + i / 10:.1f} on day {i}."} for i in range(50)
        ],
    }
    text = json.dumps(data)
    out, note = condense_json(text, 120, TOK.count)
    assert TOK.count(out) <= 120
    got = json.loads(out)
    assert got["query"] == "potassium"
    assert got["results"] == data["results"][: len(got["results"])]  # whole items, in order
    assert 0 < len(got["results"]) < 50
    assert got[NOTE_KEY] == note and "of 50 items of $.results" in note
    # a top-level array keeps its items' shape and ends on the note
    out, note = condense_json(json.dumps(data["results"]), 60, TOK.count)
    items = json.loads(out)
    assert items[-1] == note and all(isinstance(x, dict) for x in items[:-1])
    # long strings are cut, then members dropped, and at worst the skeleton is left
    long = json.dumps({"a": "word " * 500, "b": "x"})
    out, note = condense_json(long, 40, TOK.count)
    assert TOK.count(out) <= 40 and json.loads(out)["a"].endswith("…") and "long strings" in note
    assert condense_json(long, 1, TOK.count)[0] == "{}"


@pytest.mark.parametrize("budget", [1, 5, 20, 80, 400])
def test_condense_json_budget_holds(budget: int) -> None:
    data = [{"k": [1, 2, {"deep": ["x" * 30] * 5}], "s": "y" * 200} for _ in range(10)]
    out, _ = condense_json(json.dumps(data), budget, TOK.count)
    json.loads(out)
    assert TOK.count(out) <= max(budget, TOK.count("[]"))


def test_code_blocks_and_tables_are_never_cut() -> None:
    code = "```python\ndef f(x):\n    return x + 1.  # one. two.\n```"
    table = "| test | value |\n|---|---|\n| K | 3.1 |\n| Na | 138 |"
    text = f"Here is the code. It adds one.\n{code}\nAnd the labs.\n{table}\nThat is all."
    units = get_unitizer("blocks").unitize(text).units
    blocks = [u for u in units if u.kind == "block"]
    assert [text[u.spans[0][0] : u.spans[0][1]] for u in blocks] == [code, table]
    msgs = [
        {"role": "tool", "content": text * 4},
        {"role": "user", "content": "What does the code do?"},
    ]
    budget = count_message_tokens(msgs) - 60
    fit = fit_messages(msgs, budget)
    kept = fit.messages[0]["content"]
    assert fit.prompt_tokens <= budget
    # every code block or table present is present whole
    assert kept.count("```") % 2 == 0
    for line in kept.splitlines():
        if line.startswith("|"):
            assert line in table.splitlines()
    assert kept.count("| test | value |") == kept.count("| Na | 138 |")


# --- the property: long histories, tool calls, JSON tool results ---------------------------

_SENTENCES = [
    "Chest pain at rest.",
    "Troponin negative twice.",
    "Potassium 3.1, repleted.",
    "Café au lait spots noted.",
    "日本 visitor, 🙂 cooperative.",
    "",
]


@st.composite
def agent_chats(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if draw(st.booleans()):
        out.append({"role": "system", "content": draw(st.sampled_from(_SENTENCES[:3]))})
    n = 0
    for _ in range(draw(st.integers(0, 12))):
        text = " ".join(draw(st.lists(st.sampled_from(_SENTENCES), min_size=1, max_size=6)))
        out.append({"role": "user", "content": text})
        for _ in range(draw(st.integers(0, 2))):
            n += 1
            call = {"id": f"c{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            out.append({"role": "assistant", "content": None, "tool_calls": [call]})
            if draw(st.booleans()):
                rows = draw(st.lists(st.sampled_from(_SENTENCES), max_size=12))
                result = json.dumps({"rows": [{"note": r, "n": i} for i, r in enumerate(rows)]})
            else:
                result = " ".join(draw(st.lists(st.sampled_from(_SENTENCES), max_size=8)))
            out.append({"role": "tool", "tool_call_id": f"c{n}", "content": result})
        if draw(st.booleans()):
            out.append({"role": "assistant", "content": draw(st.sampled_from(_SENTENCES))})
    out.append({"role": "user", "content": draw(st.sampled_from(_SENTENCES[:3]))})
    return out


@pytest.mark.filterwarnings("ignore::budgetctx.BudgetCtxWarning")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(agent_chats(), st.integers(20, 900), st.integers(1, 3))
def test_agent_chat_property(msgs: list[dict[str, Any]], budget: int, keep_turns: int) -> None:
    try:
        fit = fit_messages(msgs, budget, keep_turns=keep_turns)
    except InputError as exc:
        assert exc.parameter == "budget" and "cannot be condensed" in str(exc)
        # only when the protected part alone is over: system + the last turns' fixed parts
        return
    out = list(fit.messages)
    assert fit.prompt_tokens == count_message_tokens(out) <= budget
    assert out[-1] == msgs[-1]  # the last user message, verbatim
    for i, m in enumerate(msgs):
        if m["role"] == "system":
            assert i not in fit.dropped and out[fit.sources.index(i)] == m
    assert _orphans(out) == []
    if fit.dropped:
        assert _first_kept_turn_role(out) == "user"
    for i, m in zip(fit.sources, out, strict=True):
        original = msgs[i]["content"]
        if m["role"] == "tool" and isinstance(original, str) and original.startswith("{"):
            assert isinstance(json.loads(m["content"]), dict)  # still JSON, same kind


def test_no_more_turns_are_dropped_than_needed() -> None:
    # With one turn fewer dropped, condensing alone either cannot fit the rest, or has to
    # shrink the condensable text more than MAX_SHRINK times.
    from budgetctx.chat._history import MAX_SHRINK

    msgs = agent_transcript(30)
    fit = fit_messages(msgs, 1200)
    turns = split_turns(msgs)
    dropped_turns = [t for t in turns if set(t) <= set(fit.dropped)]
    assert dropped_turns == turns[: len(dropped_turns)] and dropped_turns  # oldest, whole
    gone = {i for t in dropped_turns[:-1] for i in t}
    fewer = [m for i, m in enumerate(msgs) if i not in gone]
    try:
        refit = fit_messages(fewer, 1200, history="keep")
    except InputError:
        return
    before = sum(p.tokens_before for p in refit.compressed)
    after = sum(p.tokens_after for p in refit.compressed)
    assert before > MAX_SHRINK * after


def test_cli_history_flags_pass_through(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from budgetctx.cli import app

    runner = CliRunner()
    msgs = agent_transcript(20)
    chat_file = tmp_path / "chat.json"
    chat_file.write_text(json.dumps(msgs), encoding="utf-8")
    base = ["fit-messages", str(chat_file), "--budget", "1500", "--json"]
    for extra, keep_turns in (([], 1), (["--keep-turns", "4"], 4)):
        result = runner.invoke(app, [*base, *extra])
        assert result.exit_code == 0, result.output
        got = json.loads(result.stdout)
        expected = fit_messages(msgs, 1500, keep_turns=keep_turns)
        assert got["dropped"] == list(expected.dropped) and got["dropped"]
        assert got["messages"] == list(expected.messages)
        assert "dropped messages" in result.stderr
    kept_by_four = json.loads(runner.invoke(app, [*base, "--keep-turns", "4"]).stdout)
    last_four = [i for turn in split_turns(msgs)[-4:] for i in turn]
    assert not set(kept_by_four["dropped"]) & set(last_four)
    # --history keep drops nothing: this history cannot fit 1,500 tokens that way
    refused = runner.invoke(app, [*base, "--history", "keep"])
    assert refused.exit_code != 0 and "budget" in refused.output
    bad = runner.invoke(app, [*base, "--history", "oldest"])
    assert bad.exit_code != 0 and "history" in bad.output and "'auto'" in bad.output
    bad = runner.invoke(app, [*base, "--keep-turns", "0"])
    assert bad.exit_code != 0 and "keep_turns" in bad.output
