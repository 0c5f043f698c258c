"""``select``, ``fit-messages``, ``demo`` and ``components``: the commands that build contexts."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from budgetctx._core.defaults import DEFAULT_SELECTOR
from budgetctx._core.progress import Working
from budgetctx._errors import InputError
from budgetctx.cli._format import (
    context_summary,
    decode_escapes,
    demo_explanation,
    demo_footer,
    provenance_table,
)
from budgetctx.cli._io import decode_document, read_document, read_documents
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
from budgetctx.cli._startup import imports


def select(
    budget: Budget,
    files: Annotated[
        list[str] | None,
        typer.Argument(help="Text files to condense under one budget, or '-' for stdin."),
    ] = None,
    selector: Selector = DEFAULT_SELECTOR,
    router: Annotated[
        Path | None, typer.Option(help="Route with this router config (from calibrate).")
    ] = None,
    unitizer: Unitizer = "sentence",
    representation: Representation = "tfidf",
    tokenizer: Tokenizer = "o200k_base",
    query: Query = None,
    profile: Profile = "auto",
    separator: Separator = "\\n",
    truncate: Truncate = False,
    pin: PinSections = None,
    pin_regex: PinRegexes = None,
    reserve: Reserve = 0,
    jsonl: Annotated[
        Path | None,
        typer.Option(help="Read the documents from a JSONL file, one object per line."),
    ] = None,
    text_field: Annotated[str, typer.Option(help="JSONL field holding the text.")] = "text",
    id_field: Annotated[str, typer.Option(help="JSONL field holding the document id.")] = "id",
    document_header: Annotated[
        str,
        typer.Option(help="Header before each document ({id}, {index}, {number}); '' for none."),
    ] = "[{id}]",
    document_separator: Annotated[
        str, typer.Option(help="Extra text between two documents (escapes understood).")
    ] = "\\n",
    errors: Annotated[
        str, typer.Option(help="Undecodable bytes: 'strict' (error) or 'replace'.")
    ] = "strict",
    as_json: Annotated[bool, typer.Option("--json", help="Print the full result as JSON.")] = False,
    html_out: Annotated[
        Path | None,
        typer.Option("--html", help="Also write the provenance view to this HTML file."),
    ] = None,
) -> None:
    """Print a context of at most BUDGET tokens built from FILES (provenance with --json/--html).

    One file is condensed on its own; several files (or --jsonl) share the budget, each
    rendered under its header, with provenance per document.
    """
    with imports():  # here: --help needs no numpy; and without collector passes
        from budgetctx.build._pipeline import build_context

    if errors not in ("strict", "replace"):
        decode_document(b"", errors=errors)  # type: ignore[arg-type]  # raises the error
    mode: Any = errors
    documents = read_documents(
        list(files or []), jsonl=jsonl, text_field=text_field, id_field=id_field, errors=mode
    )
    chosen: Any = selector
    if router is not None:
        from budgetctx.router import load_router

        chosen = load_router(router)
    pins = pins_from_options(pin, pin_regex)
    ctx = Working(_size_label(documents)).call(
        build_context,
        documents,
        budget,
        tokenizer=tokenizer,
        unitizer=unitizer,
        representation=representation,
        selector=chosen,
        query=query,
        profile=profile_from_option(profile),
        separator=decode_escapes(separator),
        truncate=truncate,
        pin=pins or None,
        reserve=reserve,
        document_header=decode_escapes(document_header) or None,
        document_separator=decode_escapes(document_separator),
    )
    if html_out is not None:
        from budgetctx.build._html import render_html  # here: only --html needs it

        html_out.write_text(render_html(ctx, documents), encoding="utf-8")
    if as_json:
        typer.echo(json.dumps(ctx.to_dict(), ensure_ascii=False, indent=2))
    else:
        typer.echo(ctx.text)
    typer.echo(context_summary(ctx), err=True)
    if html_out is not None:
        typer.echo(f"budgetctx: provenance view written to {html_out}", err=True)


def _size_label(documents: str | list[Any]) -> str:
    """What ``select`` is working on, in sizes only (never text: it may be PHI)."""
    texts = [documents] if isinstance(documents, str) else [d.text for d in documents]
    size = sum(len(t) for t in texts)
    amount = f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size:,} characters"
    plural = "" if len(texts) == 1 else "s"
    return f"condensing {len(texts)} document{plural} ({amount})"


def fit_messages_cmd(
    file: Annotated[
        str,
        typer.Argument(help="JSON: a list of chat messages or a request with 'messages'; '-'."),
    ],
    budget: Annotated[int, typer.Option("--budget", "-b", help="Prompt token budget (> 0).")],
    model: Annotated[
        str | None, typer.Option(help="Model whose tokenizer counts (default: the request's).")
    ] = None,
    tokenizer: Annotated[str | None, typer.Option(help="Tokenizer, instead of --model.")] = None,
    reserve: Annotated[int, typer.Option(help="Tokens kept free for the answer.")] = 0,
    selector: Annotated[
        str, typer.Option(help="Selector name or spec (mmr:lambda_=0.5), or auto.")
    ] = DEFAULT_SELECTOR,
    history: Annotated[
        str,
        typer.Option(help="auto: drop the oldest whole turns first when needed; keep: drop none."),
    ] = "auto",
    keep_turns: Annotated[
        int, typer.Option(help="Last turns never dropped by --history auto (>= 1).")
    ] = 1,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the full result with provenance.")
    ] = False,
) -> None:
    """Print the chat request in FILE with its messages fitted to BUDGET prompt tokens."""
    from budgetctx.chat._messages import fit_messages  # here: select never needs chats

    raw = decode_document(sys.stdin.buffer.read()) if file == "-" else read_document(Path(file))
    try:
        request = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{file} is not JSON ({exc}); pass a JSON list of messages or a request body.",
            parameter="file",
            value=file,
        ) from exc
    except RecursionError:
        raise InputError(
            f"{file} is JSON nested too deep to read; send a flatter request.",
            parameter="file",
            value=file,
        ) from None
    body = request if isinstance(request, dict) else None
    messages: Any = body.get("messages") if body is not None else request
    if model is None and tokenizer is None and body is not None:
        model = body.get("model")
    fit = fit_messages(
        messages,
        budget,
        model=model,
        tokenizer=tokenizer,
        reserve=reserve,
        selector=selector,
        history=history,  # type: ignore[arg-type]  # fit_messages checks and names the value
        keep_turns=keep_turns,
    )
    if as_json:
        typer.echo(json.dumps(fit.to_dict(), ensure_ascii=False, indent=2))
    else:
        out = list(fit.messages) if body is None else {**body, "messages": list(fit.messages)}
        typer.echo(json.dumps(out, ensure_ascii=False, indent=2))
    typer.echo(
        f"budgetctx: {fit.prompt_tokens}/{fit.available} prompt tokens "
        f"({fit.tokenizer}), was {fit.prompt_tokens_before}; condensed messages "
        f"{[p.index for p in fit.compressed]}"
        + (f"; dropped messages {list(fit.dropped)}" if fit.dropped else ""),
        err=True,
    )


def demo(
    budget: Budget = 256,
    selector: Selector = DEFAULT_SELECTOR,
    unitizer: Unitizer = "section",
    query: Annotated[
        str | None,
        typer.Option("--query", "-q", help="Relevance query (else the centroid)."),
    ] = None,
    profile: Profile = "auto",
) -> None:
    """Condense the bundled sample discharge note and show the provenance table."""
    from rich.console import Console

    from budgetctx.build._pipeline import build_context
    from budgetctx.data import sample_note

    ctx = build_context(
        sample_note(),
        budget,
        selector=selector,
        unitizer=unitizer,
        query=query,
        profile=profile_from_option(profile),
    )
    console = Console()
    console.rule(f"Context: {ctx.tokens_used}/{ctx.budget} tokens ({ctx.tokenizer})")
    console.print(ctx.text, markup=False, highlight=False)
    console.print(provenance_table(ctx, width=console.width))
    console.print(demo_explanation(ctx), markup=False, highlight=False)
    console.print(demo_footer(ctx), markup=False, highlight=False)


def components() -> None:
    """List the registered tokenizers, unitizers, representations, selectors, generators,
    prompt templates and priced models."""
    from budgetctx import (
        list_representations,
        list_selectors,
        list_tokenizers,
        list_unitizers,
    )
    from budgetctx.generate import list_generators, list_prompts, load_prices

    for kind, names in (
        ("tokenizers", list_tokenizers()),
        ("unitizers", list_unitizers()),
        ("representations", list_representations()),
        ("selectors", list_selectors()),
        ("generators", list_generators()),
        ("prompts", list_prompts()),
        ("priced models", sorted(load_prices())),
    ):
        typer.echo(f"{kind}: {', '.join(names)}")
