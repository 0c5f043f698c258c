"""Router configs: small JSON files with their provenance; clear errors when unusable."""

from __future__ import annotations

import importlib.resources
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from budgetctx._errors import InvalidParameterError
from budgetctx.router._budget import BudgetRouter
from budgetctx.router._feature import FeatureRouter

__all__ = [
    "CONFIG_VERSION",
    "Router",
    "check_tokenizer",
    "default_router",
    "load_router",
    "router_from_config",
    "save_router",
]

CONFIG_VERSION = 1
Router = BudgetRouter | FeatureRouter


def router_from_config(config: Mapping[str, Any], *, source: str = "router config") -> Router:
    """Build a router from its JSON dict; malformed input raises InvalidParameterError."""
    try:
        version = config.get("version", CONFIG_VERSION)
        if version != CONFIG_VERSION:
            raise ValueError(f"version {version!r}, this budgetctx reads version {CONFIG_VERSION}")
        kind = config["kind"]
        if kind == "budget":
            return BudgetRouter.from_config(config)
        if kind == "feature":
            return FeatureRouter.from_config(config)
        raise ValueError(f"unknown kind {kind!r} (expected 'budget' or 'feature')")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        detail = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
        raise InvalidParameterError(
            f"{source} is not a usable budgetctx router config ({detail}). Recreate it with "
            "`budgetctx calibrate RUN --out router.json`.",
            parameter="router",
            value=source,
        ) from exc


def load_router(path: str | Path) -> Router:
    """Read a router config written by :func:`save_router` or ``budgetctx calibrate``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InvalidParameterError(
            f"No router config at {str(p)!r}. Create one with `budgetctx calibrate RUN --out "
            f"{p.name}`, or use selector='auto' for the bundled one.",
            parameter="router",
            value=str(p),
        ) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidParameterError(
            f"{str(p)!r} is not valid JSON ({exc.msg} at line {exc.lineno}); it is not a router "
            "config. Recreate it with `budgetctx calibrate RUN --out router.json`.",
            parameter="router",
            value=str(p),
        ) from exc
    if not isinstance(data, dict):
        raise InvalidParameterError(
            f"{str(p)!r} holds a JSON {type(data).__name__}, not a router config object. "
            "Recreate it with `budgetctx calibrate RUN --out router.json`.",
            parameter="router",
            value=str(p),
        )
    return router_from_config(data, source=repr(str(p)))


def save_router(router: Router, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    data = {"version": CONFIG_VERSION, **router.to_config()}
    p.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return p


def default_router() -> Router:
    """The router shipped with budgetctx (see its ``provenance``)."""
    text = (importlib.resources.files(__package__) / "default_router.json").read_text("utf-8")
    return router_from_config(json.loads(text), source="the bundled default_router.json")


def check_tokenizer(router: Router, tokenizer: str) -> None:
    """Budgets in a router are tokens of one tokenizer; refuse another."""
    if router.tokenizer != tokenizer:
        raise InvalidParameterError(
            f"This router was calibrated with {router.tokenizer!r} budgets but the context is "
            f"counted with {tokenizer!r}; its thresholds would be off. Use "
            f"tokenizer={router.tokenizer!r}, or calibrate a router on a sweep run with "
            f"--tokenizer {tokenizer}.",
            parameter="tokenizer",
            value=tokenizer,
        )
