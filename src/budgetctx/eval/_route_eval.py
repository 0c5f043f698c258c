"""Calibrating and evaluating routers on a sweep run (what the CLI calls)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from budgetctx._errors import InvalidParameterError
from budgetctx.eval._calibrate import (
    PAPER_SELECTORS,
    Instance,
    RouteEvalRow,
    calibrate_budget_router,
    calibrate_feature_router,
    evaluate_router,
    instances,
)
from budgetctx.router import BudgetRouter, FeatureRouter, Router, save_router

__all__ = ["RouteEvalReport", "calibrate", "route_eval"]

Kind = Literal["budget", "feature"]


def _load(
    run_dir: str | Path,
    *,
    metric: str,
    candidates: Sequence[str] | None,
    unitizer: str,
    split: str,
    datasets: Sequence[str] | None,
) -> tuple[list[Instance], str]:
    from budgetctx.eval._store import SweepStore

    path = Path(run_dir) / SweepStore.FILENAME
    if not path.is_file():
        raise InvalidParameterError(
            f"No sweep store at {str(path)!r}; run `budgetctx sweep ... --out {run_dir}` first.",
            parameter="run",
            value=str(run_dir),
        )
    with SweepStore(run_dir) as store:
        settings = store.settings() or {}
        rows = list(store.rows(split=split))
    if datasets is not None:
        rows = [r for r in rows if r.dataset in set(datasets)]
    # The run's own selectors, in the order the sweep first wrote them (calibration breaks
    # ties by candidate order): a run swept with rcd:alpha=0.5 calibrates on that spec.
    swept = list(dict.fromkeys(r.selector for r in rows if r.unitizer == unitizer))
    swept = [s for s in swept if s != "oracle"]
    if candidates is None:
        candidates = swept
    insts = instances(rows, metric=metric, candidates=candidates, unitizer=unitizer)
    if not insts:
        raise InvalidParameterError(
            _no_instances(run_dir, rows, swept, candidates, split, unitizer, metric),
            parameter="selectors" if rows and swept else "split",
            value=",".join(candidates),
        )
    return insts, str(settings.get("tokenizer", "o200k_base"))


def _no_instances(
    run_dir: str | Path,
    rows: Sequence[Any],
    swept: Sequence[str],
    candidates: Sequence[str],
    split: str,
    unitizer: str,
    metric: str,
) -> str:
    """Why no (example, budget) had a score for every candidate, and the fix."""
    if not rows:
        return f"{run_dir} has no {split} rows; sweep with --split {split} (or both) first."
    if not swept:
        units = sorted({r.unitizer for r in rows})
        return (
            f"{run_dir} has {len(rows)} {split} rows, none with {unitizer} units (it has "
            f"{units}); sweep with --unitizers {unitizer}."
        )
    missing = [c for c in candidates if c not in swept]
    if missing:
        return (
            f"{run_dir} has {len(rows)} {split} rows, but none for {missing}; its selectors "
            f"are {', '.join(swept)}. Pass --selectors with names from the run (or leave it "
            "out to use them all)."
        )
    return (
        f"{run_dir} has {len(rows)} {split} rows, but no example and budget with a "
        f"{metric!r} score for every one of {list(candidates)}; check --metric, or resume "
        "the sweep so that every selector finishes."
    )


def _fit(
    kind: Kind,
    insts: Sequence[Instance],
    tokenizer: str,
    metric: str,
    provenance: Mapping[str, Any],
    **options: Any,
) -> BudgetRouter | FeatureRouter:
    if kind == "budget":
        return calibrate_budget_router(
            insts, metric=metric, tokenizer=tokenizer, provenance=provenance, **options
        )
    if kind == "feature":
        return calibrate_feature_router(
            insts, metric=metric, tokenizer=tokenizer, provenance=provenance, **options
        )
    raise InvalidParameterError(
        f"kind must be 'budget' or 'feature', got {kind!r}.", parameter="kind", value=kind
    )


def calibrate(
    run_dir: str | Path,
    *,
    kind: Kind = "feature",
    metric: str = "rouge1",
    candidates: Sequence[str] | None = PAPER_SELECTORS,
    unitizer: str = "sentence",
    datasets: Sequence[str] | None = None,
    out: str | Path | None = None,
    **options: Any,
) -> BudgetRouter | FeatureRouter:
    """Fit a router on the *validation* rows of a sweep run (never its test rows).

    ``candidates=None`` takes every selector the run has rows for (the oracle aside)."""
    insts, tokenizer = _load(
        run_dir,
        metric=metric,
        candidates=candidates,
        unitizer=unitizer,
        split="validation",
        datasets=datasets,
    )
    router = _fit(
        kind, insts, tokenizer, metric, {"run": str(run_dir), "unitizer": unitizer}, **options
    )
    if out is not None:
        save_router(router, out)
    return router


@dataclass(frozen=True)
class RouteEvalReport:
    rows: tuple[RouteEvalRow, ...]
    markdown: str
    files: tuple[str, ...]


def route_eval(
    run_dir: str | Path,
    *,
    out_dir: str | Path | None = None,
    metric: str = "rouge1",
    candidates: Sequence[str] | None = PAPER_SELECTORS,
    unitizer: str = "sentence",
    router: Router | None = None,
    calibration: Literal["pooled", "per-dataset"] = "pooled",
) -> RouteEvalReport:
    """Calibrate a budget router and a feature router on the *validation* rows (pooled over
    the run's datasets, or per dataset), or use ``router``; then score them on each
    dataset's *test* rows against every fixed candidate, the per-budget bounds (best/worst
    fixed selector) and the per-instance bounds (best/worst selector per example).
    ``candidates=None`` takes every selector the run has validation rows for."""
    val, tokenizer = _load(
        run_dir,
        metric=metric,
        candidates=candidates,
        unitizer=unitizer,
        split="validation",
        datasets=None,
    )
    candidates = tuple(val[0].scores)  # what the validation rows resolved None to
    test, _ = _load(
        run_dir,
        metric=metric,
        candidates=candidates,
        unitizer=unitizer,
        split="test",
        datasets=None,
    )
    if calibration not in ("pooled", "per-dataset"):
        raise InvalidParameterError(
            f"calibration must be 'pooled' or 'per-dataset', got {calibration!r}.",
            parameter="calibration",
            value=calibration,
        )

    def fitted(cal: Sequence[Instance], scope: str) -> dict[str, Router]:
        prov = {"run": str(run_dir), "calibrated_on": scope}
        return {
            "budget router": _fit("budget", cal, tokenizer, metric, prov),
            "feature router": _fit("feature", cal, tokenizer, metric, prov),
        }

    pooled = fitted(val, "all datasets") if router is None and calibration == "pooled" else {}
    rows: list[RouteEvalRow] = []
    for dataset in sorted({i.dataset for i in test}):
        if router is not None:
            routers: dict[str, Router] = {"router": router}
        elif calibration == "pooled":
            routers = pooled
        else:
            cal = [i for i in val if i.dataset == dataset]
            if not cal:
                continue
            routers = fitted(cal, dataset)
        rows.extend(evaluate_router([i for i in test if i.dataset == dataset], routers))
    markdown = _markdown(rows, metric, candidates)
    out = Path(out_dir) if out_dir is not None else Path(run_dir) / "route_eval"
    out.mkdir(parents=True, exist_ok=True)
    files = [out / "route_eval.md", out / "route_eval.json"]
    files[0].write_text(markdown, encoding="utf-8")
    files[1].write_text(json.dumps([r.to_dict() for r in rows], indent=2), encoding="utf-8")
    files.extend(_figures(rows, out, metric))
    return RouteEvalReport(tuple(rows), markdown, tuple(str(f) for f in files))


def _markdown(rows: Sequence[RouteEvalRow], metric: str, candidates: Sequence[str]) -> str:
    """One row per dataset and budget."""
    names = sorted({n for r in rows for n in r.routers})
    head = [
        "dataset",
        "budget",
        "n",
        *names,
        *candidates,
        "per-budget upper",
        "gap",
        "per-budget lower",
        "per-instance upper",
        "per-instance lower",
        "oracle",
    ]
    lines = [
        f"**Routers on held-out test rows ({metric}; calibrated on validation rows only)**",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join(":--" if i < 2 else "--:" for i in range(len(head))) + "|",
    ]
    for r in rows:
        best_router = max(r.routers.values())
        cells = [r.dataset, str(r.budget), str(r.n)]
        cells += [f"{r.routers[n]:.3f}" for n in names]
        cells += [f"{r.fixed[c]:.3f}" for c in candidates]
        cells += [
            f"{r.per_budget_upper:.3f}",
            f"{best_router - r.per_budget_upper:+.3f}",
            f"{r.per_budget_lower:.3f}",
            f"{r.per_instance_upper:.3f}",
            f"{r.per_instance_lower:.3f}",
            "-" if r.oracle is None else f"{r.oracle:.3f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "gap: best router minus the per-budget upper bound (the best fixed selector on "
        "test, which no router can know in advance).",
    ]
    return "\n".join(lines) + "\n"


def _figures(rows: Sequence[RouteEvalRow], out: Path, metric: str) -> list[Path]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    datasets = sorted({r.dataset for r in rows})
    if not datasets:
        return []
    legend_width = 2.6  # inches kept free on the right for the legend
    fig = Figure(figsize=(4.6 * len(datasets) + legend_width, 3.6))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(datasets), squeeze=False)[0]
    # The routers often agree; the budget router is drawn thick and the feature router
    # dashed on top, so that both stay visible when their lines coincide.
    styles: dict[str, tuple[str, str, str, float]] = {
        "budget router": ("tab:blue", "o", "-", 3.5),
        "feature router": ("tab:red", "s", "--", 1.5),
        "router": ("tab:red", "s", "-", 1.5),
    }
    for ax, dataset in zip(axes, datasets, strict=True):
        rs = [r for r in rows if r.dataset == dataset]
        b = [r.budget for r in rs]
        ax.fill_between(
            b,
            [r.per_budget_lower for r in rs],
            [r.per_budget_upper for r in rs],
            color="0.85",
            label="fixed selector: worst–best",
        )
        ax.plot(b, [r.per_instance_upper for r in rs], ":", color="0.3", label="per-instance upper")
        ax.plot(b, [r.per_instance_lower for r in rs], ":", color="0.6", label="per-instance lower")
        for name in sorted(rs[0].routers):
            color, marker, line, width = styles.get(name, ("tab:green", "^", "-", 1.5))
            ax.plot(
                b,
                [r.routers[name] for r in rs],
                marker=marker,
                color=color,
                linestyle=line,
                linewidth=width,
                label=name,
            )
        ax.set_xscale("log", base=2)
        ax.set_xticks(b, [str(x) for x in b])
        ax.minorticks_off()
        ax.set_title(f"{dataset} (test, n={rs[0].n})")
        ax.set_xlabel("token budget")
        ax.set_ylabel(f"{metric} F1")
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", frameon=False)
    fig.tight_layout(rect=(0, 0, 1 - legend_width / fig.get_figwidth(), 1))
    path = out / f"route_eval_{metric}.png"
    fig.savefig(path, dpi=150)
    return [path]
