"""The ``budgetctx`` command line: parse, call the library, print. No logic here.

Every failure a user can cause (a :class:`~budgetctx.BudgetCtxError`, an OS error such as a
missing file, a bad option) is printed as one line on stderr and exits with status 2; this
is done once, by the command group (:class:`_Group`), not by each command.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from budgetctx._cli_batch import batch
from budgetctx._cli_options import (
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
    parse_budgets,
    pins_from_options,
    profile_from_option,
)
from budgetctx._cli_sensitivity import sensitivity
from budgetctx._errors import BudgetCtxError, InputError, InvalidParameterError
from budgetctx._format import (
    context_summary,
    cost_table,
    dataset_line,
    decode_escapes,
    demo_explanation,
    demo_footer,
    key_values,
    means_table,
    one_line,
    provenance_table,
)
from budgetctx._html import render_html
from budgetctx._io import decode_document, read_document, read_documents
from budgetctx._messages import fit_messages
from budgetctx._progress import Working
from budgetctx.pipeline import DEFAULT_SELECTOR, build_context
from budgetctx.selectors import parse_options, split_selector_specs

try:  # typer >= 0.24 vendors its own click, whose exceptions are these
    from typer._click import exceptions as _click_errors
except ImportError:  # pragma: no cover - older typer on the real click
    from click import exceptions as _click_errors  # type: ignore[no-redef]

#: The exit status of every error the user can fix (bad option, bad input, missing file).
EXIT_USAGE = 2


def _error(message: str) -> None:
    typer.echo(f"budgetctx: error: {one_line(message)}", err=True)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    typer.echo(f"budgetctx: warning: {one_line(str(message))}", err=True)


class _Group(TyperGroup):
    """Runs the command and turns every user-caused failure into one line and exit 2.

    Library errors carry their fix; OS errors name the path; a file that is not UTF-8 names
    the offset; click's usage errors (a missing option, a non-integer budget) are folded
    onto one line as well. Anything else is a bug and keeps its traceback.
    """

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            with warnings.catch_warnings():
                # A warning is for the user, not a developer: one line, no file path and no
                # source line (Python's default shows both).
                warnings.showwarning = _show_warning
                code = super().main(
                    args, prog_name, complete_var, False, windows_expand_args, **extra
                )
        except _click_errors.NoArgsIsHelpError as exc:
            exc.show()  # the help text, as the user asked for nothing else
            sys.exit(EXIT_USAGE)
        except _click_errors.ClickException as exc:
            _error(f"{exc.format_message()} See 'budgetctx --help'.")
            sys.exit(EXIT_USAGE)
        except typer.Abort:
            _error("Aborted.")
            sys.exit(1)
        except BudgetCtxError as exc:
            _error(str(exc))
            sys.exit(EXIT_USAGE)
        except OSError as exc:
            _error(f"{exc}; check the path and its permissions.")
            sys.exit(EXIT_USAGE)
        except UnicodeError as exc:
            # A config or data file that is not UTF-8 text (the library's own readers raise
            # InputError; this catches the rest). The message holds an offset, not the text.
            _error(f"{exc}; the file must be UTF-8 text.")
            sys.exit(EXIT_USAGE)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=_Group,
    add_completion=False,
    no_args_is_help=True,
    help="Budgeted, token-exact context construction for long documents.",
)


def _print_version(value: bool) -> None:
    if value:
        from budgetctx._version import __version__

        typer.echo(f"budgetctx {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """Budgeted, token-exact context construction for long documents."""


@app.command()
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


@app.command("fit-messages")
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
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the full result with provenance.")
    ] = False,
) -> None:
    """Print the chat request in FILE with its messages fitted to BUDGET prompt tokens."""
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
        messages, budget, model=model, tokenizer=tokenizer, reserve=reserve, selector=selector
    )
    if as_json:
        typer.echo(json.dumps(fit.to_dict(), ensure_ascii=False, indent=2))
    else:
        out = list(fit.messages) if body is None else {**body, "messages": list(fit.messages)}
        typer.echo(json.dumps(out, ensure_ascii=False, indent=2))
    typer.echo(
        f"budgetctx: {fit.prompt_tokens}/{fit.available} prompt tokens "
        f"({fit.tokenizer}), was {fit.prompt_tokens_before}; condensed messages "
        f"{[p.index for p in fit.compressed]}",
        err=True,
    )


@app.command()
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


@app.command()
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


datasets_app = typer.Typer(no_args_is_help=True, help="Evaluation datasets: list, info, fetch.")
app.add_typer(datasets_app, name="datasets")

Metric = Annotated[
    str, typer.Option(help="Score that decides: rouge1, rouge2, rougeL, token_f1 ...")
]
CandidateSelectors = Annotated[
    str | None,
    typer.Option(
        help="Candidate selectors, comma-separated (default: every selector in the run's "
        "rows, with its options, e.g. lead,mmr,rcd:alpha=0.5)."
    ),
]
DataDir = Annotated[
    str | None,
    typer.Option("--data-dir", help="Dataset folder (default: $BUDGETCTX_DATA or ~/.cache)."),
]


@datasets_app.command("list")
def datasets_list(data_dir: DataDir = None) -> None:
    """Every dataset, whether it is present in the data dir, and its size."""
    from budgetctx.eval.datasets import dataset_info, list_datasets

    for name in list_datasets():
        typer.echo(dataset_line(name, dataset_info(name, data_dir=data_dir)))


@datasets_app.command("info")
def datasets_info(
    name: Annotated[str, typer.Argument(help="Dataset name (see 'budgetctx datasets list').")],
    data_dir: DataDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Source, licence, split rule, counts and file status of one dataset."""
    from budgetctx.eval.datasets import dataset_info

    info = dataset_info(name, data_dir=data_dir).to_dict()
    if as_json:
        typer.echo(json.dumps(info, indent=2, ensure_ascii=False))
        return
    for line in key_values(info):
        typer.echo(line)


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
        report = fetch_dataset(
            name,
            data_dir=data_dir,
            mirror=mirror,
            timeout=timeout,
            progress=lambda path, action: typer.echo(f"{action}: {path}", err=True),
        )
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
    tokenizer: Tokenizer = "o200k_base",
    representation: Representation = "tfidf",
    oracle: Annotated[
        bool | None,
        typer.Option(help="Add the extractive oracle (default: yes, except with --generate)."),
    ] = None,
    workers: Annotated[int, typer.Option(help="Processes.")] = 2,
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


