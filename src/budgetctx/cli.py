"""The ``budgetctx`` command line: parse, call the library, print. No logic here."""

from __future__ import annotations

import codecs
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from budgetctx._errors import BudgetCtxError
from budgetctx._io import decode_document, read_document
from budgetctx.context import Context
from budgetctx.pipeline import DEFAULT_SELECTOR, build_context

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Budgeted, token-exact context construction for long documents.",
)


def _fail(exc: BudgetCtxError) -> None:
    typer.echo(f"budgetctx: error: {exc}", err=True)
    raise typer.Exit(2)


def _summary(ctx: Context) -> str:
    kept = len(ctx.units)
    return (
        f"budgetctx: {ctx.tokens_used}/{ctx.budget} tokens ({ctx.tokenizer}), "
        f"{kept} of {ctx.n_units} units kept, document {ctx.document_tokens} tokens, "
        f"selector={ctx.selector}"
        + (f" (routed: {ctx.route.reason})" if ctx.route else "")
        + f" unitizer={ctx.unitizer}, "
        f"{ctx.timings_ms.get('total', 0.0):.1f} ms" + (f"; {ctx.reason}" if ctx.reason else "")
    )


@app.command()
def select(
    file: Annotated[str, typer.Argument(help="Text file to condense, or '-' for stdin.")],
    budget: Annotated[int, typer.Option("--budget", "-b", help="Token budget (> 0).")],
    selector: Annotated[
        str, typer.Option(help="Selector name, or auto (the bundled router).")
    ] = DEFAULT_SELECTOR,
    router: Annotated[
        Path | None, typer.Option(help="Route with this router config (from calibrate).")
    ] = None,
    unitizer: Annotated[str, typer.Option(help="Unitizer name.")] = "sentence",
    representation: Annotated[str, typer.Option(help="Representation name.")] = "tfidf",
    tokenizer: Annotated[
        str, typer.Option(help="Tokenizer: o200k_base, cl100k_base, words, a model name, hf:PATH.")
    ] = "o200k_base",
    query: Annotated[str | None, typer.Option(help="Relevance query (else the centroid).")] = None,
    separator: Annotated[
        str, typer.Option(help="Text between units; escapes such as \\n are understood.")
    ] = "\\n",
    truncate: Annotated[
        bool, typer.Option(help="Cut one more unit at a token boundary to fill the budget.")
    ] = False,
    errors: Annotated[
        str, typer.Option(help="Undecodable bytes: 'strict' (error) or 'replace'.")
    ] = "strict",
    as_json: Annotated[bool, typer.Option("--json", help="Print the full result as JSON.")] = False,
) -> None:
    """Print a context of at most BUDGET tokens built from FILE (provenance with --json)."""
    try:
        if errors not in ("strict", "replace"):
            decode_document(b"", errors=errors)  # type: ignore[arg-type]  # raises the error
        mode: Any = errors
        text = (
            decode_document(sys.stdin.buffer.read(), errors=mode)
            if file == "-"
            else (read_document(Path(file), errors=mode))
        )
        chosen: Any = selector
        if router is not None:
            from budgetctx.router import load_router

            chosen = load_router(router)
        ctx = build_context(
            text,
            budget,
            tokenizer=tokenizer,
            unitizer=unitizer,
            representation=representation,
            selector=chosen,
            query=query,
            separator=codecs.decode(separator, "unicode_escape"),
            truncate=truncate,
        )
    except BudgetCtxError as exc:
        _fail(exc)
        return
    if as_json:
        typer.echo(json.dumps(ctx.to_dict(), ensure_ascii=False, indent=2))
    else:
        typer.echo(ctx.text)
    typer.echo(_summary(ctx), err=True)


@app.command()
def demo(
    budget: Annotated[int, typer.Option("--budget", "-b")] = 256,
    selector: Annotated[str, typer.Option()] = DEFAULT_SELECTOR,
    unitizer: Annotated[str, typer.Option()] = "section",
) -> None:
    """Condense the bundled sample discharge note and show the provenance table."""
    from rich.console import Console
    from rich.table import Table

    from budgetctx.data import sample_note

    note = sample_note()
    try:
        ctx = build_context(note, budget, selector=selector, unitizer=unitizer)
    except BudgetCtxError as exc:
        _fail(exc)
        return
    console = Console()
    console.rule(f"Context: {ctx.tokens_used}/{ctx.budget} tokens ({ctx.tokenizer})")
    console.print(ctx.text, markup=False, highlight=False)
    table = Table(title="Provenance: kept units (document order)")
    for col in ("unit", "chars", "tokens", "rank", "relevance", "section", "text"):
        table.add_column(col, overflow="fold")
    for u in ctx.units:
        spans = ",".join(f"{a}-{b}" for a, b in u.spans)
        snippet = u.text if len(u.text) <= 60 else u.text[:57] + "..."
        table.add_row(
            str(u.id),
            spans,
            str(u.tokens),
            str(u.rank),
            f"{u.relevance:.3f}",
            u.section or "",
            snippet,
        )
    console.print(table)
    pct = 100.0 * ctx.tokens_saved / max(ctx.document_tokens, 1)
    console.print(
        f"Document: {ctx.document_tokens} tokens, {ctx.n_units} units. Kept {len(ctx.units)} "
        f"units ({ctx.tokens_used} tokens); excluded {len(ctx.excluded)}. "
        f"Tokens saved: {ctx.tokens_saved} ({pct:.0f}%). selector={ctx.selector}, "
        f"unitizer={ctx.unitizer}, {ctx.timings_ms['total']:.1f} ms."
    )


