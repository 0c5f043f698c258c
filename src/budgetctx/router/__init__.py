"""Run-time routing: the paper's budget router (3.5) and a router over route statistics.

Calibrating routers and evaluating them on sweep runs is evaluation work: see
``budgetctx.eval.calibrate`` and ``budgetctx.eval.route_eval``.

>>> from budgetctx import build_context
>>> ctx = build_context("Chest pain. Troponin negative. Discharged home.", 6, selector="auto")
>>> ctx.route.router in ("budget", "feature")
True
"""

from __future__ import annotations

from budgetctx._core.results import DocumentStats, RouteDecision
from budgetctx.router._budget import BudgetRouter
from budgetctx.router._config import (
    CONFIG_VERSION,
    check_tokenizer,
    default_router,
    load_router,
    router_from_config,
    save_router,
)
from budgetctx.router._divergence import context_divergence, context_divergences, term_mass
from budgetctx.router._feature import FeatureRouter
from budgetctx.router._protocol import Router
from budgetctx.router._stats import STAT_NAMES, document_stats
from budgetctx.router._tree import TreeModel

__all__ = [
    "CONFIG_VERSION",
    "STAT_NAMES",
    "BudgetRouter",
    "DocumentStats",
    "FeatureRouter",
    "RouteDecision",
    "Router",
    "TreeModel",
    "check_tokenizer",
    "context_divergence",
    "context_divergences",
    "default_router",
    "document_stats",
    "load_router",
    "router_from_config",
    "save_router",
    "term_mass",
]
