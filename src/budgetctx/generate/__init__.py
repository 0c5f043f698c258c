"""LLM generators (OpenAI-compatible endpoints, a local model), response cache, prompts and
the cost model.

Backends are imported when first asked for, so ``import budgetctx.generate`` does not pay for
the ``openai`` client or ``llama_cpp``.

>>> from budgetctx.generate import get_price, call_cost, list_generators
>>> {"local", "openai"} <= set(list_generators())
True
>>> round(call_cost(get_price("gpt-4o"), 512, 300), 5)  # Eq. 1, USD per call
0.00428
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from budgetctx.generate._base import (
    Generation,
    Generator,
    Message,
    Usage,
    get_generator,
    list_generators,
    register_generator,
    request_key,
)
from budgetctx.generate._cache import CachedGenerator, ResponseCache
from budgetctx.generate._cost import (
    CostEstimate,
    CostReport,
    Price,
    call_cost,
    cost_report,
    get_price,
    load_prices,
)
from budgetctx.generate._parse import parse_label
from budgetctx.generate._prompts import (
    PromptTemplate,
    get_prompt,
    list_prompts,
    load_prompt,
    prompt_for_dataset,
)

if TYPE_CHECKING:
    from budgetctx.generate._local import LocalGenerator
    from budgetctx.generate._openai import OpenAIGenerator

__all__ = [
    "CachedGenerator",
    "CostEstimate",
    "CostReport",
    "Generation",
    "Generator",
    "LocalGenerator",
    "Message",
    "OpenAIGenerator",
    "Price",
    "PromptTemplate",
    "ResponseCache",
    "Usage",
    "call_cost",
    "cost_report",
    "get_generator",
    "get_price",
    "get_prompt",
    "list_generators",
    "list_prompts",
    "load_prices",
    "load_prompt",
    "parse_label",
    "prompt_for_dataset",
    "register_generator",
    "request_key",
]


def __getattr__(name: str) -> Any:
    # The backends' own dependencies (openai, llama_cpp) load only when a backend is used.
    if name == "OpenAIGenerator":
        from budgetctx.generate._openai import OpenAIGenerator

        return OpenAIGenerator
    if name == "LocalGenerator":
        from budgetctx.generate._local import LocalGenerator

        return LocalGenerator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _make_openai(**options: Any) -> Generator:
    from budgetctx.generate._openai import OpenAIGenerator

    return OpenAIGenerator(**options)


def _make_local(**options: Any) -> Generator:
    from budgetctx.generate._local import LocalGenerator

    return LocalGenerator(**options)


register_generator("openai", _make_openai)
register_generator("local", _make_local)