@app.command()
def components() -> None:
    """List the registered tokenizers, unitizers, representations and selectors."""
    from budgetctx import (
        list_representations,
        list_selectors,
        list_tokenizers,
        list_unitizers,
    )

    for kind, names in (
        ("tokenizers", list_tokenizers()),
        ("unitizers", list_unitizers()),
        ("representations", list_representations()),
        ("selectors", list_selectors()),
    ):
        typer.echo(f"{kind}: {', '.join(names)}")


datasets_app = typer.Typer(no_args_is_help=True, help="Evaluation datasets: list, inspect, fetch.")
app.add_typer(datasets_app, name="datasets")

DataDir = Annotated[
    str | None,
    typer.Option("--data-dir", help="Dataset folder (default: $BUDGETCTX_DATA or ~/.cache)."),
]


@datasets_app.command("list")
def datasets_list(data_dir: DataDir = None) -> None:
    """Every dataset, whether it is present in the data dir, and its size."""
    from budgetctx.eval.datasets import dataset_info, list_datasets

    for name in list_datasets():
        info = dataset_info(name, data_dir=data_dir)
        state = "present" if info.available else ("fetchable" if info.fetchable else "absent")
        sizes = info.n_examples or {}
        size = ", ".join(f"{k} {v}" for k, v in sizes.items()) if info.available else ""
        typer.echo(f"{name:24s} {state:9s} {size}")


