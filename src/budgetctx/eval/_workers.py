"""Running sweep tasks: selection and scoring in worker processes.

The reference never reaches selection: :func:`contexts` builds every context from a
:class:`SelectionInput` (document and query only); :func:`run_task` is handed the reference
afterwards, for scoring. A task that raises is returned as a failure naming the example and
the error's class (never its message, which may quote the document), so one bad document
does not stop the sweep.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import warnings
from collections.abc import Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from budgetctx._core.results import Context
from budgetctx._errors import BudgetCtxWarning
from budgetctx.build._pipeline import PreparedDocument, prepare
from budgetctx.eval._config import SelectionInput, SweepConfig
from budgetctx.eval._labels import FULL, FULL_UNITIZER, ORACLE
from budgetctx.eval._oracle import OracleSelector
from budgetctx.eval._plan import Task
from budgetctx.eval._scorer import SweepScorer
from budgetctx.eval._store import SweepFailure, SweepRow
from budgetctx.selectors import parse_selector_spec

__all__ = ["TaskResult", "contexts", "execute", "run_task"]


@dataclass(frozen=True)
class TaskResult:
    """A task's rows, for LLM sweeps the text of each context (to build the prompts), or the
    failure that stopped it."""

    rows: list[SweepRow] = field(default_factory=list)
    texts: dict[tuple[str, int], str] = field(default_factory=dict)
    failure: SweepFailure | None = None


def contexts(
    inp: SelectionInput, unitizer: str, todo: Sequence[tuple[str, int]], config: SweepConfig
) -> tuple[PreparedDocument, dict[tuple[str, int], Context]]:
    """Selection for one example: sees only ``inp`` (no reference), by construction."""
    with warnings.catch_warnings():
        # A query with no word in common with the document falls back to the centroid; the
        # row records it (stats.relevance_source) instead of a warning per example.
        warnings.simplefilter("ignore", BudgetCtxWarning)
        doc = prepare(
            inp.document,
            tokenizer=config.tokenizer,
            unitizer=unitizer,
            representation=config.representation,
            query=inp.query,
            separator=config.separator,
        )
        # Every row records the route statistics, which read the encoding: made here, where
        # the warning is silenced (lead's contexts would not make it).
        doc.features  # noqa: B018
    out = {}
    for label, budget in todo:
        if label in (ORACLE, FULL):
            continue
        name, options = parse_selector_spec(label)
        out[(label, budget)] = doc.select(budget, selector=name, selector_options=options)
    return doc, out


_WORKER: dict[str, Any] = {}


def run_task(task: Task, config: SweepConfig) -> TaskResult:
    """The task's rows, or its failure (the error's class only)."""
    try:
        return _rows(task, config)
    except Exception as exc:  # one bad document must not stop the run; bugs show as classes
        return TaskResult(
            failure=SweepFailure(task.dataset, task.example_id, task.unitizer, _name(exc))
        )


def _name(exc: BaseException) -> str:
    cls = type(exc)
    return cls.__name__ if cls.__module__.startswith("budgetctx") else cls.__qualname__


def _rows(task: Task, config: SweepConfig) -> TaskResult:
    scorer = _WORKER.get("scorer")
    if scorer is None:
        scorer = _WORKER["scorer"] = SweepScorer(config.rouge_stemmer)
    doc, built = contexts(task.selection, task.unitizer, task.todo, config)
    # Settings that keep the same units give the same text: score it once. A sweep over
    # selector parameters (e.g. RCD's weight simplex) repeats contexts often, and at budgets
    # the document fits every setting sends the whole document.
    memo: dict[str, dict[str, float]] = {}

    def score(text: str) -> dict[str, float]:
        found = memo.get(text)
        if found is None:
            found = memo[text] = scorer(text, task.reference)
        return dict(found)

    oracle: OracleSelector | None = None
    rows = []
    texts: dict[tuple[str, int], str] = {}
    for label, budget in task.todo:
        if label == FULL:
            # The baseline the paper compares with: the whole document, whatever its length.
            texts[(label, budget)] = doc.text
            rows.append(
                SweepRow(
                    dataset=task.dataset,
                    example_id=task.example_id,
                    unitizer=FULL_UNITIZER,
                    selector=FULL,
                    budget=0,
                    split=task.split,
                    context_tokens=doc.document_tokens,
                    document_tokens=doc.document_tokens,
                    n_units=doc.n_units,
                    kept=tuple(range(doc.n_units)),
                    metrics=score(doc.text),
                    timings={"prepare": doc.timings_ms["prepare"]},
                    stats={},
                )
            )
            continue
        if label == ORACLE:
            # The only place a selector sees the reference; the row is labelled "oracle".
            if oracle is None:
                oracle = OracleSelector(doc, task.reference, use_stemmer=config.rouge_stemmer)
            ctx = doc.select(budget, selector=oracle, whole_if_fits=False)
        else:
            ctx = built[(label, budget)]
        if config.generation is not None:
            texts[(label, budget)] = ctx.text
        # lead's and shuffled's contexts, and a whole document's, hold no phi and rho (their
        # units are not encoded): the row takes them from the prepared document
        route_stats = ctx.stats if "phi" in ctx.stats else doc.stats(budget).to_dict()
        stats = {**route_stats, "relevance_source": doc.relevance_source}
        timings = {k: v for k, v in ctx.timings_ms.items() if k in ("select", "render")}
        timings["prepare"] = doc.timings_ms["prepare"]
        rows.append(
            SweepRow(
                dataset=task.dataset,
                example_id=task.example_id,
                unitizer=task.unitizer,
                selector=label,
                budget=budget,
                split=task.split,
                context_tokens=ctx.tokens_used,
                document_tokens=ctx.document_tokens,
                n_units=ctx.n_units,
                kept=ctx.kept_ids,
                metrics=score(ctx.text),
                timings=timings,
                stats=stats,
                reason=ctx.reason,
            )
        )
    return TaskResult(rows, texts)


def _close_fds(fds: tuple[int, ...]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def execute(
    tasks: list[Task], config: SweepConfig, *, close_fds: tuple[int, ...] = ()
) -> Iterable[tuple[Task, TaskResult]]:
    """Results as they complete: in this process (``workers=1``) or a process pool.

    ``close_fds`` are closed in every forked worker: the run folder's lock, so that a killed
    sweep's lock goes with its parent process instead of with its last worker.
    """
    if config.workers == 1 or len(tasks) <= 1:
        for task in tasks:
            yield task, run_task(task, config)
        return
    # Biggest documents first, so that a long one does not start last and hold up the end.
    tasks = sorted(tasks, key=lambda t: -len(t.selection.document))
    ctx = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
    with ProcessPoolExecutor(
        max_workers=config.workers,
        mp_context=ctx,
        initializer=_close_fds,
        # Only forked workers hold copies of our descriptors; in a spawned one the same
        # numbers could be anything.
        initargs=(close_fds if ctx.get_start_method() == "fork" else (),),
    ) as pool:
        pending: set[Future[TaskResult]] = set()
        owner: dict[Future[TaskResult], Task] = {}
        queue = iter(tasks)

        def submit(task: Task) -> None:
            fut = pool.submit(run_task, task, config)
            owner[fut] = task
            pending.add(fut)

        try:
            # Keep a bounded number of tasks in flight so that documents are not all pickled
            # up front and an interrupt cancels little.
            for task in queue:
                submit(task)
                if len(pending) >= 2 * config.workers:
                    break
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    yield owner.pop(fut), fut.result()
                    nxt = next(queue, None)
                    if nxt is not None:
                        submit(nxt)
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise
