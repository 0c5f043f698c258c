"""budgetctx: token-exact, budget-aware context construction with provenance.

>>> import budgetctx
>>> ctx = budgetctx.build_context("Chest pain. Troponin negative. Discharged home.", budget=6)
>>> ctx.tokens_used <= 6
True
"""

from __future__ import annotations

from budgetctx._async import abuild_context, afit_messages
from budgetctx._documents import Document
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
from budgetctx._messages import (
    FittedMessages,
    MessageProvenance,
    count_message_tokens,
    fit_messages,
)
from budgetctx._pins import pin_regex
from budgetctx._version import __version__
from budgetctx.batch import ItemError, build_contexts
from budgetctx.context import Context, DocumentStats, DocumentSummary, RouteDecision, SelectedUnit
from budgetctx.pipeline import PreparedDocument, build_context, prepare
from budgetctx.representations import (
    Representation,
    UnitFeatures,
    get_representation,
    list_representations,
)
from budgetctx.router import Router, default_router, load_router
from budgetctx.selectors import Selection, SelectionProblem, Selector, get_selector, list_selectors
from budgetctx.tokenizers import Tokenizer, get_tokenizer, list_tokenizers
from budgetctx.unitizers import Segmentation, Unit, Unitizer, get_unitizer, list_unitizers

__all__ = [
    "BudgetCtxError",
    "BudgetCtxWarning",
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
    "Segmentation",
    "SelectedUnit",
    "Selection",
    "SelectionProblem",
    "Selector",
    "Tokenizer",
    "TokenizerError",
    "Unit",
    "UnitFeatures",
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
