"""Bundled sample data (a synthetic discharge note written for budgetctx)."""

from __future__ import annotations

import importlib.resources

__all__ = ["sample_note"]


def sample_note() -> str:
    """A synthetic discharge summary (no real patient) used by ``budgetctx demo`` and tests."""
    return (importlib.resources.files(__name__) / "sample_discharge_note.txt").read_text("utf-8")
