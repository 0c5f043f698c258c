"""Which tokenizer counts a request, and which budget applies to a model.

Requests may name registered tokenizers (``o200k_base``, ``gpt-4o``) and the names the
configuration maps to specs (``[tokenizers] llama3 = "hf:/models/llama3/tokenizer.json"``),
never a path: a request must not make the server read its files. Names are checked here, once
per request, and then travel as spec strings (each worker process builds each tokenizer once).

>>> from budgetctx.serve._config import ServeConfig
>>> r = Resolver(ServeConfig.from_mapping({"models": {"gpt-4o": {"budget": 100}}}))
>>> t = r.model("gpt-4o")
>>> t.tokenizer, t.budget
('gpt-4o', 100)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from budgetctx._errors import UnknownComponentError
from budgetctx.serve._config import ServeConfig
from budgetctx.serve._jobs import load_tokenizer
from budgetctx.serve._problems import ApiError, bad_parameter
from budgetctx.tokenizers import list_tokenizers
from budgetctx.tokenizers._models import model_tokenizer_name

__all__ = ["ModelTarget", "Resolver"]


@dataclass(frozen=True)
class ModelTarget:
    """How one model's prompts are counted (``tokenizer``: a checked spec) and condensed."""

    name: str
    tokenizer: str
    budget: int | None
    reserve: int
    deployment: str | None
    configured: bool
    selector: str = "mmr"


class Resolver:
    """Resolves tokenizer and model names under one configuration."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config

    def tokenizer(self, name: Any, *, parameter: str = "tokenizer") -> str:
        """The spec of the tokenizer a request names; 422 for a path or an unknown name."""
        if not isinstance(name, str):
            raise bad_parameter(parameter, name, "a tokenizer name", "e.g. 'o200k_base'.")
        spec = self.config.tokenizers.get(name)
        if spec is None:
            # "hf:" and "tekken:" specs name files (even without a slash: the working folder's)
            is_file = name.startswith(("hf:", "tekken:")) or name.endswith(".json")
            if is_file or "/" in name or "\\" in name:
                raise bad_parameter(
                    parameter,
                    name,
                    "a tokenizer name, not a file",
                    "a request cannot name a file on the server; map a name to it under "
                    "[tokenizers] in the server's configuration.",
                )
            spec = name
        load_tokenizer(spec)  # raises UnknownComponentError or TokenizerError: a 422
        return spec

    def model(self, model: Any) -> ModelTarget:
        """The model's tokenizer and budget; 400 for a model nobody can count."""
        if not isinstance(model, str) or not model:
            raise ApiError(
                400,
                "The request has no 'model' (a non-empty string); name the target model, "
                'e.g. "model": "gpt-4o".',
                parameter="model",
                value=None if not isinstance(model, str | int | float) else model,
                kind="no_model",
            )
        cfg = self.config
        mc = cfg.models.get(model)
        if mc is not None:
            return ModelTarget(
                model,
                self.tokenizer(mc.tokenizer or model, parameter="model"),
                mc.budget if mc.budget is not None else cfg.default_budget,
                mc.reserve,
                mc.deployment,
                True,
                mc.selector,
            )
        # "meta-llama/Llama-3.1-8B" names a family's tokenizer, not a file
        family = model_tokenizer_name(model)
        try:
            tok = self.tokenizer(family or model, parameter="model")
        except (ApiError, UnknownComponentError):
            if cfg.default_tokenizer is None:
                raise ApiError(
                    400,
                    f"Unknown model {model[:80]!r}: budgetctx cannot count its tokens. Add it "
                    "under [models] with its tokenizer, or set default_tokenizer in the "
                    "server's configuration. Known tokenizer names: "
                    + ", ".join(list_tokenizers())
                    + ".",
                    parameter="model",
                    value=model[:80],
                    kind="unknown_model",
                ) from None
            tok = self.tokenizer(cfg.default_tokenizer, parameter="default_tokenizer")
        return ModelTarget(model, tok, cfg.default_budget, 0, None, False)
