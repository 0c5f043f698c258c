"""Bounding BLAS's threads for a command-line run, before numpy loads its BLAS library."""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping

__all__ = ["bound_blas_threads"]

#: The variables OpenBLAS reads its thread count from at load (the first one set wins); one set
#: by the user is left alone.
_OPENBLAS_VARS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
#: The library's setting for the BLAS threads a selection may use (build/_prepare.py's
#: ``BLAS_THREADS_ENV``; spelled out here so that reading it imports no numpy).
_BLAS_THREADS_ENV = "BUDGETCTX_BLAS_THREADS"


def bound_blas_threads(environ: MutableMapping[str, str] | None = None) -> str | None:
    """Set ``OPENBLAS_NUM_THREADS`` to ``$BUDGETCTX_BLAS_THREADS`` (default 1) for this process
    and its workers, and return it; ``None`` where nothing was set.

    OpenBLAS starts its threads when numpy is imported, and they spin there: on 2 cores
    ``import numpy`` took ~40 ms more wall and CPU time with its second thread than without
    (issue 27, fourth pass), which a one-document command never makes up, and ``batch``
    workers are one core each already. Results do not depend on it (each output of a product
    is summed by one thread, see ``build._prepare.blas_threads``). Nothing is set once numpy is
    loaded (too late: the command line called from Python), when the user set any of
    OpenBLAS's own variables, or when ``$BUDGETCTX_BLAS_THREADS`` is ``0`` or not a number
    (BLAS left alone, as the library does).

    >>> bound_blas_threads({"OMP_NUM_THREADS": "4"}) is None  # the user's choice stands
    True
    """
    env = os.environ if environ is None else environ
    if "numpy" in sys.modules or any(env.get(var) for var in _OPENBLAS_VARS):
        return None
    raw = env.get(_BLAS_THREADS_ENV, "1").strip()
    if not raw.isdigit() or int(raw) <= 0:
        return None
    env["OPENBLAS_NUM_THREADS"] = raw
    return raw
