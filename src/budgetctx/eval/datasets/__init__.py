"""Evaluation datasets: loaders with deterministic splits, and verified downloads.

Datasets live in a data dir (``data_dir=``, else ``$BUDGETCTX_DATA``, else
``~/.cache/budgetctx/datasets``). Loading never downloads; :func:`fetch_dataset` does, from the
public sources pinned by commit, checking every file's sha256.

>>> "pubmedqa" in list_datasets()
True
>>> ex = Example("n1", "Chest pain. Troponin negative.", "Ruled out MI.", split="validation")
>>> ex.to_dict()["split"]
'validation'
"""

from __future__ import annotations

from budgetctx.eval.datasets._example import SPLITS, Example, Split
from budgetctx.eval.datasets._fetch import FetchReport, fetch_dataset
from budgetctx.eval.datasets._paths import DATA_ENV, resolve_data_dir
from budgetctx.eval.datasets._registry import (
    DatasetInfo,
    dataset_info,
    list_datasets,
    load_dataset,
)
from budgetctx.eval.datasets._specs import (
    FILE_LOADERS,
    document_token_counts,
    parse_dataset_spec,
)
from budgetctx.eval.datasets._splits import DEFAULT_VALIDATION_FRACTION, assign_split

__all__ = [
    "DATA_ENV",
    "DEFAULT_VALIDATION_FRACTION",
    "FILE_LOADERS",
    "SPLITS",
    "DatasetInfo",
    "Example",
    "FetchReport",
    "Split",
    "assign_split",
    "dataset_info",
    "document_token_counts",
    "fetch_dataset",
    "list_datasets",
    "load_dataset",
    "parse_dataset_spec",
    "resolve_data_dir",
]
