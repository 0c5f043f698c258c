"""Budget x selector x unitizer sweeps over datasets, persisted row by row.

The parent process holds the run folder's lock, plans the tasks, hands them to the workers
(:mod:`budgetctx.eval._workers`), sends contexts to an LLM for end-to-end sweeps, and is the
only writer of the SQLite store: it commits each task's rows as soon as they arrive, so a
killed sweep loses nothing and a re-run skips what is done.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from budgetctx._core.progress import Progress
from budgetctx.eval._config import SweepConfig
from budgetctx.eval._llm_runner import LLMRunner
from budgetctx.eval._lock import RunLock
from budgetctx.eval._plan import plan_tasks
from budgetctx.eval._scorer import SweepScorer
from budgetctx.eval._store import SweepFailure, SweepRow, SweepStore
from budgetctx.eval._workers import execute

__all__ = ["SweepSummary", "run_sweep"]


@dataclass(frozen=True)
class SweepSummary:
    """What a sweep did.

    >>> SweepSummary("run", 4, 0, 2, 0.5, {}).ok
    True
    """

    run_dir: str
    rows_written: int
    rows_skipped: int
    tasks: int
    seconds: float
    #: dataset -> selector -> budget -> mean ROUGE-1 (accuracy for classification rows)
    means: dict[str, dict[str, dict[int, float]]]
    #: LLM sweeps: prompts sent to the model (cache misses), replies from the cache, and the
    #: requests that failed for good (their rows are not written; resume retries them)
    generator_calls: int = 0
    cache_hits: int = 0
    failures: tuple[str, ...] = ()
    #: the response cache file (LLM sweeps)
    cache_path: str | None = None
    #: examples that could not be processed (id and error class); resume retries them
    failed_examples: tuple[SweepFailure, ...] = ()

    @property
    def ok(self) -> bool:
        """True when every task and every request succeeded."""
        return not self.failures and not self.failed_examples

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_sweep(
    config: SweepConfig,
    out: str | Path,
    *,
    progress: bool | Callable[[int, int], None] = True,
) -> SweepSummary:
    """Run (or resume) a sweep into the run folder ``out``; rows already there are skipped.

    Only one sweep may use a run folder at a time: a second one raises
    :class:`~budgetctx.InvalidParameterError` at once, naming the process that holds it.
    """
    start = time.perf_counter()
    # The store's checks run after the lock: a sweep starting beside us must not read our
    # half-created store as a damaged one.
    SweepStore.check_run_dir(out)
    with RunLock(out) as lock:
        store = SweepStore(out)
        runner: LLMRunner | None = None
        failed: list[SweepFailure] = []
        try:
            store.check_settings(config.settings())
            tasks, skipped = plan_tasks(config, store.done_keys())
            if config.generation is not None:
                runner = LLMRunner(
                    config.generation,
                    out,
                    tokenizer=config.tokenizer,
                    scorer=SweepScorer(config.rouge_stemmer),
                )
            written = 0
            with Progress(len(tasks), progress, label="sweep") as bar:
                held = lock.fileno()
                fds = (held,) if held is not None else ()
                for task, result in execute(tasks, config, close_fds=fds):
                    bar.advance()
                    if result.failure is not None:
                        store.record_failure(result.failure)
                        failed.append(result.failure)
                        continue
                    rows = result.rows
                    if runner is not None:
                        rows = runner.complete(
                            rows,
                            result.texts,
                            dataset=task.dataset,
                            query=task.selection.query,
                            reference=task.reference,
                            label=task.label,
                        )
                    written += store.write(rows)
            means = _means(store.rows(), config)
        finally:
            store.close()
            if runner is not None:
                runner.close()
    return SweepSummary(
        run_dir=str(Path(out)),
        rows_written=written,
        rows_skipped=skipped,
        tasks=len(tasks),
        seconds=round(time.perf_counter() - start, 2),
        means=means,
        generator_calls=runner.calls if runner is not None else 0,
        cache_hits=runner.hits if runner is not None else 0,
        failures=tuple(runner.errors) if runner is not None else (),
        cache_path=str(runner.cache_path) if runner is not None else None,
        failed_examples=tuple(failed),
    )


def _means(rows: Iterable[SweepRow], config: SweepConfig) -> dict[str, dict[str, dict[int, float]]]:
    acc: dict[str, dict[str, dict[int, list[float]]]] = {}
    for r in rows:
        # ROUGE-1, or accuracy for a classification sweep (its rows have no ROUGE).
        value = r.metrics.get("rouge1", r.metrics.get("correct"))
        if value is None:
            continue
        acc.setdefault(r.dataset, {}).setdefault(r.selector, {}).setdefault(r.budget, []).append(
            float(value)
        )
    return {
        d: {
            s: {b: round(float(np.mean(v)), 4) for b, v in sorted(by_b.items())}
            for s, by_b in by_s.items()
        }
        for d, by_s in acc.items()
    }
