"""The ``budgetctx`` command line: parse, call the library, print. No logic here.

Where a change belongs: the application, its error handling and the console script in
``_app``; one module per command group beside it; shared option declarations in
``_options``; terminal tables in ``_format``; reading input files in ``_io``.
"""

from __future__ import annotations

from budgetctx.cli._blas import bound_blas_threads
from budgetctx.cli._startup import imports

# Before anything below imports numpy: its BLAS starts its threads when it loads.
bound_blas_threads()

with imports():  # the command line's own modules and typer, without collector passes
    from budgetctx.cli._app import app, main

__all__ = ["app", "main"]
