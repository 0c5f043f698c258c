"""The Tokenizer protocol and the tokenizer registry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from budgetctx._core.registry import Registry
from budgetctx._errors import UnknownComponentError

__all__ = ["Tokenizer", "get_tokenizer", "list_tokenizers", "register_tokenizer"]


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens exactly as the target model will.

    ``truncate(text, n)`` returns the longest prefix of ``text`` whose count is ``<= n`` and that
    ends on a token boundary; it is what the ``truncate=True`` option of ``build_context`` uses.
    """

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...

    def count_batch(self, texts: Sequence[str]) -> list[int]: ...

    def truncate(self, text: str, max_tokens: int) -> str: ...


_REGISTRY: Registry[Tokenizer] = Registry("tokenizer", Tokenizer)


def register_tokenizer(
    name: str, factory: Callable[..., Tokenizer], *, aliases: tuple[str, ...] = ()
) -> None:
    """Register a tokenizer factory under ``name`` (and optional aliases such as model names)."""
    _REGISTRY.register(name, factory, aliases=aliases)


def list_tokenizers() -> list[str]:
    """Names accepted by :func:`get_tokenizer` (model-name aliases are accepted too)."""
    return _REGISTRY.names()


def get_tokenizer(spec: str | Tokenizer, /, **options: Any) -> Tokenizer:
    """Return a tokenizer from a name, a model name, ``hf:<path>``, a tokenizer.json path, or an
    instance (returned unchanged).

    >>> get_tokenizer("gpt-4o").name
    'o200k_base'
    """
    if isinstance(spec, str):
        if spec.startswith("hf:"):
            return _REGISTRY.create("hf", path=spec[3:], **options)
        if spec.startswith("tekken:"):  # a Mistral model's own tekken.json
            return _REGISTRY.create("tekken", path=spec[7:], **options)
        if spec.endswith(".json") or ("/" in spec and Path(spec).exists()):
            return _REGISTRY.create("hf", path=spec, **options)
        if "~" in spec and not options:
            from budgetctx.tokenizers._models import parse_estimate_spec

            estimate = parse_estimate_spec(spec)
            if estimate is not None:
                return estimate
        try:
            _REGISTRY.canonical(spec)
        except UnknownComponentError:
            # A model name ("o3-mini", "claude-3-5-sonnet", "meta-llama/Llama-3.1-8B"): its
            # family's tokenizer (budgetctx.tokenizers._models has the table).
            from budgetctx.tokenizers._models import model_tokenizer_name

            family = model_tokenizer_name(spec)
            if family is None:
                raise
            return _REGISTRY.create(family, **options)
    return _REGISTRY.resolve(spec, **options)


def _register_builtins() -> None:
    from budgetctx.tokenizers._hf import HFTokenizer
    from budgetctx.tokenizers._tiktoken import TiktokenTokenizer
    from budgetctx.tokenizers._words import WordTokenizer

    register_tokenizer(
        "o200k_base",
        lambda: TiktokenTokenizer("o200k_base"),
        aliases=(
            "gpt-4o",
            "gpt-4o-mini",
            "gpt-4.1",
            "gpt-4.1-mini",
            "gpt-5",
            "o1",
            "o3",
            "o4-mini",
        ),
    )
    register_tokenizer(
        "cl100k_base",
        lambda: TiktokenTokenizer("cl100k_base"),
        aliases=("gpt-4", "gpt-4-turbo", "gpt-3.5-turbo", "text-embedding-3-small"),
    )
    register_tokenizer("words", WordTokenizer, aliases=("whitespace",))
    register_tokenizer("hf", HFTokenizer, aliases=("huggingface",))
    from budgetctx.tokenizers._models import EstimatedTokenizer, QuicktokTokenizer

    register_tokenizer("llama3", lambda: QuicktokTokenizer("llama3"), aliases=("llama-3",))
    register_tokenizer("qwen3", lambda: QuicktokTokenizer("qwen3"), aliases=("qwen2.5", "qwen2"))
    register_tokenizer("claude", lambda: EstimatedTokenizer("claude"))
    register_tokenizer("gemini", lambda: EstimatedTokenizer("gemini"))
    from budgetctx.tokenizers._tekken import TekkenTokenizer

    register_tokenizer("tekken", TekkenTokenizer, aliases=("mistral-tekken",))


_register_builtins()
