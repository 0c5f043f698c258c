"""``write_sensitivity``: the four views of a weight-sensitivity run in one folder.

:func:`budgetctx.eval.report.write_report` hands a run over to it when the run's store says
it is one (``budgetctx sensitivity`` wrote it); call that, not this.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from budgetctx._errors import InvalidParameterError
from budgetctx.eval._store import SweepRow, SweepStore
from budgetctx.eval.report._cells import check_confidence, check_metric
from budgetctx.eval.report._sensitivity import (
    MIN_CUT,
    TOLERANCES,
    Landscape,
    best_weights,
    best_weights_table,
    landscapes,
    summary_table,
    wasserstein,
)
from budgetctx.eval.report._sensitivity_plots import plot_distance, plot_ternary, plot_tolerance

__all__ = ["SensitivityFiles", "is_sensitivity_run", "sensitivity_meta", "write_sensitivity"]


@dataclass(frozen=True)
class SensitivityFiles:
    """What :func:`write_sensitivity` wrote (``write_report`` returns it as ReportFiles)."""

    report: Path
    cells: Path
    markdown: tuple[Path, ...]
    csv: tuple[Path, ...]
    figures: tuple[Path, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            k: str(v) if isinstance(v, Path) else [str(p) for p in v]
            for k, v in asdict(self).items()
        }


def sensitivity_meta(run_dir: str | Path) -> dict[str, Any] | None:
    """What ``budgetctx sensitivity`` recorded about its grid; None for any other sweep."""
    from budgetctx.eval._sensitivity import META_KEY

    path = Path(run_dir)
    if not (path / SweepStore.FILENAME).is_file():
        return None
    with SweepStore(path) as store:
        meta = store.meta(META_KEY)
    return dict(meta) if isinstance(meta, Mapping) else None


def is_sensitivity_run(run_dir: str | Path) -> bool:
    """True when ``run_dir`` holds a weight-sensitivity run."""
    return sensitivity_meta(run_dir) is not None


def _landscape_csv(lands: Sequence[Landscape], path: Path) -> Path:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "dataset",
            "budget",
            "alpha",
            "beta",
            "gamma",
            "n",
            "n_cut",
            "mean",
            "loss",
            "w1_uniform",
            "w1_line",
            "best",
            "default",
        ]
    )
    for land in lands:
        best = land.best
        top = float(land.means.max())
        for p, m in zip(land.points, land.means, strict=True):
            w.writerow(
                [
                    land.dataset,
                    land.budget,
                    *(repr(x) for x in p),
                    land.n,
                    land.n_cut,
                    repr(round(float(m), 6)),
                    repr(round(float(m) - top, 6)),
                    repr(wasserstein(p, best)),
                    repr(round(wasserstein(p, best, ground="line"), 9)),
                    int(p == best),
                    int(p == land.default),
                ]
            )
    path.write_text(buf.getvalue(), encoding="utf-8")
    return path


def write_sensitivity(
    run: Path,
    rows: Sequence[SweepRow],
    meta: Mapping[str, Any],
    *,
    out_dir: Path,
    metric: str | None = None,
    split: str | None = None,
    settings_markdown: str = "",
    confidence: float = 0.95,
    seed: int = 0,
    n_resamples: int = 1000,
) -> SensitivityFiles:
    """Tables, CSVs, figures and ``report.md`` of the weight-sensitivity run ``run`` (its
    ``rows`` and store ``meta``) in ``out_dir``: ternary heat maps per dataset (one panel
    per budget), the score against the distance from the best weights, the near-optimal
    share against the budget, and the best weights with bootstrap intervals.
    """
    check_confidence(confidence)
    out = out_dir
    metric = metric or "rouge1"
    check_metric(rows, metric)
    lands = landscapes(rows, grid=meta["grid"], default=meta.get("default"), metric=metric)
    if not lands:
        raise InvalidParameterError(
            f"{run} has no rows on its weight grid yet; run or resume the sensitivity sweep.",
            parameter="run_dir",
            value=str(run),
        )
    steps = [float(s) for s in meta.get("steps", [])]
    step = min(steps) if steps else None
    cut = {}
    for x in lands:
        sub = x.only_cut(min_examples=MIN_CUT)
        if sub is not None:
            cut[(x.dataset, x.budget)] = sub
    out.mkdir(parents=True, exist_ok=True)

    figures: list[Path] = []
    datasets = sorted({x.dataset for x in lands})
    for d in datasets:
        figures.append(
            plot_ternary(
                [x for x in lands if x.dataset == d], out / f"sensitivity_ternary_{_slug(d)}.png"
            )
        )
    figures.append(plot_distance(lands, out / "sensitivity_distance.png"))
    figures.append(
        plot_tolerance(lands, out / "sensitivity_tolerance.png", cut_only=list(cut.values()))
    )

    best = [
        best_weights(x, confidence=confidence, n_resamples=n_resamples, seed=seed) for x in lands
    ]
    best_t = best_weights_table(best, metric=metric, confidence=confidence)
    summ_t = summary_table(lands, step=step, cut_only=cut)
    md_paths, csv_paths = [], []
    for stem, table in (("sensitivity_best", best_t), ("sensitivity_claims", summ_t)):
        md = out / f"{stem}.md"
        md.write_text(table.to_markdown(), encoding="utf-8")
        c = out / f"{stem}.csv"
        c.write_text(table.to_csv(), encoding="utf-8")
        md_paths.append(md)
        csv_paths.append(c)
    (out / "sensitivity_best.json").write_text(
        json.dumps([b.to_dict() for b in best], indent=1), encoding="utf-8"
    )
    cells = _landscape_csv(lands, out / "sensitivity_landscape.csv")

    lines = [
        f"# Weight-sensitivity report: {run.name}",
        "",
        f"- Run: `{run}`; RCD `{meta.get('base', 'rcd')}` at {len(meta['grid'])} grid points "
        f"(step {', '.join(f'{s:g}' for s in steps) or '?'}) plus the defaults "
        f"`{meta.get('default')}`",
        f"- Split: {split if split is not None else 'as run (sensitivity runs use validation)'}"
        f"; metric: `{metric}`",
        "- Distance: 1-Wasserstein with the uniform ground metric on the three terms "
        "(= total variation, the share of weight moved); `sensitivity_landscape.csv` also "
        "has the distance with R, C, D on a line (scipy.stats.wasserstein_distance)",
        f"- Tolerances: {', '.join(f'{t:g}' for t in TOLERANCES)} ({metric} points)",
        f"- Intervals: {confidence:.0%} percentile bootstrap over examples "
        f"({n_resamples} resamples, seed {seed})",
        "",
        settings_markdown,
        f"## {best_t.title}",
        "",
        best_t.to_markdown(title=False),
        best_t.caption,
        "",
        f"## {summ_t.title}",
        "",
        summ_t.to_markdown(title=False),
        summ_t.caption,
        "",
        "## Landscapes",
        "",
        *(f"![{p.stem}]({p.name})" for p in figures[: len(datasets)]),
        "",
        "## Score against distance from the best weights",
        "",
        f"![distance]({figures[-2].name})",
        "",
        "## Near-optimal share against budget",
        "",
        f"![tolerance]({figures[-1].name})",
        "",
        "## Files",
        "",
        *(f"- [`{p.name}`]({p.name})" for p in (cells, *csv_paths)),
    ]
    report = out / "report.md"
    report.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return SensitivityFiles(report, cells, tuple(md_paths), tuple(csv_paths), tuple(figures))


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
