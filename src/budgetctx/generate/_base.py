"""Generators: chat messages in, text and usage out.

A generator is anything with ``name``, ``params()`` and ``generate(messages, **options)``;
``generate_batch`` runs many prompts (backends bound their own concurrency). Usage counts
come from the backend (the API's own token counts, or the local tokenizer).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from budgetctx._core.registry import Registry

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

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Role
    content: str

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class Usage:
    """Tokens as the backend counted them."""

    input_tokens: int
    output_tokens: int

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class Generation:
    """A model's reply. ``cached`` is true when it came from the response cache (no call)."""

    text: str
    usage: Usage
    latency_ms: float
    model: str
    cached: bool = False
    finish_reason: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["usage"] = self.usage.to_dict()
        out["meta"] = dict(self.meta)
        return out


@runtime_checkable
class Generator(Protocol):
    """Messages in, text and usage out."""

    @property
    def name(self) -> str: ...

    def params(self) -> dict[str, Any]:
        """Everything that changes the output (model, temperature, max tokens, ...)."""
        ...

    def generate(self, messages: Sequence[Message]) -> Generation: ...

    def generate_batch(self, prompts: Sequence[Sequence[Message]]) -> list[Generation]: ...


def request_key(model: str, messages: Sequence[Message], params: Mapping[str, Any]) -> str:
    """A stable SHA-256 of everything that determines a response.

    It is a plain digest of the prompt: anyone holding it can test a guessed prompt, so it is
    neither stored nor printed. The response cache keys rows by an HMAC of it under a
    per-cache secret; errors name a random request id.

    >>> request_key("m", [Message("user", "hi")], {"temperature": 0})[:12]
    'eec9195c92b9'
    """
    blob = json.dumps(
        {"model": model, "messages": [m.to_dict() for m in messages], "params": dict(params)},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


_REGISTRY: Registry[Generator] = Registry("generator", Generator)


def register_generator(
    name: str, factory: Callable[..., Generator], *, aliases: tuple[str, ...] = ()
) -> None:
    """Register a generator factory under ``name``."""
    _REGISTRY.register(name, factory, aliases=aliases)


def list_generators() -> list[str]:
    """Names accepted by :func:`get_generator`."""
    return _REGISTRY.names()


def get_generator(spec: str | Generator, /, **options: Any) -> Generator:
    """A generator from ``"openai:gpt-4o"`` (backend:model), ``"local"``, or an instance.

    >>> list_generators()  # doctest: +SKIP
    ['local', 'openai']
    """
    if isinstance(spec, str) and ":" in spec:
        backend, _, model = spec.partition(":")
        return _REGISTRY.create(backend, model=model, **options)
    return _REGISTRY.resolve(spec, **options)
