"""Ray Data: condense a Dataset of documents on a Ray cluster (``pip install 'budgetctx[ray]'``).

Imported only by those who ask for it; ``import budgetctx`` never imports Ray or pyarrow.

>>> import ray, budgetctx.batch.ray                                   # doctest: +SKIP
>>> ds = ray.data.read_parquet("s3://bucket/notes/")           # doctest: +SKIP
>>> out = budgetctx.batch.ray.build_contexts(ds, 512, concurrency=32) # doctest: +SKIP
>>> out.write_parquet("s3://bucket/contexts/")                 # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from budgetctx._core.validation import (
    Constraint,
    InstanceOf,
    Interval,
    NoneOr,
    OneOf,
    Predicate,
    validate,
)
from budgetctx._errors import InputError, InvalidParameterError
from budgetctx.batch._build import ContextBuilder, ItemError, _recordable
from budgetctx.batch._tables import OUTPUT_COLUMNS, context_row, text_problem

__all__ = ["CONTEXT_COLUMNS", "build_contexts"]

#: the columns added to every row (``context``, ``tokens_used`` ..., ``error``)
CONTEXT_COLUMNS: tuple[str, ...] = tuple(c for c in OUTPUT_COLUMNS if c not in ("id", "row"))

_OWNER = "budgetctx.batch.ray.build_contexts"


def _is_concurrency(value: Any) -> bool:
    if isinstance(value, tuple):
        return (
            len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value)
            and value[0] <= value[1]
        )
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


_CONSTRAINTS: Mapping[str, Constraint] = {
    "text_column": InstanceOf(str, "a str", fix="the column that holds each document's text."),
    "id_column": NoneOr(InstanceOf(str, "a str"), fix="the column that names each row."),
    "concurrency": NoneOr(
        Predicate(_is_concurrency, "an int >= 1 or a (min, max) pair of them"),
        fix="e.g. concurrency=8 actors, or (2, 16) to autoscale.",
    ),
    "num_cpus": Interval(float, 0, closed="neither", fix="CPUs per actor, e.g. num_cpus=1."),
    "batch_size": Interval(int, 1, fix="rows per call of an actor, e.g. batch_size=64."),
    "on_error": OneOf(("raise", "record"), fix="'record' fills the error column and goes on."),
}


class _ContextActor:
    """One Ray actor: the components are set up once in ``__init__``, then reused."""

    def __init__(
        self,
        budget: int,
        text_column: str,
        id_column: str | None,
        on_error: str,
        options: dict[str, Any],
    ) -> None:
        self.builder = ContextBuilder(budget, **options)
        self.text_column = text_column
        self.id_column = id_column
        self.on_error = on_error

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        from budgetctx.batch._build import _failure, _naming

        if self.text_column not in batch.column_names:
            raise InvalidParameterError(
                f"The dataset has no column {self.text_column!r} (it has "
                f"{batch.column_names}); pass text_column=... naming the text column.",
                parameter="text_column",
                value=self.text_column,
            )
        texts = batch.column(self.text_column).to_pylist()
        ids = (
            batch.column(self.id_column).to_pylist()
            if self.id_column is not None and self.id_column in batch.column_names
            else [None] * len(texts)
        )
        rows = []
        for index, (text, ident) in enumerate(zip(texts, ids, strict=True)):
            name = None if ident is None else str(ident)
            # The rows budgetctx batch refuses (no text, not a string, blank) are refused here
            # too, so that the two engines give the same rows.
            problem = text_problem(text, self.text_column)
            result: Any
            if problem is not None and self.on_error == "record":
                result = ItemError(index=index, id=name, error="InputError", message=problem)
                rows.append(context_row(result))
                continue
            try:
                if problem is not None:
                    raise InputError(problem, value=self.text_column)
                result = self.builder(text)
            except BaseException as exc:
                # A native failure (a Rust panic is a BaseException) is the row's error too.
                if self.on_error == "raise" or not _recordable(exc):
                    exc.add_note(_naming(index, name) + " of a Ray batch")
                    raise
                result = _failure(index, name, exc)
            rows.append(context_row(result))
        for column in CONTEXT_COLUMNS:
            if column in batch.column_names:
                batch = batch.drop_columns([column])
            kind = getattr(pa, OUTPUT_COLUMNS[column])()
            batch = batch.append_column(
                pa.field(column, kind), pa.array([r[column] for r in rows], type=kind)
            )
        return batch


def build_contexts(
    ds: Any,
    budget: int,
    *,
    text_column: str = "text",
    id_column: str | None = "id",
    concurrency: int | tuple[int, int] | None = None,
    num_cpus: float = 1.0,
    batch_size: int = 64,
    on_error: Literal["raise", "record"] = "raise",
    **options: Any,
) -> Any:
    """A lazy ``ray.data.Dataset``: ``ds`` with :data:`CONTEXT_COLUMNS` added to every row.

    Runs ``map_batches`` with an actor pool (``concurrency`` actors, or a ``(min, max)``
    autoscaling range; ``num_cpus`` each), every actor setting the tokenizer, unitizer,
    representation and selector up once. ``options`` go to :func:`~budgetctx.build_context`.
    The rows equal the one-machine ``budgetctx batch`` output, column for column (a row with
    no text, a non-string or a blank text is an error in both), except duplicated ids: actors
    see batches, not the whole dataset, so only ``budgetctx batch`` (``--engine ray`` too)
    records them. A bad option raises here, before the job starts.
    """
    settings = validate(
        _OWNER,
        _CONSTRAINTS,
        {
            "text_column": text_column,
            "id_column": id_column,
            "concurrency": concurrency,
            "num_cpus": num_cpus,
            "batch_size": batch_size,
            "on_error": on_error,
        },
    )
    import ray.data

    ContextBuilder(budget, **options)
    conc = settings["concurrency"]
    if conc is None:
        compute = ray.data.ActorPoolStrategy(min_size=1)
    elif isinstance(conc, tuple):
        compute = ray.data.ActorPoolStrategy(min_size=conc[0], max_size=conc[1])
    else:
        compute = ray.data.ActorPoolStrategy(size=conc)
    return ds.map_batches(
        _ContextActor,
        fn_constructor_kwargs={
            "budget": budget,
            "text_column": text_column,
            "id_column": id_column,
            "on_error": on_error,
            "options": dict(options),
        },
        batch_format="pyarrow",
        batch_size=settings["batch_size"],
        compute=compute,
        num_cpus=settings["num_cpus"],
    )
