"""Budget x selector x unitizer sweeps over a dataset, persisted row by row.

The reference never reaches selection: a worker builds contexts from a
:class:`SelectionInput` (document and query only) and is handed the reference afterwards,
for scoring. The parent process is the only writer of the SQLite store and commits each
task's rows as soon as they arrive.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from budgetctx._errors import BudgetCtxWarning, InvalidParameterError
from budgetctx._version import __version__
from budgetctx.context import Context
from budgetctx.eval._llm import FULL, FULL_UNITIZER, GenerationConfig, LLMRunner
from budgetctx.eval._oracle import OracleSelector
from budgetctx.eval._store import RowKey, SweepRow, SweepStore
from budgetctx.pipeline import PreparedDocument, prepare
from budgetctx.selectors import get_selector, parse_selector_spec

__all__ = [
    "ORACLE",
    "SelectionInput",
    "SweepConfig",
    "SweepSummary",
    "parse_dataset_spec",
    "parse_selector_spec",
    "run_sweep",
]

ORACLE = "oracle"


_FILE_LOADERS = ("jsonl", "csv", "mimic-bhc")


def parse_dataset_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Dataset names, plus files for the file loaders with an optional column mapping:
    ``"jsonl:notes.jsonl?document=text&reference=summary"``.

    >>> parse_dataset_spec("jsonl:x.jsonl?document=text")
    ('jsonl', {'path': 'x.jsonl', 'document': 'text'})
    >>> parse_dataset_spec("leval:news_summ")
    ('leval:news_summ', {})
    """
    kind, sep, rest = spec.partition(":")
    if not sep or kind not in _FILE_LOADERS:
        return spec, {}
    path, _, query = rest.partition("?")
    options: dict[str, Any] = {"path": path}
    for item in filter(None, query.split("&")):
        key, _, value = item.partition("=")
        options[key] = value
    return kind, options


@dataclass(frozen=True)
class SelectionInput:
    """Everything selection may see about an example. There is no reference here."""

    document: str
    query: str | None


@dataclass(frozen=True)
class SweepConfig:
    """What to run. ``selectors`` are registry names, optionally with options
    (``"rcd:alpha=0.6"``); the extractive oracle is added when ``oracle`` is true."""

    datasets: tuple[str, ...]
    budgets: tuple[int, ...] = (256, 512, 1024, 2048)
    selectors: tuple[str, ...] = (
        "lead",
        "shuffled",
        "sliding",
        "hierarchical",
        "graphcluster",
        "mmr",
        "rcd",
    )
    unitizers: tuple[str, ...] = ("sentence",)
    split: str | None = None
    limit: int | None = None
    data_dir: str | None = None
    tokenizer: str = "o200k_base"
    representation: str = "tfidf"
    separator: str = "\n"
    oracle: bool = True
    rouge_stemmer: bool = True
    seed: int = 0
    workers: int = field(default_factory=lambda: max(1, min(2, os.cpu_count() or 1)))
    #: an end-to-end sweep: every context (and the full document) goes to an LLM
    generation: GenerationConfig | None = None

    def __post_init__(self) -> None:
        if not self.datasets:
            raise InvalidParameterError(
                "No dataset given; pass at least one, e.g. --dataset cochrane.",
                parameter="datasets",
                value=[],
            )
        for b in self.budgets:
            if isinstance(b, bool) or not isinstance(b, int) or b <= 0:
                raise InvalidParameterError(
                    f"Budgets must be positive integers, got {b!r}; e.g. 256,512,1024,2048.",
                    parameter="budgets",
                    value=b,
                )
        for spec in self.selectors:
            name, options = parse_selector_spec(spec)
            get_selector(name, **options)  # fails early with the list of valid names
        if self.split not in (None, "validation", "test"):
            raise InvalidParameterError(
                f"split must be 'validation', 'test' or None (both), got {self.split!r}.",
                parameter="split",
                value=self.split,
            )
        if self.generation is not None and self.oracle:
            raise InvalidParameterError(
                "The extractive oracle reads the reference, so an LLM sweep does not send it "
                "to the model; pass oracle=False (--no-oracle) with generation.",
                parameter="oracle",
                value=True,
            )
        if self.workers < 1:
            raise InvalidParameterError(
                f"workers must be >= 1, got {self.workers}.",
                parameter="workers",
                value=self.workers,
            )

    def settings(self) -> dict[str, Any]:
        """What must stay the same when a run is resumed or extended."""
        return {
            "tokenizer": self.tokenizer,
            "representation": self.representation,
            "separator": self.separator,
            "rouge_stemmer": self.rouge_stemmer,
            "seed": self.seed,
            "budgetctx": __version__,
            **({"generation": self.generation.settings()} if self.generation is not None else {}),
        }


@dataclass(frozen=True)
class SweepSummary:
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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Task:
    dataset: str
    example_id: str
    split: str
    unitizer: str
    todo: tuple[tuple[str, int], ...]  # (selector label, budget)
    selection: SelectionInput
    reference: str
    label: str | None = None


