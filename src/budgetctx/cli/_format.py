"""Plain text for the terminal: one-line summaries and fixed-width tables of results, and the
backslash escapes that command-line options are written with.

Everything here returns strings, so the CLI only parses, calls and prints, and the same text
can be tested without a terminal.

>>> decode_escapes(r"\\n---\\n")
'\\n---\\n'
>>> decode_escapes(" — ")
' — '
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from budgetctx._errors import InvalidParameterError

if TYPE_CHECKING:
    from budgetctx._core.results import Context
    from budgetctx.eval.datasets import DatasetInfo
    from budgetctx.generate import CostEstimate, CostReport, Price

__all__ = [
    "context_summary",
    "cost_table",
    "dataset_line",
    "decode_escapes",
    "demo_explanation",
    "demo_footer",
    "key_values",
    "means_table",
    "one_line",
    "provenance_rows",
    "provenance_table",
]

_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|u[0-9a-fA-F]{0,3}|.?)", re.DOTALL)


def decode_escapes(text: str, *, parameter: str = "separator") -> str:
    r"""Decode ``\n``, ``\t``, ``\r``, ``\\`` and ``\uXXXX``; every other character, non-ASCII
    included, is kept as it is. Any other backslash sequence is an error naming it.

    >>> decode_escapes(r"a\tb\\c\u00e9")
    'a\tb\\cé'
    """

    def one(m: re.Match[str]) -> str:
        body = m.group(1)
        if body in _SIMPLE:
            return _SIMPLE[body]
        if len(body) == 5:
            char = chr(int(body[1:], 16))
            if not 0xD800 <= ord(char) <= 0xDFFF:
                return char
        raise InvalidParameterError(
            f"The {parameter!r} option has an unknown escape '{m.group(0)}'; the escapes "
            r"understood are \n, \t, \r, \\ and \uXXXX (not a surrogate); write \\ for a "
            "backslash.",
            parameter=parameter,
            value=m.group(0),
        )

    return _ESCAPE.sub(one, text)


def one_line(message: str) -> str:
    """Collapse a message onto one line (the CLI prints every error as exactly one line).

    >>> one_line("Bad value.\\n  Try again.")
    'Bad value. Try again.'
    """
    return " ".join(message.split())


def context_summary(ctx: Context) -> str:
    """The line ``budgetctx select`` prints on stderr: tokens, units, selector, time."""
    return (
        f"budgetctx: {ctx.tokens_used}/{ctx.budget} tokens ({ctx.tokenizer}), "
        f"{len(ctx.units)} of {ctx.n_units} units kept, document {ctx.document_tokens} tokens, "
        f"selector={ctx.selector}"
        + (f" (chosen automatically; {ctx.route.reason})" if ctx.route else "")
        + f" unitizer={ctx.unitizer}, "
        f"{ctx.timings_ms.get('total', 0.0):.1f} ms" + (f"; {ctx.reason}" if ctx.reason else "")
    )


PROVENANCE_COLUMNS = ("unit", "chars", "tokens", "rank", "relevance", "section", "text")


def provenance_rows(ctx: Context, *, width: int = 60) -> list[tuple[str, ...]]:
    """One row of :data:`PROVENANCE_COLUMNS` per kept unit, text cut to ``width``."""
    rows: list[tuple[str, ...]] = []
    for u in ctx.units:
        spans = ",".join(f"{a}-{b}" for a, b in u.spans)
        snippet = u.text if len(u.text) <= width else u.text[: width - 3] + "..."
        rows.append(
            (
                str(u.id),
                spans,
                str(u.tokens),
                str(u.rank),
                f"{u.relevance:.3f}",
                u.section or "",
                snippet,
            )
        )
    return rows


def provenance_table(ctx: Context, *, width: int = 80) -> Any:
    """The demo's provenance table as a rich ``Table`` for a ``width``-column terminal (80 when
    piped). Numbers never wrap or shrink: the text column wraps, and is dropped below 70
    columns, the section column below 50 (issue 22). ``chars`` shows a unit's first and last
    offset, with ``+`` when it has several spans (the exact spans are in ``--json``)."""
    from rich import box
    from rich.table import Table

    keep_text, keep_section = width >= 70, width >= 50
    table = Table(
        title="Provenance: kept units (document order)",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=(0, 1),
    )
    rows = provenance_rows(ctx, width=1000)
    chars = [
        f"{u.spans[0][0]}-{u.spans[-1][1]}" + ("+" if len(u.spans) > 1 else "") for u in ctx.units
    ]
    short = {"tokens": "tok", "relevance": "rel"}
    for k, col in enumerate(PROVENANCE_COLUMNS):
        head = short.get(col, col)
        if col == "text":
            if keep_text:
                table.add_column(head, overflow="fold", ratio=1, min_width=16)
        elif col == "section":
            if keep_section:
                table.add_column(head, no_wrap=True, overflow="ellipsis", max_width=14)
        else:
            values = chars if col == "chars" else [r[k] for r in rows]
            table.add_column(
                head,
                no_wrap=True,
                min_width=max([len(head), *map(len, values)]),
                justify="left" if col == "chars" else "right",
            )
    for u, row, span in zip(ctx.units, rows, chars, strict=True):
        cells = list(row)
        cells[1] = span
        cells[6] = " ".join(u.text.split())
        if not keep_text:
            cells.pop(6)
        if not keep_section:
            cells.pop(5)
        table.add_row(*cells)
    return table


def demo_explanation(ctx: Context) -> str:
    """One line: what was pinned and what "relevance" means in this context.

    >>> from budgetctx import build_context
    >>> print(demo_explanation(build_context("Chest pain. Troponin negative.", 4)))
    relevance = similarity to the note as a whole (no query given); nothing pinned.
    """
    if ctx.query is not None and ctx.relevance_source == "query":
        semantic = bool(ctx.params.get("representation", {}).get("semantic"))
        how = "by its words and meaning" if semantic else "by its words"
        rel = f"relevance = similarity to the query {ctx.query!r} {how}"
    elif ctx.query is not None:
        rel = f"relevance = similarity to the note as a whole ({ctx.relevance_source})"
    else:
        rel = "relevance = similarity to the note as a whole (no query given)"
    profile = next((n for n in ctx.notes if " profile: pinned " in n), None)
    if profile is None:
        pinned = sum(u.pinned for u in ctx.units)
        tail = f"{pinned} units pinned by request." if pinned else "nothing pinned."
    else:
        name, _, rest = profile.partition(" profile: pinned ")
        sections = rest.split(";")[0]
        tail = (
            f"{name} profile pinned {sections} (kept first, most critical first); names and "
            "dates alone carry no relevance."
        )
    return f"{rel}; {tail}"


def demo_footer(ctx: Context) -> str:
    """What the demo says under its table: kept, excluded, tokens saved."""
    pct = 100.0 * ctx.tokens_saved / max(ctx.document_tokens, 1)
    return (
        f"Document: {ctx.document_tokens} tokens, {ctx.n_units} units. Kept {len(ctx.units)} "
        f"units ({ctx.tokens_used} tokens); excluded {len(ctx.excluded)}. "
        f"Tokens saved: {ctx.tokens_saved} ({pct:.0f}%). selector={ctx.selector}, "
        f"unitizer={ctx.unitizer}, {ctx.timings_ms.get('total', 0.0):.1f} ms."
    )


def means_table(means: Mapping[str, Mapping[str, Mapping[int, float]]]) -> str:
    """A sweep's mean ROUGE-1 (accuracy for labels): one block per dataset, selector x budget.

    >>> print(means_table({"d": {"lead": {256: 0.25}}}))
    <BLANKLINE>
    d: mean ROUGE-1 (accuracy for labels) by budget
      selector             256
      lead               0.250
    """
    lines: list[str] = []
    for ds, by_selector in means.items():
        lines.append(f"\n{ds}: mean ROUGE-1 (accuracy for labels) by budget")
        budgets = sorted({b for v in by_selector.values() for b in v})
        lines.append("  " + "selector".ljust(16) + "".join(f"{b:>8d}" for b in budgets))
        for name, by_budget in sorted(by_selector.items()):
            cells = "".join(f"{by_budget[b]:8.3f}" if b in by_budget else " " * 8 for b in budgets)
            lines.append("  " + name.ljust(16) + cells)
    return "\n".join(lines)


def cost_table(result: CostReport, price: Price, *, dataset: str | None = None) -> str:
    """``budgetctx cost``'s text: the price used, then per call and per year by scenario."""
    lines = [
        f"{price.model}: ${price.input_per_mtok:g} in / ${price.output_per_mtok:g} out per 1M "
        f"tokens (prices of {price.date}, {price.source})"
    ]
    if dataset is not None:
        lines.append(
            f"{dataset}: {result.n_documents} documents, {result.n_over_budget} longer than "
            "the budget"
        )
    lines.append(
        "  "
        + "scenario".ljust(38)
        + "input tok".rjust(11)
        + "per call".rjust(12)
        + "per year".rjust(14)
    )
    estimates: Iterable[CostEstimate | None] = (
        result.at_budget,
        result.full_mean,
        result.full_median,
        result.full_p90,
    )
    for e in estimates:
        if e is not None:
            lines.append(
                "  "
                + e.label.ljust(38)
                + f"{e.input_tokens:11.0f}"
                + f"${e.per_call:.5f}".rjust(12)
                + f"${e.per_year:,.2f}".rjust(14)
            )
    if result.savings_per_call is not None and result.savings_per_year is not None:
        lines.append(
            "  "
            + "savings vs full (mean)".ljust(38)
            + " " * 11
            + f"${result.savings_per_call:.5f}".rjust(12)
            + f"${result.savings_per_year:,.2f}".rjust(14)
            + f"  ({result.savings_pct:.1f} %)"
        )
    return "\n".join(lines)


def key_values(data: Mapping[str, Any], *, max_items: int = 5) -> list[str]:
    """``key: value`` lines; a long list shows as its length (``dataset info``)."""
    out = []
    for key, value in data.items():
        if isinstance(value, list | tuple) and len(value) > max_items:
            value = f"{len(value)} files"
        out.append(f"{key}: {value}")
    return out


def dataset_line(name: str, info: DatasetInfo) -> str:
    """``datasets list``: the name, present/fetchable/absent, and the split sizes."""
    state = "present" if info.available else ("fetchable" if info.fetchable else "absent")
    sizes = info.n_examples or {}
    size = ", ".join(f"{k} {v}" for k, v in sizes.items()) if info.available else ""
    return f"{name:24s} {state:9s} {size}"
