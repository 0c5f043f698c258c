"""LLM generators (OpenAI-compatible endpoints, a local model), response cache, prompts and
the cost model.

Backends are imported when first asked for, so ``import budgetctx`` does not pay for the
``openai`` client or ``llama_cpp``.

>>> from budgetctx.generate import list_generators
>>> list_generators()
['local', 'openai']
"""

from __future__ import annotations

from typing import Any

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

__all__ = [
    "Generation",
    "Generator",
    "Message",
    "Usage",
    "get_generator",
    "list_generators",
    "register_generator",
    "request_key",
]


def _openai(**options: Any) -> Generator:
    from budgetctx.generate._openai import OpenAIGenerator

    return OpenAIGenerator(**options)


def _local(**options: Any) -> Generator:
    from budgetctx.generate._local import LocalGenerator

    return LocalGenerator(**options)


register_generator("openai", _openai)
register_generator("local", _local)
