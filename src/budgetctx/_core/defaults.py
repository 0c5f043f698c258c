"""Defaults that the library and the command line share, in a module that imports nothing, so
that ``budgetctx select --help`` can show them without loading the build pipeline (numpy)."""

from __future__ import annotations

__all__ = ["DEFAULT_SELECTOR"]

#: The selector a build uses when none is named (``budgetctx.build.DEFAULT_SELECTOR``).
DEFAULT_SELECTOR = "mmr"
