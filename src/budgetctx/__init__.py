"""budgetctx: token-exact, budget-aware context construction with provenance.

Where to start: :func:`build_context` (one document or several, one budget), :func:`prepare`
(one document, many budgets), :func:`build_contexts` (many documents), :func:`fit_messages`
(chat messages), :class:`BuildOptions` (one configuration, checked once). Components are
found by name (``get_selector("mmr:lambda_=0.5")``, ``list_unitizers()``); writing your own
is described in docs/extending.md.

>>> import budgetctx
>>> ctx = budgetctx.build_context("Chest pain. Troponin negative. Discharged home.", budget=6)
>>> ctx.tokens_used <= 6
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from budgetctx._core.results import (
    Context,
    DocumentStats,
    DocumentSummary,
    RouteDecision,
    SelectedUnit,
)
from budgetctx._errors import (
    BudgetCtxError,
    BudgetCtxWarning,
    ContextLengthError,
    DatasetError,
    GenerationError,
    InputError,
    InvalidParameterError,
    TokenizerError,
    UnknownComponentError,
)
from budgetctx._version import __version__
from budgetctx.build import (
    BuildOptions,
    Document,
    PreparedDocument,
    abuild_context,
    build_context,
    pin_regex,
    prepare,
)

# UnitFeatures, Selection, SelectionProblem, Segmentation and Unit stay importable from here as
# before, but are not in __all__ below: they belong to their namespaces.
from budgetctx.representations import (
    Representation,
    UnitFeatures,  # noqa: F401
    get_representation,
    list_representations,
)
from budgetctx.router import Router, default_router, load_router
from budgetctx.selectors import (
    Selection,  # noqa: F401
    SelectionProblem,  # noqa: F401
    Selector,
    get_selector,
    list_selectors,
)
from budgetctx.tokenizers import Tokenizer, get_tokenizer, list_tokenizers
from budgetctx.unitizers import (
    Segmentation,  # noqa: F401
    Unit,  # noqa: F401
    Unitizer,
    get_unitizer,
    list_unitizers,
)

if TYPE_CHECKING:
    from budgetctx.batch import ItemError, build_contexts
    from budgetctx.chat import (
        FittedMessages,
        MessageProvenance,
        afit_messages,
        count_message_tokens,
        fit_messages,
    )

#: Public names imported on first use (PEP 562): budgetctx.batch brings multiprocessing and
#: concurrent.futures.process, and budgetctx.chat its message models, which a one-document
#: call (and the CLI's select) never needs.
_LAZY = {
    "ItemError": "budgetctx.batch",
    "build_contexts": "budgetctx.batch",
    "FittedMessages": "budgetctx.chat",
    "MessageProvenance": "budgetctx.chat",
    "afit_messages": "budgetctx.chat",
    "count_message_tokens": "budgetctx.chat",
    "fit_messages": "budgetctx.chat",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'budgetctx' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


# What users call. The types a custom component is written against (Selection,
# SelectionProblem, Segmentation, Unit, UnitFeatures) stay importable here, but belong to
# their namespaces (budgetctx.selectors, .unitizers, .representations): see docs/extending.md.
__all__ = [
    "BudgetCtxError",
    "BudgetCtxWarning",
    "BuildOptions",
    "Context",
    "ContextLengthError",
    "DatasetError",
    "Document",
    "DocumentStats",
    "DocumentSummary",
    "FittedMessages",
    "GenerationError",
    "InputError",
    "InvalidParameterError",
    "ItemError",
    "MessageProvenance",
    "PreparedDocument",
    "Representation",
    "RouteDecision",
    "Router",
    "SelectedUnit",
    "Selector",
    "Tokenizer",
    "TokenizerError",
    "Unitizer",
    "UnknownComponentError",
    "__version__",
    "abuild_context",
    "afit_messages",
    "build_context",
    "build_contexts",
    "count_message_tokens",
    "default_router",
    "fit_messages",
    "get_representation",
    "get_selector",
    "get_tokenizer",
    "get_unitizer",
    "list_representations",
    "list_selectors",
    "list_tokenizers",
    "list_unitizers",
    "load_router",
    "pin_regex",
    "prepare",
]
