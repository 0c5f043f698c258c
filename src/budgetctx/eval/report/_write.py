"""``write_report``: every table and figure of a sweep, stitched into one ``report.md``."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from budgetctx._errors import InvalidParameterError
from budgetctx.eval._labels import FULL
from budgetctx.eval._store import SweepRow, SweepStore
from budgetctx.eval.report._bounds import oracle_bounds
from budgetctx.eval.report._cells import (
    Cell,
    check_confidence,
    check_metric,
    example_counts,
    summarize,
)
from budgetctx.eval.report._figures import plot_bounds, plot_curves, plot_frontier
from budgetctx.eval.report._frontier import pareto_frontier
from budgetctx.eval.report._llm import (
    classification_table,
    full_context_table,
    generated_rows,
    row_cost,
)
from budgetctx.eval.report._style import (
    default_unitizer,
    metric_name,
    selector_colors,
    selector_name,
    selector_sort_key,
    unitizer_name,
    unitizer_sort_key,
)
from budgetctx.eval.report._tables import (
    Interval,
    Table,
    bounds_table,
    frontier_table,
    selector_table,
    unitization_table,
    write_cells_csv,
)
from budgetctx.generate import Price, get_price, load_prices

__all__ = ["ReportFiles", "write_report"]

# The paper reports both; a report shows them next to the metric asked for.
_CURVE_METRICS = ("rouge1", "rouge2", "bertscore_f")
_N_RESAMPLES = 1000  # budgetctx.eval.metrics.bootstrap_ci's default


@dataclass(frozen=True)
class ReportFiles:
    """What :func:`write_report` wrote, under ``out_dir``.

    >>> files = ReportFiles(Path("r/report.md"), Path("r/cells.csv"), (), (), ())
    >>> [p.name for p in files.paths]
    ['report.md', 'cells.csv']
    """

    report: Path
    cells: Path
    markdown: tuple[Path, ...]
    csv: tuple[Path, ...]
    figures: tuple[Path, ...]

    @property
    def paths(self) -> tuple[Path, ...]:
        """Every file, ``report.md`` first."""
        return (self.report, self.cells, *self.markdown, *self.csv, *self.figures)

    def to_dict(self) -> dict[str, Any]:
        return {
            "report": str(self.report),
            "cells": str(self.cells),
            "markdown": [str(p) for p in self.markdown],
            "csv": [str(p) for p in self.csv],
            "figures": [str(p) for p in self.figures],
        }


def _slug(metric: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", metric)


def _load(run_dir: Path, split: str | None) -> tuple[list[SweepRow], dict[str, Any] | None]:
    if not (run_dir / SweepStore.FILENAME).is_file():
        raise InvalidParameterError(
            f"No sweep at {run_dir} ({SweepStore.FILENAME} is missing); pass the folder a "
            "sweep wrote (budgetctx sweep ... --out RUN).",
            parameter="run_dir",
            value=str(run_dir),
        )
    with SweepStore(run_dir) as store:
        rows = list(store.rows(split=split) if split is not None else store.rows())
        settings = store.settings()
    if not rows:
        where = f" for split {split!r}" if split is not None else ""
        raise InvalidParameterError(
            f"{run_dir / SweepStore.FILENAME} has no rows{where}; run or resume the sweep "
            "first" + (", or pass another split." if split is not None else "."),
            parameter="split" if split is not None else "run_dir",
            value=split if split is not None else str(run_dir),
        )
    return rows, settings


def write_report(
    run_dir: str | Path,
    *,
    out_dir: str | Path | None = None,
    metric: str | None = None,
    split: str | None = None,
    selectors_for_bounds: Sequence[str] | None = None,
    unitizer: str | None = None,
    interval: Interval = "halfwidth",
    confidence: float = 0.95,
    seed: int = 0,
    extra: Mapping[str, Mapping[int, float]] | None = None,
    extra_label: str = "router",
    price_model: str | None = None,
    prices: str | Path | None = None,
) -> ReportFiles:
    """Tables (Markdown and CSV), figures (PNG) and ``report.md`` for the sweep in
    ``run_dir``, written to ``out_dir`` (default ``run_dir/report``).

    ``metric`` drives the unitization table, the frontier and the bounds; the selector tables
    and curves show ROUGE-1 and ROUGE-2 (and ``metric``). ``split`` keeps one split (None:
    pooled); ``unitizer`` is the unitization of the one-unitizer tables and figures (default
    ``sentence``); ``selectors_for_bounds`` restricts the bounds (the paper: lead, mmr, rcd);
    ``extra`` adds a line to the bounds figure (``{dataset: {budget: score}}``, a router).
    ``metric`` None is ROUGE-1, or accuracy (``correct``) for a classification sweep.
    A weight-sensitivity run (``budgetctx sensitivity``) gets its own report instead
    (:func:`~budgetctx.eval.report._sensitivity_write.write_sensitivity`).

    An LLM sweep's report adds the full-context comparison (score and cost per call; also
    re-priced as ``price_model``, from the bundled table or ``prices``, when given) and, for
    classification, macro-F1 per cell. Full-context rows are left out of the other tables.

    >>> import tempfile
    >>> from budgetctx.eval._store import SweepRow, SweepStore
    >>> tmp = tempfile.TemporaryDirectory()
    >>> run = tmp.name
    >>> with SweepStore(run) as store:
    ...     _ = store.write(SweepRow("d", e, "sentence", s, b, "test", b, 900, 3, (0,),
    ...                              {"rouge1": v, "rouge2": v / 2})
    ...                     for e, v in (("a", .2), ("b", .4)) for s in ("lead", "mmr")
    ...                     for b in (256, 512))
    >>> files = write_report(run)
    >>> files.report.name, len(files.figures)
    ('report.md', 4)
    >>> tmp.cleanup()
    """
    check_confidence(confidence)
    run = Path(run_dir)
    out = Path(out_dir) if out_dir is not None else run / "report"
    all_rows, settings = _load(run, split)
    # A weight-sensitivity run (budgetctx sensitivity) has its own views: a selector table
    # with 66 RCD settings as rows would say nothing.
    from budgetctx.eval.report._sensitivity_write import sensitivity_meta, write_sensitivity

    meta = sensitivity_meta(run)
    if meta is not None:
        f = write_sensitivity(
            run,
            all_rows,
            meta,
            out_dir=out,
            metric=metric,
            split=split,
            settings_markdown=_settings_table(settings),
            confidence=confidence,
            seed=seed,
        )
        return ReportFiles(f.report, f.cells, f.markdown, f.csv, f.figures)
    if metric is None:
        has_rouge = any("rouge1" in r.metrics for r in all_rows)
        has_label = any("correct" in r.metrics for r in all_rows)
        metric = "correct" if has_label and not has_rouge else "rouge1"
    check_metric(all_rows, metric)
    price = get_price(price_model, prices=load_prices(prices)) if price_model is not None else None
    # The full-context baseline has no budget: it has its own table, not a column.
    rows = [r for r in all_rows if r.selector != FULL] or all_rows
    out.mkdir(parents=True, exist_ok=True)

    unit = unitizer if unitizer is not None else default_unitizer(r.unitizer for r in rows)
    if unit not in {r.unitizer for r in rows}:
        raise InvalidParameterError(
            f"No rows for unitizer {unit!r}; use one of "
            f"{sorted({r.unitizer for r in rows}, key=unitizer_sort_key)}.",
            parameter="unitizer",
            value=unit,
        )
    present = {m for r in rows for m in r.metrics}
    curve_metrics = [m for m in dict.fromkeys((*_CURVE_METRICS, metric)) if m in present]
    cells: list[Cell] = []
    for m in curve_metrics:
        cells += summarize(rows, metric=m, confidence=confidence, seed=seed)
    bounds = oracle_bounds(rows, metric=metric, selectors=selectors_for_bounds)
    frontier = pareto_frontier(cells, metric=metric)
    colors = selector_colors(r.selector for r in rows)

    tables: list[tuple[str, Table, str | None]] = []  # (file stem, table, figure file)
    figures: list[Path] = []
    for m in curve_metrics:
        fig = plot_curves(
            cells, out / f"curves_{_slug(m)}.png", metric=m, unitizer=unit, colors=colors
        )
        figures.append(fig)
        tables.append(
            (
                f"selectors_{_slug(m)}",
                selector_table(cells, metric=m, unitizer=unit, interval=interval),
                fig.name,
            )
        )
    tables.append(
        (
            f"unitizers_{_slug(metric)}",
            unitization_table(cells, metric=metric, interval=interval),
            None,
        )
    )
    fig = plot_frontier(frontier, out / f"frontier_{_slug(metric)}.png", colors=colors)
    figures.append(fig)
    tables.append((f"frontier_{_slug(metric)}", frontier_table(frontier), fig.name))
    fig = plot_bounds(
        bounds,
        out / f"bounds_{_slug(metric)}.png",
        unitizer=unit,
        extra=extra,
        extra_label=extra_label,
    )
    figures.append(fig)
    tables.append((f"bounds_{_slug(metric)}", bounds_table(bounds), fig.name))

    llm_rows = generated_rows(all_rows)
    if llm_rows and any(metric in r.metrics for r in llm_rows):
        tables.append(("full_context", full_context_table(llm_rows, metric=metric), None))
        if price is not None:
            tables.append(
                (
                    f"full_context_{_slug(price.model)}",
                    full_context_table(llm_rows, metric=metric, price=price),
                    None,
                )
            )
    if any("correct" in r.metrics for r in llm_rows):
        tables.append(("classification", classification_table(llm_rows), None))

    md_paths, csv_paths = [], []
    for stem, table, _ in tables:
        md = out / f"{stem}.md"
        md.write_text(table.to_markdown(), encoding="utf-8")
        csv_path = out / f"{stem}.csv"
        csv_path.write_text(table.to_csv(), encoding="utf-8")
        md_paths.append(md)
        csv_paths.append(csv_path)
    cells_path = write_cells_csv(cells, out / "cells.csv")

    report = out / "report.md"
    report.write_text(
        _markdown(
            run,
            rows,
            settings,
            tables,
            metric=metric,
            split=split,
            unitizer=unit,
            curve_metrics=curve_metrics,
            confidence=confidence,
            seed=seed,
            interval=interval,
            csv_names=[cells_path.name, *(p.name for p in csv_paths)],
            llm_note=_llm_note(llm_rows, len(all_rows) - len(rows), price),
        ),
        encoding="utf-8",
    )
    return ReportFiles(report, cells_path, tuple(md_paths), tuple(csv_paths), tuple(figures))


def _llm_note(rows: Sequence[SweepRow], n_full: int, price: Price | None = None) -> str:
    if not rows:
        return ""
    too_long = sum(1 for r in rows if (r.generation or {}).get("error") == "context_length")
    rows = [r for r in rows if not (r.generation or {}).get("error")]
    gens = [r.generation or {} for r in rows]
    models = sorted({str(g.get("model")) for g in gens})
    prompts = sorted({str(g.get("prompt")) for g in gens})
    cached = sum(1 for g in gens if g.get("cached"))
    costs = [g.get("cost_usd") for g in gens]
    total = (
        f"; recorded cost ${sum(float(c) for c in costs if c is not None):.4f}"
        if any(c is not None for c in costs)
        else ""
    )
    if price is not None:
        repriced = sum(row_cost(r, price) or 0.0 for r in rows)
        total += f"; ${repriced:.4f} if every row were a call to {price.model}"
    return (
        f"- Generation: {len(rows)} replies from {', '.join(models)} with prompt "
        f"{', '.join(prompts)} ({cached} served by the response cache{total}); "
        f"{n_full} full-context baseline rows"
        + (
            f"; {too_long} prompts were longer than the model's context window and have no "
            "reply (left out of the means: compare cells by their n)"
            if too_long
            else ""
        )
    )


def _settings_table(settings: Mapping[str, Any] | None) -> str:
    if not settings:
        return "Run settings: not recorded in the store.\n"
    # JSON, so that a separator "\n" shows as such instead of breaking the table.
    rows = tuple((k, f"`{json.dumps(v)}`") for k, v in sorted(settings.items()))
    return Table("Run settings", ("setting", "value"), rows).to_markdown()


def _markdown(
    run: Path,
    rows: Sequence[SweepRow],
    settings: Mapping[str, Any] | None,
    tables: Sequence[tuple[str, Table, str | None]],
    *,
    metric: str,
    split: str | None,
    unitizer: str,
    curve_metrics: Sequence[str],
    confidence: float,
    seed: int,
    interval: Interval,
    csv_names: Sequence[str],
    llm_note: str = "",
) -> str:
    datasets = sorted({r.dataset for r in rows})
    selectors = sorted({r.selector for r in rows}, key=selector_sort_key)
    units = sorted({r.unitizer for r in rows}, key=unitizer_sort_key)
    budgets = sorted({r.budget for r in rows})
    with_reason = sum(1 for r in rows if r.reason)
    counts = example_counts(rows)

    lines = [
        f"# Sweep report: {run.name}",
        "",
        f"- Run: `{run}` ({len(rows)} contexts)",
        f"- Datasets: {', '.join(datasets)}",
        f"- Split: {split if split is not None else 'all splits, pooled'}",
        f"- Unitizers: {', '.join(unitizer_name(u) for u in units)} "
        f"(one-unitizer tables and figures: {unitizer_name(unitizer)})",
        f"- Selectors: {', '.join(selector_name(s) for s in selectors)}",
        f"- Budgets (tokens): {', '.join(str(b) for b in budgets)}",
        f"- Metric: {metric_name(metric)} (`{metric}`) for the unitization table, the frontier "
        f"and the bounds; selector tables and curves: "
        f"{', '.join(metric_name(m) for m in curve_metrics)}",
        f"- Confidence intervals: {confidence:.0%} percentile bootstrap over examples "
        f"({_N_RESAMPLES} resamples, seed {seed}) of each cell's mean "
        "(`budgetctx.eval.metrics.bootstrap_ci`)"
        + {
            "halfwidth": "; tables print ± half the interval's width",
            "range": "; tables print it as [low, high]",
        }.get(interval, ""),
    ]
    if with_reason:
        lines.append(
            f"- {with_reason} contexts carry a reason (e.g. a budget below every "
            "unit); they are scored as they are"
        )
    if llm_note:
        lines.append(llm_note)
    lines += ["", _settings_table(settings)]
    count_table = Table(
        "Examples per dataset and split",
        ("dataset", "split", "examples"),
        tuple((d, s, n) for (d, s), n in counts.items()),
        group_columns=1,
    )
    lines += [count_table.to_markdown(), ""]

    for _, table, figure in tables:
        lines += [f"## {table.title}", ""]
        lines.append(table.to_markdown(title=False))
        if table.caption:
            lines += [table.caption, ""]
        if figure is not None:
            lines += [f"![{table.title}]({figure})", ""]
    lines += ["## Files", ""]
    lines += [f"- [`{name}`]({name})" for name in csv_names]
    return "\n".join(lines) + "\n"
