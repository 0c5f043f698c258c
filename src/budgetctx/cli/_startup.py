"""Imports without the cyclic garbage collector, for a command line's start.

A cold ``budgetctx select`` imports tens of thousands of objects that live as long as the
process (modules, classes, functions, numpy's tables); each allocation counts towards the
collector's next pass, and its passes over them find nothing to free: 73 passes in a select of
the bundled note, 16-35 ms of a 0.3-0.5 s process on a busy machine (issue 27, fifth pass).
Imports hold it off, as Mercurial's ``util.nogc`` does for the same reason, and in the
console script's own process what they made is then frozen (``gc.freeze``), so that the
collector, on again for the command's own work, never walks it (11 passes, 2-6 ms).

Freezing is for the whole process, so it is done only once :func:`budgetctx.cli.main` (the
console script, ``python -m budgetctx.cli``) has claimed the process with :func:`console`: a
program that imports ``budgetctx.cli`` to run ``app`` in its own process (a test's
CliRunner, an embedding service) keeps its collector as it was, its uncollected garbage
included. (tests/cli/test_startup.py checks both in fresh processes.)
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["console", "imports"]

_CONSOLE = [False]


def console() -> None:
    """Mark this process as the command line's own: :func:`imports` then freezes."""
    _CONSOLE[0] = True


@contextmanager
def imports() -> Iterator[None]:
    """Run the block without the cyclic collector; it is back on after (if it was on)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _CONSOLE[0]:
            # What the imports made lives as long as the process: frozen, the collector
            # never walks it again (turned back on, it would otherwise walk all of it at once).
            gc.freeze()
        if was_on:
            gc.enable()
