"""``budgetctx sensitivity``: RCD over the weight simplex on a validation split (thin: parse,
call :func:`budgetctx.eval._sensitivity.run_sensitivity`, print)."""

from __future__ import annotations

from typing import Annotated

import typer

from budgetctx.cli._options import (
    BudgetList,
    DataDir,
    Datasets,
    Representation,
    RunFolder,
    Tokenizer,
    Workers,
    parse_budgets,
)

__all__ = ["sensitivity"]


def sensitivity(
    dataset: Datasets,
    out: RunFolder,
    budgets: BudgetList = "256,512,1024,2048",
    step: Annotated[
        float, typer.Option(help="Grid step on the simplex; 0.1 gives 66 weight settings.")
    ] = 0.1,
    eta: Annotated[
        float | None, typer.Option(help="Log-det scale eta (default: RCD's own).")
    ] = None,
    base: Annotated[
        str, typer.Option(help="RCD spec the weights are added to, e.g. rcd:position_decay=0.")
    ] = "rcd",
    split: Annotated[
        str | None, typer.Option(help="validation (default) or test; choose on validation.")
    ] = "validation",
    limit: Annotated[int | None, typer.Option(help="The first N examples per dataset.")] = None,
    sample: Annotated[
        int | None, typer.Option(help="A seeded random sample of N examples per dataset.")
    ] = None,
    unitizer: Annotated[str, typer.Option(help="Unitizer.")] = "sentence",
    data_dir: DataDir = None,
    tokenizer: Tokenizer = "o200k_base",
    representation: Representation = "tfidf",
    seed: Annotated[int, typer.Option(help="Seed of the split and of --sample.")] = 0,
    workers: Workers = 2,
    progress: Annotated[bool, typer.Option(help="Progress bar on stderr.")] = True,
) -> None:
    """Run (or resume) RCD at every (alpha, beta, gamma) of a simplex grid; 'budgetctx report
    RUN' then draws the landscape, the loss against distance and the near-optimal share."""
    from budgetctx.eval._sensitivity import SensitivityConfig, best_table, run_sensitivity

    config = SensitivityConfig(
        datasets=tuple(dataset),
        budgets=parse_budgets(budgets),
        step=step,
        eta=eta,
        base=base,
        split=split,
        limit=limit,
        sample=sample,
        unitizer=unitizer,
        data_dir=data_dir,
        tokenizer=tokenizer,
        representation=representation,
        seed=seed,
        workers=workers,
    )
    summary = run_sensitivity(config, out, progress=progress)
    typer.echo(
        f"{summary.rows_written} rows written, {summary.rows_skipped} already done, "
        f"{summary.tasks} tasks ({len(config.labels())} weight settings) in "
        f"{summary.seconds:.1f} s -> {summary.run_dir}",
        err=True,
    )
    for example in summary.failed_examples:
        typer.echo(f"budgetctx: example failed: {example}", err=True)
    if summary.means:
        typer.echo(best_table(summary.means))
    if summary.failed_examples:
        typer.echo(
            f"budgetctx: {len(summary.failed_examples)} examples failed (ids and error classes "
            "above; no rows written for them). Fix the cause and run the same command again "
            "to resume.",
            err=True,
        )
        raise typer.Exit(1)
