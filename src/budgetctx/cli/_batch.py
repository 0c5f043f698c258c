"""``budgetctx batch``: a table of documents in, a table of contexts out (thin: parse, call
:func:`budgetctx.batch.run_batch`, print)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from budgetctx._core.defaults import DEFAULT_SELECTOR
from budgetctx.cli._format import decode_escapes
from budgetctx.cli._options import (
    Budget,
    PinRegexes,
    PinSections,
    Profile,
    Query,
    Representation,
    Reserve,
    Selector,
    Separator,
    Tokenizer,
    Truncate,
    Unitizer,
    pins_from_options,
    profile_from_option,
)

__all__ = ["batch"]


def batch(
    input: Annotated[
        Path, typer.Argument(help="Documents: .jsonl, .csv or .parquet, one row per document.")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Contexts: .jsonl, .csv or .parquet (resumable).")
    ],
    budget: Budget,
    workers: Annotated[
        int | None, typer.Option(help="Processes (local) or Ray actors (--engine ray).")
    ] = None,
    text_field: Annotated[str, typer.Option(help="Column holding the text.")] = "text",
    id_field: Annotated[str, typer.Option(help="Column holding the id (else row-N).")] = "id",
    selector: Selector = DEFAULT_SELECTOR,
    tokenizer: Tokenizer = "o200k_base",
    unitizer: Unitizer = "sentence",
    representation: Representation = "tfidf",
    query: Query = None,
    profile: Profile = "auto",
    separator: Separator = "\\n",
    truncate: Truncate = False,
    pin: PinSections = None,
    pin_regex: PinRegexes = None,
    reserve: Reserve = 0,
    engine: Annotated[str, typer.Option(help="local (process pool) or ray (Ray Data).")] = (
        "local"
    ),
    address: Annotated[
        str | None, typer.Option(help="Ray cluster address, e.g. auto (default: a local one).")
    ] = None,
    progress: Annotated[bool, typer.Option(help="Progress bar on stderr.")] = True,
    overwrite: Annotated[
        bool,
        typer.Option(help="Delete OUT and its journal first and start again (no resume)."),
    ] = False,
) -> None:
    """Condense every row of INPUT into OUT; run it again to resume after an interruption.

    OUT rows: id, row, context, tokens_used, document_tokens, tokens_saved, budget, selector,
    n_units, units_kept, provenance (kept unit spans as JSON), reason, error. Rows that cannot
    be condensed (no text, corrupt line, duplicate id) are kept with their error.
    """
    from budgetctx.batch import run_batch

    # Errors (BudgetCtxError, OSError) become one line and exit 2 in the CLI's group, as for
    # every other command.
    options: dict[str, Any] = {
        "selector": selector,
        "tokenizer": tokenizer,
        "unitizer": unitizer,
        "representation": representation,
        "query": query,
        "separator": decode_escapes(separator),
        "truncate": truncate,
    }
    pins = pins_from_options(pin, pin_regex)
    if pins:
        options["pin"] = pins
    if reserve:
        options["reserve"] = reserve
    if profile != "auto":  # the default is left out, as before --profile existed
        options["profile"] = profile_from_option(profile)
    summary = run_batch(
        input,
        out,
        budget,
        workers=workers,
        engine=engine,
        address=address,
        text_field=text_field,
        id_field=id_field,
        progress=progress,
        overwrite=overwrite,
        **options,
    )
    pct = 100.0 * summary.tokens_saved / max(summary.tokens_in, 1)
    for sample in summary.error_samples:
        typer.echo(f"budgetctx: recorded error: {sample}", err=True)
    typer.echo(
        f"budgetctx: {summary.rows} rows in {summary.out} ({summary.written} new, "
        f"{summary.skipped} already done), {summary.errors} errors; tokens in "
        f"{summary.tokens_in}, out {summary.tokens_out}, saved {summary.tokens_saved} "
        f"({pct:.1f} %); {summary.seconds:.1f} s",
        err=True,
    )
