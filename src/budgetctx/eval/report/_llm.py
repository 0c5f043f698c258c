"""Tables of an end-to-end (LLM) sweep: each policy against the full context, in score and
in cost, and macro-F1 for classification (PubMedQA)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from budgetctx.eval._labels import FULL
from budgetctx.eval._store import SweepRow
from budgetctx.eval.metrics import classification_report
from budgetctx.eval.report._style import (
    metric_name,
    selector_name,
    selector_sort_key,
    unitizer_name,
    unitizer_sort_key,
)
from budgetctx.eval.report._tables import Table
from budgetctx.generate import Price, call_cost

__all__ = ["classification_table", "full_context_table", "generated_rows", "row_cost"]


def generated_rows(rows: Iterable[SweepRow]) -> list[SweepRow]:
    """The rows that carry a generation (an LLM sweep's)."""
    return [r for r in rows if r.generation is not None]


def row_cost(row: SweepRow, price: Price | None = None) -> float | None:
    """The row's cost in USD (Eq. 1): as recorded, or re-priced with ``price`` from the
    prompt's tokens in the sweep's tokenizer and the reply's tokens as the model counted
    them (the estimate for running the same sweep on another model)."""
    gen = row.generation or {}
    if price is None:
        value = gen.get("cost_usd")
        return None if value is None else float(value)
    usage = gen.get("usage") or {}
    prompt_tokens = gen.get("prompt_tokens", usage.get("input_tokens", 0))
    return float(call_cost(price, int(prompt_tokens), int(usage.get("output_tokens", 0))))


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _group(rows: Iterable[SweepRow]) -> dict[tuple[str, str, str, int], list[SweepRow]]:
    groups: dict[tuple[str, str, str, int], list[SweepRow]] = {}
    for r in rows:
        groups.setdefault((r.dataset, r.unitizer, r.selector, r.budget), []).append(r)
    return groups


def _order(key: tuple[str, str, str, int]) -> tuple[Any, ...]:
    dataset, unit, selector, budget = key
    # The full context first in each dataset, then policies in the paper's order.
    return (dataset, selector != FULL, budget, unitizer_sort_key(unit), selector_sort_key(selector))


def _display(rows: Iterable[SweepRow]) -> dict[str, str]:
    names: dict[str, str] = {FULL: "full context", "none": "-"}
    for r in rows:
        if r.selector != FULL:
            names.setdefault(r.selector, selector_name(r.selector))
            names.setdefault(r.unitizer, unitizer_name(r.unitizer))
    return names


def full_context_table(
    rows: Iterable[SweepRow],
    *,
    metric: str = "rouge1",
    price: Price | None = None,
    decimals: int = 3,
) -> Table:
    """Per dataset: the full context, then every (budget, unitizer, selector) with its mean
    ``metric`` of the generated text, mean prompt and reply tokens, mean cost per call, and
    the differences from the full context (score, and cost saved in percent).

    ``price`` (a :class:`~budgetctx.generate.Price`) re-prices every row (see
    :func:`row_cost`); None uses the cost recorded in the rows.
    """
    kept = [r for r in generated_rows(rows) if metric in r.metrics]
    groups = _group(kept)
    full: dict[str, tuple[float | None, float | None]] = {}
    for (dataset, _, selector, _), rs in groups.items():
        if selector == FULL:
            costs = [c for c in (row_cost(r, price) for r in rs) if c is not None]
            full[dataset] = (_mean([float(r.metrics[metric]) for r in rs]), _mean(costs))
    out: list[tuple[Any, ...]] = []
    bold: set[tuple[int, int]] = set()
    for key in sorted(groups, key=_order):
        dataset, unit, selector, budget = key
        rs = groups[key]
        score = _mean([float(r.metrics[metric]) for r in rs])
        gens = [r.generation or {} for r in rs]
        prompt_tokens = _mean([float(g.get("prompt_tokens", 0)) for g in gens])
        out_tokens = _mean([float((g.get("usage") or {}).get("output_tokens", 0)) for g in gens])
        costs = [c for c in (row_cost(r, price) for r in rs) if c is not None]
        cost = _mean(costs) if len(costs) == len(rs) else None
        per_1k = None if cost is None else 1000.0 * cost
        full_score, full_cost = full.get(dataset, (None, None))
        delta = None if full_score is None or score is None else score - full_score
        saved = (
            None
            if selector == FULL or cost is None or not full_cost
            else 100.0 * (1.0 - cost / full_cost)
        )
        if delta is not None and delta >= 0 and selector != FULL:
            bold.add((len(out), 5))  # as good as the full context, for less
        out.append(
            (
                dataset,
                budget if selector != FULL else "-",
                unit,
                selector,
                score,
                delta,
                prompt_tokens,
                out_tokens,
                per_1k,
                saved,
                len(rs),
            )
        )
    priced = f" priced as {price.model}" if price is not None else ""
    return Table(
        f"Generated {metric_name(metric)} and cost against the full context{priced}",
        (
            "dataset",
            "budget",
            "unitizer",
            "selector",
            metric,
            f"Δ {metric} vs full",
            "prompt tokens",
            "output tokens",
            "USD per 1k calls",
            "cost saved %",
            "n",
        ),
        tuple(out),
        bold=frozenset(bold),
        decimals=decimals,
        group_columns=2,
        display=_display(kept),
        caption=(
            "Means over examples. Cost is Eq. 1, (p_in x input + p_out x output) / 1e6 per "
            "call, shown per 1,000 calls; re-priced, input is the prompt's tokens in the "
            "sweep's tokenizer and output the reply's tokens as the model counted them. Bold: "
            "a policy at least as good as the full context."
        ),
    )


def classification_table(
    rows: Iterable[SweepRow],
    *,
    classes: Sequence[str] = ("yes", "no", "maybe"),
    decimals: int = 3,
) -> Table:
    """Macro-F1 and accuracy per (dataset, budget, unitizer, selector), the full context
    first, with the number of unparseable answers (counted as wrong, never mapped)."""
    kept = [r for r in generated_rows(rows) if "correct" in r.metrics]
    groups = _group(kept)
    out: list[tuple[Any, ...]] = []
    best: dict[tuple[str, Any], tuple[float, int]] = {}
    for key in sorted(groups, key=_order):
        dataset, unit, selector, budget = key
        rs = groups[key]
        gold = [str((r.generation or {}).get("gold")) for r in rs]
        pred = [(r.generation or {}).get("label") for r in rs]
        report = classification_report(gold, pred, classes=classes)
        b = budget if selector != FULL else "-"
        if (dataset, b) not in best or report.macro_f1 > best[(dataset, b)][0]:
            best[(dataset, b)] = (report.macro_f1, len(out))
        out.append(
            (
                dataset,
                b,
                unit,
                selector,
                report.macro_f1,
                report.accuracy,
                report.n_unparseable,
                report.n,
            )
        )
    return Table(
        "Classification: macro-F1 against the full context",
        ("dataset", "budget", "unitizer", "selector", "macro-F1", "accuracy", "unparseable", "n"),
        tuple(out),
        bold=frozenset((row, 4) for _, row in best.values()),
        decimals=decimals,
        group_columns=2,
        display=_display(kept),
        caption=(
            "Unparseable answers count as wrong for their gold class and are never mapped to "
            "a label. Bold: the best macro-F1 per dataset and budget."
        ),
    )
