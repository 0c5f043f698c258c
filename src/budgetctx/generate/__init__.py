"""LLM generators (OpenAI-compatible endpoints, a local model), response cache, prompts and
the cost model."""

from __future__ import annotations

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
