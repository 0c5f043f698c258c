"""The research commands: ``sweep``, ``report``, ``cost``, ``calibrate``, ``route-eval``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from budgetctx._core.progress import Working
from budgetctx.cli._format import (
    cost_table,
    means_table,
)
from budgetctx.cli._options import (
    BudgetList,
    CandidateSelectors,
    DataDir,
    Datasets,
    Metric,
    Representation,
    RunFolder,
    Tokenizer,
    Workers,
    parse_budgets,
)


def sweep(
    dataset: Datasets,
    out: RunFolder,
    budgets: BudgetList = "256,512,1024,2048",
    selectors: Annotated[
        str, typer.Option(help="Comma-separated selectors; options as name:key=value.")
    ] = "lead,shuffled,sliding,hierarchical,graphcluster,mmr,rcd",
    unitizers: Annotated[str, typer.Option(help="Comma-separated unitizers.")] = "sentence",
    split: Annotated[str | None, typer.Option(help="validation, test, or both.")] = None,
    limit: Annotated[int | None, typer.Option(help="At most this many examples.")] = None,
    data_dir: DataDir = None,
    tokenizer: Tokenizer = "o200k_base",
    representation: Representation = "tfidf",
    oracle: Annotated[
        bool | None,
        typer.Option(help="Add the extractive oracle (default: yes, except with --generate)."),
    ] = None,
    workers: Workers = 2,
    generate: Annotated[
        str | None,
        typer.Option(help="Send every context to an LLM: 'local' or 'openai:MODEL'."),
    ] = None,
    prompt: Annotated[
        str | None, typer.Option(help="Prompt template (default: the dataset's).")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option(help="Reply length cap (default 200; 50 for labels).")
    ] = None,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.0,
    cache: Annotated[
        Path | None, typer.Option(help="Response cache file (default RUN/responses.sqlite).")
    ] = None,
    store_prompts: Annotated[
        bool, typer.Option(help="Also keep prompt text in the cache (it is PHI).")
    ] = False,
    full_context: Annotated[
        bool, typer.Option(help="With --generate, add the full-document baseline.")
    ] = True,
    bertscore: Annotated[
        bool, typer.Option(help="With --generate, score replies with BERTScore too.")
    ] = True,
    prices: Annotated[
        Path | None, typer.Option(help="Price table (JSON) extending the bundled one.")
    ] = None,
    gen_option: Annotated[
        list[str] | None,
        typer.Option(
            "--gen-option", help="Backend option key=value (base_url=..., concurrency=4 ...)."
        ),
    ] = None,
) -> None:
    """Run (or resume) budgets x selectors x unitizers over datasets; every row is saved.

    With --generate every context (and the whole document) goes to an LLM; replies are cached,
    so a resumed or repeated sweep pays for nothing twice.
    """
    from budgetctx.eval import GenerationConfig, SweepConfig, run_sweep
    from budgetctx.selectors import split_selector_specs

    generation = (
        GenerationConfig(
            generate,
            prompt=prompt,
            max_tokens=max_tokens,
            temperature=temperature,
            cache=str(cache) if cache is not None else None,
            store_prompts=store_prompts,
            full_context=full_context,
            bertscore=bertscore,
            prices=str(prices) if prices is not None else None,
            options=_options(gen_option or []),
        )
        if generate is not None
        else None
    )
    config = SweepConfig(
        datasets=tuple(dataset),
        budgets=parse_budgets(budgets),
        selectors=tuple(split_selector_specs(selectors)),
        unitizers=tuple(u.strip() for u in unitizers.split(",") if u.strip()),
        split=split,
        limit=limit,
        data_dir=data_dir,
        tokenizer=tokenizer,
        representation=representation,
        oracle=oracle if oracle is not None else generation is None,
        workers=workers,
        generation=generation,
    )
    summary = run_sweep(config, out)
    typer.echo(
        f"{summary.rows_written} rows written, {summary.rows_skipped} already done, "
        f"{summary.tasks} tasks in {summary.seconds:.1f} s -> {summary.run_dir}",
        err=True,
    )
    if generation is not None:
        typer.echo(
            f"{summary.generator_calls} prompts sent to {generation.generator}, "
            f"{summary.cache_hits} answered from the cache ({summary.cache_path})",
            err=True,
        )
    for failure in summary.failures:
        typer.echo(f"budgetctx: generation failed: {failure}", err=True)
    for example in summary.failed_examples:
        typer.echo(f"budgetctx: example failed: {example}", err=True)
    if summary.means:
        typer.echo(means_table(summary.means))
    if summary.failures:
        typer.echo(
            f"budgetctx: {len(summary.failures)} requests failed; their rows were not written. "
            "Fix the cause and run the same command again to resume.",
            err=True,
        )
    if summary.failed_examples:
        typer.echo(
            f"budgetctx: {len(summary.failed_examples)} examples failed (ids and error classes "
            "above; no rows written for them). Run one alone with 'budgetctx select' to see "
            "why, fix it, and run the same command again to resume.",
            err=True,
        )
    if not summary.ok:
        raise typer.Exit(1)


def report(
    run: Annotated[Path, typer.Argument(help="A sweep's run folder.")],
    out: Annotated[Path | None, typer.Option(help="Output folder (default RUN/report).")] = None,
    metric: Annotated[
        str | None,
        typer.Option(help="rouge1, rouge2, rougeL, token_f1, bertscore_f, correct ..."),
    ] = None,
    split: Annotated[str | None, typer.Option(help="validation, test, or both.")] = None,
    bounds_selectors: Annotated[
        str | None, typer.Option(help="Selectors for oracle bounds, e.g. lead,mmr,rcd.")
    ] = None,
    price_model: Annotated[
        str | None,
        typer.Option(help="LLM sweeps: also price every call as this model, e.g. gpt-4o."),
    ] = None,
    prices: Annotated[
        Path | None, typer.Option(help="Price table (JSON) extending the bundled one.")
    ] = None,
) -> None:
    """Write Markdown/CSV tables and PNG figures (paper-style) for a sweep."""
    from budgetctx.eval.report import write_report

    files = Working(f"writing the report of {run}").call(
        write_report,
        run,
        out_dir=out,
        metric=metric,
        split=split,
        selectors_for_bounds=bounds_selectors,
        price_model=price_model,
        prices=prices,
    )
    typer.echo(str(files.report))


def cost(
    budget: Annotated[int, typer.Option(help="Context budget (tokens).")],
    output_tokens: Annotated[int, typer.Option(help="Reply length S (tokens).")] = 300,
    calls_per_year: Annotated[int, typer.Option(help="Calls per year.")] = 10_000,
    model: Annotated[str, typer.Option(help="Priced model, e.g. gpt-4o.")] = "gpt-4o",
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            "-d",
            help="Compare with full documents of this dataset (read from --data-dir).",
        ),
    ] = None,
    data_dir: DataDir = None,
    split: Annotated[str | None, typer.Option(help="validation, test, or both.")] = None,
    limit: Annotated[int | None, typer.Option(help="At most this many documents.")] = None,
    tokenizer: Tokenizer = "o200k_base",
    overhead_tokens: Annotated[
        int, typer.Option(help="Prompt template tokens added to every call.")
    ] = 0,
    prices: Annotated[
        Path | None, typer.Option(help="Price table (JSON) extending the bundled one.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Cost per call and per year (the paper's Eq. 1) at a budget, against full context."""
    from budgetctx.eval import document_token_counts
    from budgetctx.generate import cost_report, get_price, load_prices

    price = get_price(model, prices=load_prices(prices))
    lengths = (
        document_token_counts(
            dataset, tokenizer=tokenizer, data_dir=data_dir, split=split, limit=limit
        )
        if dataset is not None
        else None
    )
    result = cost_report(
        price=price,
        budget=budget,
        output_tokens=output_tokens,
        calls_per_year=calls_per_year,
        document_tokens=lengths,
        overhead_tokens=overhead_tokens,
    )
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
        return
    typer.echo(cost_table(result, price, dataset=dataset if lengths is not None else None))


