"""The ``budgetctx`` command line: parse, call the library, print. No logic here.

Every failure a user can cause (a :class:`~budgetctx.BudgetCtxError`, an OS error such as a
missing file, a bad option) is printed as one line on stderr and exits with status 2; this
is done once, by the command group (:class:`_Group`), not by each command.
"""

from __future__ import annotations

import copy
import sys
import warnings
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from budgetctx._errors import BudgetCtxError
from budgetctx.cli._batch import batch
from budgetctx.cli._format import (
    one_line,
)
from budgetctx.cli._sensitivity import sensitivity

try:  # typer >= 0.24 vendors its own click, whose exceptions are these
    from typer._click import exceptions as _click_errors
except ImportError:  # pragma: no cover - older typer on the real click
    from click import exceptions as _click_errors  # type: ignore[no-redef]
from budgetctx.cli._datasets import datasets_app
from budgetctx.cli._eval import calibrate, cost, report, route_eval_cmd, sweep
from budgetctx.cli._select import components, demo, fit_messages_cmd, select
from budgetctx.cli._serve import serve

#: The exit status of every error the user can fix (bad option, bad input, missing file).
EXIT_USAGE = 2


def _error(message: str) -> None:
    typer.echo(f"budgetctx: error: {one_line(message)}", err=True)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    typer.echo(f"budgetctx: warning: {one_line(str(message))}", err=True)


class _Group(TyperGroup):
    """Runs the command and turns every user-caused failure into one line and exit 2.

    Library errors carry their fix; OS errors name the path; a file that is not UTF-8 names
    the offset; click's usage errors (a missing option, a non-integer budget) are folded
    onto one line as well. Anything else is a bug and keeps its traceback.
    """

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            with warnings.catch_warnings():
                # A warning is for the user, not a developer: one line, no file path and no
                # source line (Python's default shows both).
                warnings.showwarning = _show_warning
                code = super().main(
                    args, prog_name, complete_var, False, windows_expand_args, **extra
                )
        except _click_errors.NoArgsIsHelpError as exc:
            exc.show()  # the help text, as the user asked for nothing else
            sys.exit(EXIT_USAGE)
        except _click_errors.ClickException as exc:
            _error(f"{exc.format_message()} See 'budgetctx --help'.")
            sys.exit(EXIT_USAGE)
        except typer.Abort:
            _error("Aborted.")
            sys.exit(1)
        except BudgetCtxError as exc:
            _error(str(exc))
            sys.exit(EXIT_USAGE)
        except OSError as exc:
            _error(f"{exc}; check the path and its permissions.")
            sys.exit(EXIT_USAGE)
        except UnicodeError as exc:
            # A config or data file that is not UTF-8 text (the library's own readers raise
            # InputError; this catches the rest). The message holds an offset, not the text.
            _error(f"{exc}; the file must be UTF-8 text.")
            sys.exit(EXIT_USAGE)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=_Group,
    add_completion=False,
    no_args_is_help=True,
    help="Budgeted, token-exact context construction for long documents.",
)


def _print_version(value: bool) -> None:
    if value:
        from budgetctx._version import __version__

        typer.echo(f"budgetctx {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """Budgeted, token-exact context construction for long documents."""


# Commands in the order ``--help`` lists them.
app.command()(select)
app.command("fit-messages")(fit_messages_cmd)
app.command()(demo)
app.command()(components)
app.add_typer(datasets_app, name="datasets")
app.command()(sweep)
app.command()(report)
app.command()(cost)
app.command()(calibrate)
app.command("route-eval")(route_eval_cmd)
app.command("batch")(batch)
app.command("sensitivity")(sensitivity)
app.command()(serve)


def _only(name: str) -> typer.Typer | None:
    """``app`` holding only its top-level command ``name``, or None if there is no such
    command. typer turns every command's signature into click options on each start (~30-60
    ms for all of them; a ``budgetctx`` run needs one): the same group, callback and settings,
    so the command parses, helps and fails as it does in ``app``."""
    found = [
        c
        for c in app.registered_commands
        if c.callback is not None
        and (c.name or c.callback.__name__.lower().replace("_", "-")) == name
    ]
    if len(found) != 1:
        return None
    one = copy.copy(app)
    one.registered_commands = found
    one.registered_groups = []
    return one


def main() -> None:
    """The console script (``budgetctx``)."""
    args = sys.argv[1:]
    one = _only(args[0]) if args else None
    (one if one is not None else app)()