def _contexts(
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
    out = {}
    for label, budget in todo:
        if label in (ORACLE, FULL):
            continue
        name, options = parse_selector_spec(label)
        out[(label, budget)] = doc.select(budget, selector=name, selector_options=options)
    return doc, out


class _Scorer:
    """ROUGE-1/2/L F1 (rouge-score), token F1 and the paper's n-gram overlap."""

    def __init__(self, use_stemmer: bool) -> None:
        from budgetctx.eval.metrics import Rouge, paper_overlap, token_f1

        self.rouge = Rouge(use_stemmer=use_stemmer)
        self._token_f1 = token_f1
        self._overlap = paper_overlap

    def __call__(self, candidate: str, reference: str) -> dict[str, float]:
        r = self.rouge.score(candidate, reference)
        tf = self._token_f1(candidate, reference)
        ov = self._overlap(candidate, reference)
        out = {}
        for name, prf in r.to_dict().items():
            out[name] = round(float(prf["f"]), 6)
            out[f"{name}_p"] = round(float(prf["p"]), 6)
            out[f"{name}_r"] = round(float(prf["r"]), 6)
        out["token_f1"] = round(float(tf.f), 6)
        out["overlap1_f"] = round(float(ov["unigram"].f), 6)
        out["overlap2_f"] = round(float(ov["bigram"].f), 6)
        return out


_WORKER: dict[str, Any] = {}


#: a task's rows, and for LLM sweeps the text of each context (to build the prompts)
_TaskResult = tuple[list[SweepRow], dict[tuple[str, int], str]]


def _run_task(task: _Task, config: SweepConfig) -> _TaskResult:
    scorer = _WORKER.get("scorer")
    if scorer is None:
        scorer = _WORKER["scorer"] = _Scorer(config.rouge_stemmer)
    doc, contexts = _contexts(task.selection, task.unitizer, task.todo, config)
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
                    metrics=scorer(doc.text, task.reference),
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
            ctx = contexts[(label, budget)]
        if config.generation is not None:
            texts[(label, budget)] = ctx.text
        stats = {**ctx.stats, "relevance_source": ctx.relevance_source}
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
                metrics=scorer(ctx.text, task.reference),
                timings=timings,
                stats=stats,
                reason=ctx.reason,
            )
        )
    return rows, texts


def _tasks(config: SweepConfig, done: set[RowKey]) -> tuple[list[_Task], int]:
    from budgetctx.eval.datasets import load_dataset

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
                        _Task(
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


def run_sweep(
    config: SweepConfig,
    out: str | Path,
    *,
    progress: bool | Callable[[int, int], None] = True,
) -> SweepSummary:
    """Run (or resume) a sweep into the run folder ``out``; rows already there are skipped."""
    start = time.perf_counter()
    store = SweepStore(out)
    runner: LLMRunner | None = None
    try:
        store.check_settings(config.settings())
        tasks, skipped = _tasks(config, store.done_keys())
        if config.generation is not None:
            runner = LLMRunner(
                config.generation,
                out,
                tokenizer=config.tokenizer,
                scorer=_Scorer(config.rouge_stemmer),
            )
        written = 0
        with _Progress(len(tasks), progress) as bar:
            for task, (rows, texts) in _execute(tasks, config):
                if runner is not None:
                    rows = runner.complete(
                        rows,
                        texts,
                        dataset=task.dataset,
                        query=task.selection.query,
                        reference=task.reference,
                        label=task.label,
                    )
                written += store.write(rows)
                bar.advance()
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
    )


def _execute(tasks: list[_Task], config: SweepConfig) -> Iterable[tuple[_Task, _TaskResult]]:
    if config.workers == 1 or len(tasks) <= 1:
        for task in tasks:
            yield task, _run_task(task, config)
        return
    # Biggest documents first, so that a long one does not start last and hold up the end.
    tasks = sorted(tasks, key=lambda t: -len(t.selection.document))
    ctx = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
    with ProcessPoolExecutor(max_workers=config.workers, mp_context=ctx) as pool:
        pending: set[Future[_TaskResult]] = set()
        owner: dict[Future[_TaskResult], _Task] = {}
        queue = iter(tasks)

        def submit(task: _Task) -> None:
            fut = pool.submit(_run_task, task, config)
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


class _Progress:
    """A rich progress bar with ETA on stderr, or a callback, or nothing."""

    def __init__(self, total: int, progress: bool | Callable[[int, int], None]) -> None:
        self.total, self.done = total, 0
        self.callback = progress if callable(progress) else None
        self.rich: Any = None
        if progress is True and total:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.rich = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
            )
            self.task_id = self.rich.add_task("sweep", total=total)

    def __enter__(self) -> _Progress:
        if self.rich is not None:
            self.rich.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.rich is not None:
            self.rich.stop()

    def advance(self) -> None:
        self.done += 1
        if self.rich is not None:
            self.rich.advance(self.task_id)
        if self.callback is not None:
            self.callback(self.done, self.total)
