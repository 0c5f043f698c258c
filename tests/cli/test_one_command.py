"""``budgetctx CMD ...`` builds only CMD's options (typer turns every command's signature into
click options on each start): the same parsing, help and errors as the full application."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import budgetctx.data
from budgetctx.cli import _app

runner = CliRunner()
NOTE = str(Path(budgetctx.data.__file__).with_name("sample_discharge_note.txt"))


def _stable(output: str) -> str:
    """The output without its timings, which differ from run to run."""
    output = re.sub(r'"timings_ms": \{[^}]*\}', '"timings_ms": {}', output)
    return re.sub(r", [0-9.]+ ms$", ", ms", output, flags=re.MULTILINE)


@pytest.mark.parametrize(
    "args",
    [
        ["select", "--help"],
        ["select", NOTE, "--budget", "64", "--selector", "lead", "--json"],
        ["select", NOTE, "--budgt", "64"],  # a typo: click's suggestion
        ["select", NOTE, "--budget", "-3"],  # the library's error
        ["select"],  # a missing argument
        ["fit-messages", "--help"],
        ["route-eval", "--help"],
        ["components"],
    ],
    ids=["help", "json", "typo", "bad-budget", "missing", "fit-messages", "route-eval", "list"],
)
def test_one_command_app_behaves_as_the_full_app(args: list[str]) -> None:
    one = _app._only(args[0])
    assert one is not None and [c.callback for c in one.registered_commands] == [
        c.callback
        for c in _app.app.registered_commands
        if c.callback is not None and (c.name or c.callback.__name__.replace("_", "-")) == args[0]
    ]
    full = runner.invoke(_app.app, args)
    alone = runner.invoke(one, args)
    assert (alone.exit_code, _stable(alone.output)) == (full.exit_code, _stable(full.output))
    assert full.exit_code == (0 if args[-1] in ("--help", "--json", "components") else 2)


@pytest.mark.parametrize("name", ["selec", "datasets", "--version", "--help", ""])
def test_anything_but_one_command_gets_the_full_app(name: str) -> None:
    assert _app._only(name) is None


def test_the_full_app_is_left_whole() -> None:
    before = list(_app.app.registered_commands)
    assert _app._only("select") is not None
    assert _app.app.registered_commands == before and _app.app.registered_groups


def test_the_commands_default_selector_is_the_librarys() -> None:
    """The CLI reads the default from ``_core.defaults`` (no numpy for --help): the library's
    must be the same object, or ``select`` and ``build_context`` would disagree."""
    import inspect

    from budgetctx.build import DEFAULT_SELECTOR
    from budgetctx.cli import _batch, _select

    for command in (_select.select, _select.fit_messages_cmd, _select.demo, _batch.batch):
        assert inspect.signature(command).parameters["selector"].default == DEFAULT_SELECTOR
