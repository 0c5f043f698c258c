"""The ``budgetctx`` command line: parse, call the library, print. No logic here.

Where a change belongs: the application, its error handling and the console script in
``_app``; one module per command group beside it; shared option declarations in
``_options``; terminal tables in ``_format``; reading input files in ``_io``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from budgetctx.cli._blas import bound_blas_threads
from budgetctx.cli._startup import console, imports

# Before anything below imports numpy: its BLAS starts its threads when it loads.
bound_blas_threads()

if TYPE_CHECKING:
    from budgetctx.cli._app import app

__all__ = ["app", "main"]


def main() -> None:
    """The console script: this process is the command line's, so its imports are frozen
    once made (``_startup``)."""
    console()
    with imports():  # the command line's own modules and typer, without collector passes
        from budgetctx.cli._app import main as run
    run()


def __getattr__(name: str) -> Any:
    # ``app`` for programs that run the command line in their own process: imported as
    # any module is, nothing frozen.
    if name == "app":
        with imports():
            from budgetctx.cli._app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
