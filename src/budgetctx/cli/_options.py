"""Options that ``budgetctx select`` and ``budgetctx batch`` share, declared once so that the
two commands cannot drift apart in names, help or defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from budgetctx._errors import InvalidParameterError

__all__ = [
    "Budget",
    "PinRegexes",
    "PinSections",
    "Profile",
    "Query",
    "Representation",
    "Reserve",
    "Selector",
    "Separator",
    "Tokenizer",
    "Truncate",
    "Unitizer",
    "pins_from_options",
    "profile_from_option",
]

Budget = Annotated[int, typer.Option("--budget", "-b", help="Token budget (> 0).")]
Selector = Annotated[
    str,
    typer.Option(help="Selector name or spec (mmr:lambda_=0.5), or auto (the bundled router)."),
]
Tokenizer = Annotated[
    str, typer.Option(help="Tokenizer: o200k_base, cl100k_base, words, a model name, hf:PATH.")
]
Unitizer = Annotated[str, typer.Option(help="Unitizer name.")]
Representation = Annotated[str, typer.Option(help="Representation name.")]
Query = Annotated[str | None, typer.Option(help="Relevance query (else the centroid).")]
Profile = Annotated[
    str,
    typer.Option(
        help="What must not be lost: auto (a clinical note's safety sections, when it has "
        "them), clinical, or none."
    ),
]
Separator = Annotated[
    str,
    typer.Option(help="Text between units; \\n, \\t, \\r, \\\\ and \\uXXXX are understood."),
]
Truncate = Annotated[
    bool, typer.Option(help="Cut one more unit at a token boundary to fill the budget.")
]
PinSections = Annotated[
    list[str] | None,
    typer.Option("--pin", help="Always keep this section (case-insensitive); repeatable."),
]
PinRegexes = Annotated[
    list[str] | None,
    typer.Option("--pin-regex", help="Always keep units matching this regex; repeatable."),
]
Reserve = Annotated[
    int, typer.Option(help="Tokens of the budget to keep free (instruction, answer).")
]


def pins_from_options(sections: list[str] | None, regexes: list[str] | None) -> list[Any]:
    """``--pin`` and ``--pin-regex`` as one ``pin=`` list (regexes compiled, with their error)."""
    from budgetctx.build._pins import pin_regex

    return [*(sections or []), *(pin_regex(p) for p in regexes or [])]


def profile_from_option(value: str) -> str | None:
    """``--profile none`` is the library's ``profile=None``; any other name is passed on for
    the library to check (``auto``, ``clinical``)."""
    return None if value.strip().lower() == "none" else value


def parse_budgets(text: str) -> tuple[int, ...]:
    """``"256,512"`` -> ``(256, 512)``: the --budgets of ``sweep`` and ``sensitivity``
    (SweepConfig checks that they are positive)."""
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            out.append(int(part))
        except ValueError:
            raise InvalidParameterError(
                f"The 'budgets' option must be comma-separated integers. Got {part!r:.40} "
                "instead; e.g. --budgets 256,512,1024.",
                parameter="budgets",
                value=part[:40],
            ) from None
    return tuple(out)


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
Datasets = Annotated[list[str], typer.Option("--dataset", "-d", help="Dataset (repeatable).")]
RunFolder = Annotated[Path, typer.Option("--out", "-o", help="Run folder (resumable).")]
BudgetList = Annotated[str, typer.Option(help="Comma-separated token budgets.")]
Workers = Annotated[int, typer.Option(help="Processes.")]