@app.command()
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


@app.command()
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


@app.command()
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


@app.command("route-eval")
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
) -> None:
    """Routers vs fixed selectors vs oracle bounds on the held-out test split."""
    from budgetctx.eval import route_eval
    from budgetctx.router import load_router

    if lodo:
        from budgetctx.eval._lodo import lodo_route_eval

        result = lodo_route_eval(
            json.loads(run.read_text(encoding="utf-8")),
            # A peer-grid result has no run rows to follow: the paper's three by default.
            candidates=tuple(split_selector_specs(selectors or "lead,mmr,rcd")),
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
    return parse_options(
        items, fix="e.g. --gen-option base_url=http://localhost:8080/v1.", parameter="gen_option"
    )


app.command("batch")(batch)
app.command("sensitivity")(sensitivity)


@app.command()
def serve(
    host: Annotated[
        str, typer.Option(help="Address to bind; 127.0.0.1 keeps it on this machine.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    config: Annotated[
        Path | None, typer.Option(help="Configuration file (.toml, or .json).")
    ] = None,
    upstream: Annotated[
        str | None, typer.Option(help="Upstream base URL for /v1/chat/completions.")
    ] = None,
    provenance_size: Annotated[
        int | None, typer.Option(help="Provenance records held in memory; 0 keeps none.")
    ] = None,
    selection_processes: Annotated[
        int | None,
        typer.Option(help="Worker processes that condense (0: threads of the server)."),
    ] = None,
) -> None:
    """Serve the HTTP API and the OpenAI-compatible condensing proxy (extra 'serve')."""
    try:
        from budgetctx.serve import ServeConfig, load_config
        from budgetctx.serve._run import run
    except ImportError as exc:
        raise InvalidParameterError(
            f"budgetctx serve needs the 'serve' extra ({exc.name} is missing); "
            "pip install 'budgetctx[serve]'."
        ) from exc
    settings = load_config(config) if config is not None else ServeConfig()
    settings = settings.with_overrides(
        base_url=upstream,
        provenance_size=provenance_size,
        selection_processes=selection_processes,
    )
    run(settings, host=host, port=port)


def main() -> None:
    """The console script (``budgetctx``)."""
    app()


if __name__ == "__main__":
    main()