@datasets_app.command("info")
def datasets_info(
    name: str,
    data_dir: DataDir = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Source, licence, split rule, counts and file status of one dataset."""
    from budgetctx.eval.datasets import dataset_info

    try:
        info = dataset_info(name, data_dir=data_dir).to_dict()
    except BudgetCtxError as exc:
        _fail(exc)
        return
    if as_json:
        typer.echo(json.dumps(info, indent=2, ensure_ascii=False))
        return
    for key, value in info.items():
        if isinstance(value, list | tuple) and len(value) > 5:
            value = f"{len(value)} files"
        typer.echo(f"{key}: {value}")


@datasets_app.command("fetch")
def datasets_fetch(
    names: Annotated[list[str], typer.Argument(help="Dataset names.")],
    data_dir: DataDir = None,
    mirror: Annotated[
        str | None, typer.Option(help="A server with the data-dir layout (package mirror).")
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds per request.")] = 60.0,
) -> None:
    """Download datasets from their official sources (pinned commits, sha256 checked)."""
    from budgetctx.eval.datasets import fetch_dataset

    for name in names:
        try:
            report = fetch_dataset(
                name,
                data_dir=data_dir,
                mirror=mirror,
                timeout=timeout,
                progress=lambda path, action: typer.echo(f"{action}: {path}", err=True),
            )
        except BudgetCtxError as exc:
            _fail(exc)
            return
        typer.echo(
            f"{name}: {len(report.downloaded)} downloaded, {len(report.skipped)} already "
            f"present, {len(report.generated)} generated in {report.data_dir}"
        )


@app.command()
def sweep(
    dataset: Annotated[list[str], typer.Option("--dataset", "-d", help="Dataset (repeatable).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Run folder (resumable).")],
    budgets: Annotated[str, typer.Option(help="Comma-separated token budgets.")] = (
        "256,512,1024,2048"
    ),
    selectors: Annotated[
        str, typer.Option(help="Comma-separated selectors; options as name:key=value.")
    ] = "lead,shuffled,sliding,hierarchical,graphcluster,mmr,rcd",
    unitizers: Annotated[str, typer.Option(help="Comma-separated unitizers.")] = "sentence",
    split: Annotated[str | None, typer.Option(help="validation, test, or both.")] = None,
    limit: Annotated[int | None, typer.Option(help="At most this many examples.")] = None,
    data_dir: DataDir = None,
    tokenizer: Annotated[str, typer.Option()] = "o200k_base",
    representation: Annotated[str, typer.Option()] = "tfidf",
    oracle: Annotated[bool, typer.Option(help="Add the extractive oracle.")] = True,
    workers: Annotated[int, typer.Option(help="Processes.")] = 2,
) -> None:
    """Run (or resume) budgets x selectors x unitizers over datasets; every row is saved."""
    from budgetctx.eval import SweepConfig, run_sweep

    try:
        config = SweepConfig(
            datasets=tuple(dataset),
            budgets=tuple(int(b) for b in budgets.split(",") if b.strip()),
            selectors=tuple(_split_specs(selectors)),
            unitizers=tuple(u.strip() for u in unitizers.split(",") if u.strip()),
            split=split,
            limit=limit,
            data_dir=data_dir,
            tokenizer=tokenizer,
            representation=representation,
            oracle=oracle,
            workers=workers,
        )
        summary = run_sweep(config, out)
    except ValueError as exc:
        if isinstance(exc, BudgetCtxError):
            _fail(exc)
        typer.echo(f"budgetctx: error: {exc}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(
        f"{summary.rows_written} rows written, {summary.rows_skipped} already done, "
        f"{summary.tasks} tasks in {summary.seconds:.1f} s -> {summary.run_dir}",
        err=True,
    )
    for ds, by_selector in summary.means.items():
        typer.echo(f"\n{ds}: mean ROUGE-1 by budget")
        budgets_seen = sorted({b for v in by_selector.values() for b in v})
        typer.echo("  " + "selector".ljust(16) + "".join(f"{b:>8d}" for b in budgets_seen))
        for sel_name, by_budget in sorted(by_selector.items()):
            cells = "".join(
                f"{by_budget[b]:8.3f}" if b in by_budget else " " * 8 for b in budgets_seen
            )
            typer.echo("  " + sel_name.ljust(16) + cells)


@app.command()
def report(
    run: Annotated[Path, typer.Argument(help="A sweep's run folder.")],
    out: Annotated[Path | None, typer.Option(help="Output folder (default RUN/report).")] = None,
    metric: Annotated[str, typer.Option(help="rouge1, rouge2, rougeL, token_f1, ...")] = "rouge1",
    split: Annotated[str | None, typer.Option(help="validation, test, or both.")] = None,
    bounds_selectors: Annotated[
        str | None, typer.Option(help="Selectors for oracle bounds, e.g. lead,mmr,rcd.")
    ] = None,
) -> None:
    """Write Markdown/CSV tables and PNG figures (paper-style) for a sweep."""
    from budgetctx.eval.report import write_report

    try:
        files = write_report(
            run, out_dir=out, metric=metric, split=split, selectors_for_bounds=bounds_selectors
        )
    except BudgetCtxError as exc:
        _fail(exc)
        return
    typer.echo(str(files.report))


@app.command()
def calibrate(
    run: Annotated[Path, typer.Argument(help="A sweep's run folder.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Router config to write (JSON).")],
    metric: Annotated[str, typer.Option()] = "rouge1",
    kind: Annotated[str, typer.Option(help="feature (tree + budget fallback) or budget.")] = (
        "feature"
    ),
    selectors: Annotated[str, typer.Option(help="Candidate selectors.")] = "lead,mmr,rcd",
    dataset: Annotated[
        list[str] | None, typer.Option("--dataset", "-d", help="Calibrate on these only.")
    ] = None,
) -> None:
    """Fit a router on the validation rows of a sweep; use it with load_router(path)."""
    from budgetctx.router import calibrate as fit

    try:
        router = fit(
            run,
            kind=kind,  # type: ignore[arg-type]
            metric=metric,
            candidates=tuple(_split_specs(selectors)),
            datasets=dataset,
            out=out,
        )
    except BudgetCtxError as exc:
        _fail(exc)
        return
    prov = router.provenance
    typer.echo(
        f"{out}: {router.kind} router on {prov['instances']} validation instances of "
        f"{', '.join(prov['data'])}; mean {metric} {prov['calibration_mean']:.4f}"
    )


@app.command("route-eval")
def route_eval_cmd(
    run: Annotated[Path, typer.Argument(help="A sweep's run folder.")],
    out: Annotated[Path | None, typer.Option(help="Output folder (default RUN/route_eval).")] = (
        None
    ),
    metric: Annotated[str, typer.Option()] = "rouge1",
    selectors: Annotated[str, typer.Option(help="Candidate selectors.")] = "lead,mmr,rcd",
    router: Annotated[
        Path | None, typer.Option(help="Evaluate this router config instead of calibrating.")
    ] = None,
    calibration: Annotated[str, typer.Option(help="pooled or per-dataset.")] = "pooled",
) -> None:
    """Routers vs fixed selectors vs oracle bounds on the held-out test split."""
    from budgetctx.router import load_router, route_eval

    try:
        report = route_eval(
            run,
            out_dir=out,
            metric=metric,
            candidates=tuple(_split_specs(selectors)),
            router=load_router(router) if router is not None else None,
            calibration=calibration,  # type: ignore[arg-type]
        )
    except BudgetCtxError as exc:
        _fail(exc)
        return
    typer.echo(report.markdown)
    typer.echo("\n".join(report.files), err=True)


def _split_specs(text: str) -> list[str]:
    """Split "lead,rcd:alpha=0.5,beta=0.3,mmr" into selector specs: a comma followed by a
    key=value continues the previous spec."""
    specs: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if specs and "=" in part and ":" not in part and ":" in specs[-1]:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs


def main() -> None:
    app()


if __name__ == "__main__":
    main()
