"""The public surface of ``budgetctx``, pinned: adding or removing a name is a decision."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import budgetctx

PUBLIC = [
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

#: Heavy or optional libraries that ``import budgetctx`` must not load: they cost seconds
#: (scikit-learn, scipy) or belong to extras (the rest), and are imported when first used.
HEAVY = (
    "sklearn",
    "scipy",
    "torch",
    "openai",
    "sentence_transformers",
    "fastapi",
    "pandas",
    "pyarrow",
    "ray",
    "langchain_core",
    "llama_index",
    "haystack",
    "asyncio",  # a fifth of the import (issue 27): only the async API and the service use it
)


def test_all_is_pinned() -> None:
    assert budgetctx.__all__ == PUBLIC


def test_every_public_name_exists() -> None:
    missing = [name for name in budgetctx.__all__ if not hasattr(budgetctx, name)]
    assert not missing


def test_import_loads_no_heavy_library() -> None:
    code = (
        "import json, sys; import budgetctx; "
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout) == []


def test_a_context_loads_no_optional_library() -> None:
    # The default pipeline may import scipy/scikit-learn on first use, never the extras.
    code = (
        "import json, sys, budgetctx; "
        "budgetctx.build_context('Chest pain. Troponin negative. Discharged home.', 5); "
        "extras = ('torch', 'openai', 'sentence_transformers', 'fastapi'); "
        "print(json.dumps(sorted(m for m in extras if m in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout) == []


def test_no_unitizer_name_shadows_a_selector_name() -> None:
    """'hierarchical' and 'sliding' were unitizer aliases and selector names at once."""
    for name in budgetctx.list_selectors():
        with pytest.raises(budgetctx.UnknownComponentError):
            budgetctx.get_unitizer(name)
