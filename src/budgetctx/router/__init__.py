"""Budget-aware routing (paper 3.5) and a document-feature router that goes beyond it.

>>> from budgetctx import build_context
>>> ctx = build_context("Chest pain. Troponin negative. Discharged home.", 6, selector="auto")
>>> ctx.route.router in ("budget", "feature")
True
"""

from __future__ import annotations

from budgetctx.router._budget import BudgetRouter
from budgetctx.router._calibrate import (
    Instance,
    RouteEvalRow,
    calibrate_budget_router,
    calibrate_feature_router,
    evaluate_router,
    instances,
)
from budgetctx.router._config import (
    CONFIG_VERSION,
    Router,
    check_tokenizer,
    default_router,
    load_router,
    router_from_config,
    save_router,
)
from budgetctx.router._decision import RouteDecision
from budgetctx.router._feature import FeatureRouter
from budgetctx.router._run import RouteEvalReport, calibrate, route_eval
from budgetctx.router._stats import FEATURE_NAMES, DocumentStats, document_stats
from budgetctx.router._tree import TreeModel

__all__ = [
    "CONFIG_VERSION",
    "FEATURE_NAMES",
    "BudgetRouter",
    "DocumentStats",
    "FeatureRouter",
    "Instance",
    "RouteDecision",
    "RouteEvalReport",
    "RouteEvalRow",
    "Router",
    "TreeModel",
    "calibrate",
    "calibrate_budget_router",
    "calibrate_feature_router",
    "check_tokenizer",
    "default_router",
    "document_stats",
    "evaluate_router",
    "instances",
    "load_router",
    "route_eval",
    "router_from_config",
    "save_router",
]
