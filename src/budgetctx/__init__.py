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

import importlib
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from budgetctx._core.results import (
        Context,
        DocumentStats,
        DocumentSummary,
        RouteDecision,
        SelectedUnit,
    )
    from budgetctx.batch import ItemError, build_contexts
    from budgetctx.build import (
        BuildOptions,
        Document,
        PreparedDocument,
        abuild_context,
        build_context,
        pin_regex,
        prepare,
    )
    from budgetctx.chat import (
        FittedMessages,
        MessageProvenance,
        afit_messages,
        count_message_tokens,
        fit_messages,
    )
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

#: Every public name but the errors and the version is imported on first use (PEP 562), from
#: the module that defines it. ``import budgetctx`` then loads no numpy, and so no BLAS library:
#: the command line can bound BLAS's threads before it starts them (issue 27, fourth pass), and
#: a call loads only what it uses (budgetctx.batch brings multiprocessing and
#: concurrent.futures.process, budgetctx.chat its message models, budgetctx.router its tree,
#: none of which the CLI's select on one document needs). UnitFeatures, Selection,
#: SelectionProblem, Segmentation and Unit stay importable from here as before, but are not in
#: __all__ below: they belong to their namespaces.
_LAZY = {
    **dict.fromkeys(
        ("Context", "DocumentStats", "DocumentSummary", "RouteDecision", "SelectedUnit"),
        "budgetctx._core.results",
    ),
    **dict.fromkeys(("ItemError", "build_contexts"), "budgetctx.batch"),
    **dict.fromkeys(
        (
            "BuildOptions",
            "Document",
            "PreparedDocument",
            "abuild_context",
            "build_context",
            "pin_regex",
            "prepare",
        ),
        "budgetctx.build",
    ),
    **dict.fromkeys(
        (
            "FittedMessages",
            "MessageProvenance",
            "afit_messages",
            "count_message_tokens",
            "fit_messages",
        ),
        "budgetctx.chat",
    ),
    **dict.fromkeys(
        ("Representation", "UnitFeatures", "get_representation", "list_representations"),
        "budgetctx.representations",
    ),
    **dict.fromkeys(("Router", "default_router", "load_router"), "budgetctx.router"),
    **dict.fromkeys(
        ("Selection", "SelectionProblem", "Selector", "get_selector", "list_selectors"),
        "budgetctx.selectors",
    ),
    **dict.fromkeys(("Tokenizer", "get_tokenizer", "list_tokenizers"), "budgetctx.tokenizers"),
    **dict.fromkeys(
        ("Segmentation", "Unit", "Unitizer", "get_unitizer", "list_unitizers"),
        "budgetctx.unitizers",
    ),
}
#: Modules that ``import budgetctx`` used to load as a side effect: ``budgetctx.selectors``
#: after a bare ``import budgetctx`` still works, imported on first use.
_SUBPACKAGES = frozenset(
    {"build", "profiles", "representations", "router", "selectors", "tokenizers", "unitizers"}
)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"budgetctx.{name}")
    else:
        raise AttributeError(f"module 'budgetctx' has no attribute {name!r}")
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
