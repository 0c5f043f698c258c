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
        f"selector={ctx.selector} unitizer={ctx.unitizer}, "
        f"{ctx.timings_ms.get('total', 0.0):.1f} ms" + (f"; {ctx.reason}" if ctx.reason else "")
    )


@app.command()
def select(
    file: Annotated[str, typer.Argument(help="Text file to condense, or '-' for stdin.")],
    budget: Annotated[int, typer.Option("--budget", "-b", help="Token budget (> 0).")],
    selector: Annotated[str, typer.Option(help="Selector name.")] = DEFAULT_SELECTOR,
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
        ctx = build_context(
            text,
            budget,
            tokenizer=tokenizer,
            unitizer=unitizer,
            representation=representation,
            selector=selector,
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


def main() -> None:
    app()


if __name__ == "__main__":
    main()