def calibrate(
    run: Annotated[Path, typer.Argument(help="A sweep's run folder.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Router config to write (JSON).")],
    metric: Metric = "rouge1",
    kind: Annotated[str, typer.Option(help="feature (tree + budget fallback) or budget.")] = (
        "feature"
    ),
    selectors: CandidateSelectors = None,
    dataset: Annotated[
        list[str] | None, typer.Option("--dataset", "-d", help="Calibrate on these only.")
    ] = None,
) -> None:
    """Fit a router on the validation rows of a sweep; use it with load_router(path)."""
    from budgetctx.eval import calibrate as fit
    from budgetctx.selectors import split_selector_specs

    router = fit(
        run,
        kind=kind,  # type: ignore[arg-type]
        metric=metric,
        candidates=tuple(split_selector_specs(selectors)) if selectors else None,
        datasets=dataset,
        out=out,
    )
    prov = router.provenance
    typer.echo(
        f"{out}: {router.kind} router on {prov['instances']} validation instances of "
        f"{', '.join(prov['data'])}; mean {metric} {prov['calibration_mean']:.4f}"
    )


def route_eval_cmd(
    run: Annotated[Path, typer.Argument(help="A sweep's run folder.")],
    out: Annotated[Path | None, typer.Option(help="Output folder (default RUN/route_eval).")] = (
        None
    ),
    metric: Metric = "rouge1",
    selectors: CandidateSelectors = None,
    router: Annotated[
        Path | None, typer.Option(help="Evaluate this router config instead of calibrating.")
    ] = None,
    calibration: Annotated[str, typer.Option(help="pooled or per-dataset.")] = "pooled",
    lodo: Annotated[
        bool,
        typer.Option(
            help="RUN is a benchmarks/peer_grid.py result: calibrate on every dataset but "
            "one, score the one left out, for each dataset in turn."
        ),
    ] = False,
    peers: Annotated[
        str | None,
        typer.Option(
            help="With --lodo: the rivals besides the candidates (comma-separated columns of "
            "the grid; default Lead and the three sumy rankers), e.g. "
            "'lead,sumy-lsa+pins,sumy-lexrank+pins,sumy-sumbasic+pins' for the peers run "
            "with budgetctx's pins (peer_grid.py --peer-pins)."
        ),
    ] = None,
) -> None:
    """Routers vs fixed selectors vs oracle bounds on the held-out test split."""
    from budgetctx.eval import route_eval
    from budgetctx.router import load_router
    from budgetctx.selectors import split_selector_specs

    if lodo:
        from budgetctx.eval._lodo import lodo_route_eval

        result = lodo_route_eval(
            json.loads(run.read_text(encoding="utf-8")),
            # A peer-grid result has no run rows to follow: the paper's three by default.
            candidates=tuple(split_selector_specs(selectors or "lead,mmr,rcd")),
            peers=None if peers is None else tuple(filter(None, map(str.strip, peers.split(",")))),
            out_dir=out,
        )
        typer.echo(result.markdown)
        typer.echo("\n".join(result.files), err=True)
        return

    report = route_eval(
        run,
        out_dir=out,
        metric=metric,
        candidates=tuple(split_selector_specs(selectors)) if selectors else None,
        router=load_router(router) if router is not None else None,
        calibration=calibration,  # type: ignore[arg-type]
    )
    typer.echo(report.markdown)
    typer.echo("\n".join(report.files), err=True)


def _options(items: list[str]) -> dict[str, Any]:
    """``key=value`` pairs, read as selector specs' options are."""
    from budgetctx.selectors import parse_options  # here: the other commands need no numpy

    return parse_options(
        items, fix="e.g. --gen-option base_url=http://localhost:8080/v1.", parameter="gen_option"
    )
