"""Evaluation harness: datasets, metrics, resumable sweeps, reports (extra ``eval``).

>>> from budgetctx.eval import SweepConfig
>>> SweepConfig(datasets=("cochrane",), budgets=(256, 512)).selectors[:2]
('lead', 'shuffled')
"""

from __future__ import annotations

from budgetctx.eval._oracle import OracleSelector
from budgetctx.eval._store import SweepRow, SweepStore
from budgetctx.eval._sweep import (
    ORACLE,
    SelectionInput,
    SweepConfig,
    SweepSummary,
    document_stats,
    parse_selector_spec,
    run_sweep,
)
from budgetctx.eval.datasets import (
    DatasetInfo,
    Example,
    FetchReport,
    assign_split,
    dataset_info,
    fetch_dataset,
    list_datasets,
    load_dataset,
    resolve_data_dir,
)

__all__ = [
    "ORACLE",
    "DatasetInfo",
    "Example",
    "FetchReport",
    "OracleSelector",
    "SelectionInput",
    "SweepConfig",
    "SweepRow",
    "SweepStore",
    "SweepSummary",
    "assign_split",
    "dataset_info",
    "document_stats",
    "fetch_dataset",
    "list_datasets",
    "load_dataset",
    "parse_selector_spec",
    "resolve_data_dir",
    "run_sweep",
]
