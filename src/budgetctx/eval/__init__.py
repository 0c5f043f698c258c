"""Evaluation harness: datasets, metrics, resumable sweeps, reports (extra ``eval``).

>>> from budgetctx.eval import SweepConfig
>>> SweepConfig(datasets=("cochrane",), budgets=(256, 512)).selectors[:2]
('lead', 'shuffled')
"""

from __future__ import annotations

from budgetctx.eval._calibrate import (
    PAPER_SELECTORS,
    Instance,
    RouteEvalRow,
    calibrate_budget_router,
    calibrate_feature_router,
    evaluate_router,
    instances,
)
from budgetctx.eval._config import SelectionInput, SweepConfig
from budgetctx.eval._labels import FULL, ORACLE
from budgetctx.eval._llm_runner import GenerationConfig
from budgetctx.eval._oracle import OracleSelector
from budgetctx.eval._route_eval import RouteEvalReport, calibrate, route_eval
from budgetctx.eval._sensitivity import SensitivityConfig, run_sensitivity, simplex_grid
from budgetctx.eval._store import SweepFailure, SweepRow, SweepStore
from budgetctx.eval._sweep import SweepSummary, run_sweep
from budgetctx.eval.datasets import (
    DatasetInfo,
    Example,
    FetchReport,
    assign_split,
    dataset_info,
    document_token_counts,
    fetch_dataset,
    list_datasets,
    load_dataset,
    parse_dataset_spec,
    resolve_data_dir,
)
from budgetctx.eval.metrics import (
    PRF,
    BERTScore,
    BERTScoreBaseline,
    ClassificationReport,
    ConfidenceInterval,
    PairedBootstrap,
    Rouge,
    RougeScores,
    bootstrap_ci,
    classification_report,
    macro_f1,
    paired_bootstrap,
    paper_overlap,
    token_f1,
)
from budgetctx.eval.report import (
    ReportFiles,
    oracle_bounds,
    pareto_frontier,
    summarize,
    write_report,
)
from budgetctx.selectors import parse_selector_spec

__all__ = [
    "FULL",
    "ORACLE",
    "PAPER_SELECTORS",
    "PRF",
    "BERTScore",
    "BERTScoreBaseline",
    "ClassificationReport",
    "ConfidenceInterval",
    "DatasetInfo",
    "Example",
    "FetchReport",
    "GenerationConfig",
    "Instance",
    "OracleSelector",
    "PairedBootstrap",
    "ReportFiles",
    "Rouge",
    "RougeScores",
    "RouteEvalReport",
    "RouteEvalRow",
    "SelectionInput",
    "SensitivityConfig",
    "SweepConfig",
    "SweepFailure",
    "SweepRow",
    "SweepStore",
    "SweepSummary",
    "assign_split",
    "bootstrap_ci",
    "calibrate",
    "calibrate_budget_router",
    "calibrate_feature_router",
    "classification_report",
    "dataset_info",
    "document_token_counts",
    "evaluate_router",
    "fetch_dataset",
    "instances",
    "list_datasets",
    "load_dataset",
    "macro_f1",
    "oracle_bounds",
    "paired_bootstrap",
    "paper_overlap",
    "pareto_frontier",
    "parse_dataset_spec",
    "parse_selector_spec",
    "resolve_data_dir",
    "route_eval",
    "run_sensitivity",
    "run_sweep",
    "simplex_grid",
    "summarize",
    "token_f1",
    "write_report",
]
