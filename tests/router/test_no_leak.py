"""No reference, test-split statistic or dataset name reaches the router at run time (issue 21)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

import budgetctx.build._pipeline as pipeline
from budgetctx import build_context
from budgetctx._core.results import DocumentStats, RouteDecision
from budgetctx.eval.datasets import list_datasets
from budgetctx.router import default_router

REFERENCE = "The unique reference summary says zygomorphic quokkas."


class Spy:
    """Records every argument the pipeline hands a router."""

    tokenizer = "o200k_base"

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def route(self, stats: DocumentStats, budget: int) -> RouteDecision:
        self.calls.append((stats, budget))
        return default_router().route(stats, budget)


def test_auto_sees_only_run_time_statistics(monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy()
    monkeypatch.setattr(pipeline, "default_router", lambda: spy)
    text = "Chest pain since Monday. Troponin negative twice. Discharged home on aspirin. " * 8
    ctx = build_context(text, 40, selector="auto")
    assert ctx.route is not None and ctx.tokens_used <= 40
    ((stats, budget),) = spy.calls
    assert type(stats) is DocumentStats and budget == 40
    # numbers about the document's shape, nothing else: no text, query, dataset or reference
    assert set(stats.to_dict()) == {
        "phi",
        "rho",
        "length",
        "budget_ratio",
        "backchannel_share",
        "hesitation_rate",
        "mean_turn_words",
    }
    assert all(isinstance(v, int | float) for v in stats.to_dict().values())
    assert REFERENCE not in repr(spy.calls)


def test_bundled_router_decides_on_no_dataset_name() -> None:
    config = json.loads(
        (resources.files("budgetctx.router") / "default_router.json").read_text("utf-8")
    )

    def without_provenance(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: without_provenance(v) for k, v in node.items() if k != "provenance"}
        return node

    decision = json.dumps(without_provenance(config)).lower()
    names = {n.split(":")[-1].lower() for n in list_datasets()}
    assert names and not [n for n in names if n in decision]
    # what was calibrated on is recorded, and it is the validation split only
    assert config["provenance"]["split"] == "validation"
