"""Many documents at once: :func:`build_contexts` over an iterable, :func:`run_batch` from a
table file to a table file (JSONL, CSV, Parquet), resumable through a SQLite journal.

>>> from budgetctx.batch import build_contexts
>>> [c.text for c in build_contexts(["Fever. Cultures drawn. Home."], 5, selector="lead")]
['Fever.']
"""

from __future__ import annotations

from budgetctx.batch._build import ContextBuilder, ItemError, build_contexts
from budgetctx.batch._journal import Journal, journal_path
from budgetctx.batch._run import BatchSummary, run_batch
from budgetctx.batch._tables import (
    OUTPUT_COLUMNS,
    Record,
    context_row,
    read_records,
    write_table,
)

__all__ = [
    "OUTPUT_COLUMNS",
    "BatchSummary",
    "ContextBuilder",
    "ItemError",
    "Journal",
    "Record",
    "build_contexts",
    "context_row",
    "journal_path",
    "read_records",
    "run_batch",
    "write_table",
]
