"""Router configs: small JSON files with their provenance; clear errors when unusable."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from budgetctx._errors import InvalidParameterError
from budgetctx.router._budget import BudgetRouter
from budgetctx.router._feature import FeatureRouter
from budgetctx.router._protocol import Router

__all__ = [
    "CONFIG_VERSION",
    "check_tokenizer",
    "default_router",
    "load_router",
    "router_from_config",
    "save_router",
]

CONFIG_VERSION = 1
_FIX = "Recreate it with `budgetctx calibrate RUN --out router.json`."


def router_from_config(
    config: Mapping[str, Any], *, source: str = "router config"
) -> BudgetRouter | FeatureRouter:
    """Build a router from its JSON dict; malformed input raises InvalidParameterError."""
    try:
        if not isinstance(config, Mapping):
            raise TypeError(f"a JSON {type(config).__name__}, not an object")
        version = config.get("version", CONFIG_VERSION)
        if version != CONFIG_VERSION:
            raise ValueError(f"version {version!r}, this budgetctx reads version {CONFIG_VERSION}")
        kind = config["kind"]
        if kind == "budget":
            return BudgetRouter.from_config(config)
        if kind == "feature":
            return FeatureRouter.from_config(config)
        raise ValueError(f"unknown kind {kind!r:.40} (expected 'budget' or 'feature')")
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        detail = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
        raise InvalidParameterError(
            f"{source} is not a usable budgetctx router config ({detail}). {_FIX}",
            parameter="router",
            value=source,
        ) from exc


def load_router(path: str | Path) -> BudgetRouter | FeatureRouter:
    """Read a router config written by :func:`save_router` or ``budgetctx calibrate``.

    Every part of the file is checked on load: a missing, unreadable or malformed file
    raises :class:`InvalidParameterError` (a bad tree never loops).
    """
    p = Path(path)

    def fail(why: str, exc: BaseException | None = None) -> InvalidParameterError:
        err = InvalidParameterError(
            f"{str(p)!r} {why}; it is not a router config. {_FIX}",
            parameter="router",
            value=str(p),
        )
        err.__cause__ = exc
        return err

    try:
        raw = p.read_bytes()
    except FileNotFoundError as exc:
        raise InvalidParameterError(
            f"No router config at {str(p)!r}. Create one with `budgetctx calibrate RUN --out "
            f"{p.name}`, or use selector='auto' for the bundled one.",
            parameter="router",
            value=str(p),
        ) from exc
    except IsADirectoryError as exc:
        raise fail("is a directory") from exc
    except OSError as exc:
        raise fail(f"cannot be read ({exc.strerror or type(exc).__name__})") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"is not UTF-8 text (undecodable byte at offset {exc.start})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(f"is not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    except RecursionError as exc:
        raise fail("is JSON nested too deeply to read") from exc
    if not isinstance(data, dict):
        raise fail(f"holds a JSON {type(data).__name__}, not a router config object")
    return router_from_config(data, source=repr(str(p)))


def save_router(router: BudgetRouter | FeatureRouter, path: str | Path) -> Path:
    """Write ``router`` as JSON (its ``to_config()`` plus the config version)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    data = {"version": CONFIG_VERSION, **router.to_config()}
    p.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return p


@functools.cache
def default_router() -> BudgetRouter | FeatureRouter:
    """The router shipped with budgetctx (see its ``provenance``), read once per process.

    >>> default_router() is default_router()
    True
    """
    # imported here: importlib.resources brings tempfile and zipfile, which a call with a
    # named selector never needs (issue 27, cold start)
    import importlib.resources

    text = (importlib.resources.files(__package__) / "default_router.json").read_text("utf-8")
    return router_from_config(json.loads(text), source="the bundled default_router.json")


def check_tokenizer(router: Router, tokenizer: str) -> None:
    """Budgets in a router are tokens of one tokenizer; refuse another."""
    expected = getattr(router, "tokenizer", None)
    if expected is not None and expected != tokenizer:
        raise InvalidParameterError(
            f"This router was calibrated with {expected!r} budgets but the context is "
            f"counted with {tokenizer!r}; its thresholds would be off. Use "
            f"tokenizer={expected!r}, or calibrate a router on a sweep run with "
            f"--tokenizer {tokenizer}.",
            parameter="tokenizer",
            value=tokenizer,
        )
