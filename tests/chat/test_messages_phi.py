"""F11/F12: a bad chat never has its text quoted in an error (messages are printed by the CLI
and logged by services), and deep tool_calls are an InputError, not a RecursionError."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from budgetctx import InputError, count_message_tokens, fit_messages
from budgetctx.cli import app

PHI = "Patient ZQXPHI123 DOB 1950-01-01"


def _deep(n: int) -> Any:
    value: Any = "x"
    for _ in range(n):
        value = [value]
    return value


BAD: dict[str, list[Any]] = {
    "unknown-part-type": [{"role": "user", "content": [{"type": "foo", "text": PHI}]}],
    "part-type-is-text": [{"role": "user", "content": [{"type": PHI}]}],
    "part-is-a-str": [{"role": "user", "content": [PHI]}],
    "part-without-type": [{"role": "user", "content": [{"text": PHI}]}],
    "role-is-text": [{"role": PHI, "content": "x"}],
    "field-name-is-text": [{"role": "user", "content": "x", PHI: {"a": {1, 2}}}],
    "tool-calls-not-json": [{"role": "assistant", "content": None, "tool_calls": [{PHI}]}],
    "content-is-bytes": [{"role": "user", "content": PHI.encode()}],
    "content-is-a-dict": [{"role": "user", "content": {"text": PHI}}],
    "message-is-a-str": [PHI],
    "deep-tool-calls": [{"role": "assistant", "content": None, "tool_calls": _deep(1500)}],
}


@pytest.mark.parametrize("messages", BAD.values(), ids=BAD.keys())
def test_errors_name_position_and_type_never_the_text(messages: list[Any]) -> None:
    for call in (
        lambda: count_message_tokens(messages),
        lambda: fit_messages([*messages, {"role": "user", "content": "Summarise."}], 30),
    ):
        with pytest.raises(InputError) as info:
            call()
        assert "ZQXPHI123" not in str(info.value)
        assert "ZQXPHI123" not in repr(info.value.value)
        assert "messages[0]" in str(info.value)


def test_a_binary_text_to_condense_is_refused_without_quoting_it() -> None:
    messages = [{"role": "user", "content": (PHI + "\x00\x01\x02 ") * 200}]
    with pytest.raises(InputError) as info:
        fit_messages([*messages, {"role": "user", "content": "Summarise."}], 30)
    assert "ZQXPHI123" not in str(info.value)


def test_fit_messages_cli_says_one_line_for_deep_tool_calls(tmp_path: Path) -> None:
    deep = "[" * 1500 + '"x"' + "]" * 1500
    chat = '[{"role": "assistant", "content": null, "tool_calls": ' + deep + "}]"
    path = tmp_path / "chat.json"
    path.write_text(chat, encoding="utf-8")
    result = CliRunner().invoke(app, ["fit-messages", str(path), "--budget", "50"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1


def test_fit_messages_cli_does_not_print_the_text_of_a_bad_part(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(BAD["unknown-part-type"]), encoding="utf-8")
    result = CliRunner().invoke(app, ["fit-messages", str(path), "--budget", "50"])
    assert result.exit_code == 2 and "ZQXPHI123" not in result.output
