"""Imports without the cyclic garbage collector, for a command line's start.

A cold ``budgetctx select`` imports tens of thousands of objects that live as long as the
process (modules, classes, functions, numpy's tables); each allocation counts towards the
collector's next pass, and its passes over them find nothing to free: 73 passes in a select of
the bundled note, 16-35 ms of a 0.3-0.5 s process on a busy machine (issue 27, fifth pass).
Imports hold it off, as Mercurial's ``util.nogc`` does for the same reason, and what they
made is then frozen (``gc.freeze``), so that the collector, on again for the command's own
work, never walks it (11 passes, 2-6 ms).

(tests/cli/test_startup.py runs it in a fresh process: freezing is for the whole process.)
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["imports"]


@contextmanager
def imports() -> Iterator[None]:
    """Run the block without the cyclic collector; it is back on after (if it was on)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # What the imports made lives as long as the process: frozen, the collector never
        # walks it again (turned back on, it would otherwise walk all of it at once).
        gc.freeze()
        if was_on:
            gc.enable()
