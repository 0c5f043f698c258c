"""Planning a sweep: which (example, unitizer, selector, budget) rows are still to compute.

One :class:`Task` is one example under one unitizer: its document is prepared once and every
pending (selector, budget) pair is selected from it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from budgetctx.eval._config import SelectionInput, SweepConfig
from budgetctx.eval._labels import FULL, FULL_UNITIZER, ORACLE
from budgetctx.eval._store import RowKey

__all__ = ["Task", "plan_tasks"]


@dataclass(frozen=True)
class Task:
    """One example under one unitizer, and the (selector label, budget) pairs to compute."""

    dataset: str
    example_id: str
    split: str
    unitizer: str
    todo: tuple[tuple[str, int], ...]
    selection: SelectionInput
    reference: str
    label: str | None = None


def plan_tasks(config: SweepConfig, done: set[RowKey]) -> tuple[list[Task], int]:
    """The tasks left to run and how many rows are already in ``done`` (skipped)."""
    from budgetctx.eval.datasets import load_dataset, parse_dataset_spec

    labels = list(config.selectors) + ([ORACLE] if config.oracle else [])
    tasks, skipped = [], 0
    for dataset in config.datasets:
        name, options = parse_dataset_spec(dataset)
        examples = load_dataset(
            name,
            data_dir=config.data_dir,
            split=config.split,
            limit=config.limit,
            seed=config.seed,
            **options,
        )
        if config.sample is not None and config.sample < len(examples):
            # Seeded by the dataset spec too, so that adding a dataset to a run does not
            # change which examples another one keeps.
            rng = random.Random(f"{config.seed}:{dataset}")
            keep = set(rng.sample(range(len(examples)), config.sample))
            examples = [ex for i, ex in enumerate(examples) if i in keep]
        gen = config.generation
        for ex in examples:
            full_pending = (
                gen is not None
                and gen.full_context
                and (dataset, ex.id, FULL_UNITIZER, FULL, 0) not in done
            )
            if gen is not None and gen.full_context and not full_pending:
                skipped += 1
            for unitizer in config.unitizers:
                todo = []
                if full_pending:
                    todo.append((FULL, 0))
                    full_pending = False
                for label in labels:
                    for budget in config.budgets:
                        if (dataset, ex.id, unitizer, label, budget) in done:
                            skipped += 1
                        else:
                            todo.append((label, budget))
                if todo:
                    tasks.append(
                        Task(
                            dataset,
                            ex.id,
                            ex.split,
                            unitizer,
                            tuple(todo),
                            SelectionInput(ex.document, ex.query),
                            ex.reference,
                            ex.label,
                        )
                    )
    return tasks, skipped
