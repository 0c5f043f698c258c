"""Imports without the cyclic garbage collector, for a command line's start.

A cold ``budgetctx select`` imports about 100k objects that live as long as the process
(modules, classes, functions, numpy's tables); each allocation counts towards the collector's
next pass, and its passes over them (some 70 in a select) find nothing to free: about a tenth
of a cold select's CPU time (issue 27, fifth pass). Imports hold it off, as Mercurial's
``util.nogc`` does for the same reason; the command's own work runs with it on.

>>> import gc
>>> with imports():
...     gc.isenabled()
False
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
        if was_on:
            gc.enable()
