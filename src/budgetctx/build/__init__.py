"""Building one context: options, preparation, selection, rendering and provenance.

Where a change belongs: the options and their rules in ``_options``; text checks, routing,
pinned selection and the call sequence of :func:`build_context` / :func:`prepare` in
``_pipeline``; segments and their exact counts from one encoding in ``_prepare``; several
documents in ``_documents``; pins in ``_pins``; rendering in document order with spans in
``_render``; the HTML view of a context in ``_html``. The result objects are shared by every
room and live in ``budgetctx._core.results``.

>>> from budgetctx.build import build_context
>>> build_context("Chest pain. Troponin negative. Discharged home.", budget=6).tokens_used <= 6
True
"""

from __future__ import annotations

from budgetctx._core.results import Context, DocumentSummary, SelectedUnit
from budgetctx.build._async import abuild_context
from budgetctx.build._documents import Document
from budgetctx.build._options import DEFAULT_SELECTOR, BuildOptions
from budgetctx.build._pins import pin_regex
from budgetctx.build._pipeline import PreparedDocument, build_context, prepare, validate_text

__all__ = [
    "DEFAULT_SELECTOR",
    "BuildOptions",
    "Context",
    "Document",
    "DocumentSummary",
    "PreparedDocument",
    "SelectedUnit",
    "abuild_context",
    "build_context",
    "pin_regex",
    "prepare",
    "validate_text",
]
