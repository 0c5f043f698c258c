"""Leave-one-dataset-out router evaluation (issue 21): does ``auto`` win on documents it has
never seen?

Reads the per-example scores of ``benchmarks/peer_grid.py`` (budgetctx selectors, Lead and the
sumy rankers at equal tokens on every public dataset). For each dataset in turn, routers are
calibrated on the *other* datasets only and scored on the one left out, beside every fixed
selector, the peers, the per-dataset best fixed selector (an oracle choice no router can know)
and the per-instance upper bound (the best candidate on each example), each with a
percentile-bootstrap interval. Routers read only run-time statistics (``DocumentStats``) or
the candidate contexts themselves (:func:`budgetctx.router.context_divergence`); the
reference is only what scored the rows.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from budgetctx._core.results import DocumentStats
from budgetctx._errors import InvalidParameterError
from budgetctx.eval._calibrate import (
    Instance,
    calibrate_budget_router,
    calibrate_feature_router,
)
from budgetctx.eval.metrics import bootstrap_ci
from budgetctx.router import Router

__all__ = ["DEFAULT_PEERS", "LodoReport", "LodoRow", "grid_instances", "lodo_route_eval"]

#: A policy picks one candidate per instance; it is fitted on the calibration instances.
Policy = Callable[[Sequence[Instance]], Callable[[Instance], str]]


def grid_instances(
    result: Mapping[str, Any], candidates: Sequence[str]
) -> tuple[list[Instance], dict[tuple[str, str, int], dict[str, float]]]:
    """Instances (run-time stats and every candidate's score) from a peer_grid result, and
    each instance's context divergences (keyed like the instances)."""
    insts: list[Instance] = []
    divergence: dict[tuple[str, str, int], dict[str, float]] = {}
    for ds, by_method in result["scores"].items():
        missing = [c for c in candidates if c not in by_method]
        if missing:
            raise InvalidParameterError(
                f"The grid has no scores of {missing} on {ds}; run peer_grid.py with "
                "--selectors naming them.",
                parameter="candidates",
                value=missing,
            )
        feats = result.get("features", {}).get(ds, {})
        turns = result.get("turns", {}).get(ds) or [None] * len(result["ids"][ds])
        for k, example_id in enumerate(result["ids"][ds]):
            for b in result["budgets"]:
                v = result["stats"][ds][k][str(b)]
                # The dialogue statistics (issue 21) from the grid's own record of them, so
                # that grids written before they were route statistics still read.
                t = turns[k] or {}
                stats = DocumentStats(
                    phi=v[3],
                    rho=v[4],
                    length=int(v[1]),
                    budget_ratio=v[2],
                    backchannel_share=float(t.get("backchannel_share", 0.0)),
                    hesitation_rate=float(t.get("hesitation_rate", 0.0)),
                    mean_turn_words=float(t.get("mean_turn_words", 0.0)),
                )
                scores = {c: float(by_method[c][str(b)][k]) for c in candidates}
                insts.append(Instance(ds, example_id, int(b), stats, scores))
                divergence[(ds, example_id, int(b))] = {
                    c: float(feats[c][str(b)][k]) for c in candidates if c in feats
                }
    return insts, divergence


@dataclass(frozen=True)
class LodoRow:
    """One held-out (dataset, budget): mean score and 95 % interval of every system."""

    dataset: str
    budget: int
    n: int
    systems: dict[str, tuple[float, float, float]]
    best_fixed: str
    chosen: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LodoReport:
    rows: tuple[LodoRow, ...]
    markdown: str
    files: tuple[str, ...]


def _router_policy(fit: Callable[[Sequence[Instance]], Router]) -> Policy:
    def policy(cal: Sequence[Instance]) -> Callable[[Instance], str]:
        router = fit(cal)
        return lambda i: router.route(i.stats, i.budget).selector

    return policy


def _divergence_policy(
    divergence: Mapping[tuple[str, str, int], Mapping[str, float]], candidates: Sequence[str]
) -> Policy:
    """The candidate whose context diverges least from its document (nothing to fit)."""

    def policy(cal: Sequence[Instance]) -> Callable[[Instance], str]:
        def pick(i: Instance) -> str:
            d = divergence[(i.dataset, i.example_id, i.budget)]
            return min(candidates, key=lambda c: d.get(c, 1.0))

        return pick

    return policy


def default_policies(
    candidates: Sequence[str],
    divergence: Mapping[tuple[str, str, int], Mapping[str, float]],
) -> dict[str, Policy]:
    """The routers compared: the paper's budget rule, the statistics tree (shrunk to the
    budget rule by cross-validated ``min_gain``), and the least-divergence choice."""
    return {
        "budget router": _router_policy(lambda cal: calibrate_budget_router(cal)),
        "feature router": _router_policy(lambda cal: calibrate_feature_router(cal)),
        "least divergence": _divergence_policy(divergence, candidates),
    }


#: The rivals besides the candidates, when the grid has them: Lead and the sumy rankers.
DEFAULT_PEERS = ("lead", "sumy-lsa", "sumy-lexrank", "sumy-sumbasic")


def lodo_route_eval(
    result: Mapping[str, Any],
    *,
    candidates: Sequence[str],
    peers: Sequence[str] | None = None,
    policies: Mapping[str, Policy] | None = None,
    out_dir: str | Path | None = None,
    seed: int = 0,
) -> LodoReport:
    """Calibrate each policy on every dataset but one, score it on the one left out.

    ``peers``: the rivals besides the candidates; by default Lead and the sumy rankers the
    grid has. Named peers must be columns of the grid."""
    columns = {c for by_method in result["scores"].values() for c in by_method}
    if peers is None:
        peers = [p for p in DEFAULT_PEERS if p in columns]
    absent = [p for p in peers if p not in columns]
    if absent:
        raise InvalidParameterError(
            f"The grid has no scores of the peers {absent}; its columns are "
            f"{sorted(columns)}. Name peers among them, or run peer_grid.py with --peer-pins "
            "for the '+pins' peers.",
            parameter="peers",
            value=absent,
        )
    insts, divergence = grid_instances(result, candidates)
    pols = dict(policies or default_policies(candidates, divergence))
    datasets = list(result["scores"])
    rows: list[LodoRow] = []
    for held in datasets:
        cal = [i for i in insts if i.dataset != held]
        test = [i for i in insts if i.dataset == held]
        picks = {name: policy(cal) for name, policy in pols.items()}
        groups: dict[int, list[tuple[int, Instance]]] = defaultdict(list)
        for i in test:
            k = result["ids"][held].index(i.example_id)
            groups[i.budget].append((k, i))
        for budget, group in sorted(groups.items()):
            systems: dict[str, list[float]] = {}
            chosen: dict[str, dict[str, int]] = {}
            for name, pick in picks.items():
                names = [pick(i) for _, i in group]
                systems[name] = [i.scores[p] for (_, i), p in zip(group, names, strict=True)]
                chosen[name] = {c: names.count(c) for c in sorted(set(names))}
            by_method = result["scores"][held]
            for c in dict.fromkeys([*candidates, *peers]):
                if c in by_method:
                    systems[c] = [float(by_method[c][str(budget)][k]) for k, _ in group]
            means = {c: float(np.mean(systems[c])) for c in candidates}
            best = max(means, key=lambda c: means[c])
            systems["best fixed (oracle choice)"] = list(systems[best])
            systems["per-instance upper"] = [max(i.scores.values()) for _, i in group]
            rows.append(
                LodoRow(
                    dataset=held,
                    budget=budget,
                    n=len(group),
                    systems={name: _ci(values, seed) for name, values in systems.items()},
                    best_fixed=best,
                    chosen=chosen,
                )
            )
    md = markdown(rows, routers=list(pols), candidates=candidates, peers=peers)
    files: list[str] = []
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "lodo.md").write_text(md, encoding="utf-8")
        (out / "lodo.json").write_text(
            json.dumps([r.to_dict() for r in rows], indent=1), encoding="utf-8"
        )
        files = [str(out / "lodo.md"), str(out / "lodo.json")]
        files.append(str(_figure(rows, out, routers=list(pols), peers=peers)))
    return LodoReport(tuple(rows), md, tuple(files))


def _ci(values: Sequence[float], seed: int) -> tuple[float, float, float]:
    ci = bootstrap_ci(values, seed=seed)
    return (round(ci.estimate, 4), round(ci.low, 4), round(ci.high, 4))


def goal(row: LodoRow, router: str, rivals: Sequence[str], tolerance: float = 0.005) -> bool:
    """Whether ``router`` is within ``tolerance`` of the best of ``rivals`` in ``row``."""
    best = max(row.systems[r][0] for r in rivals if r in row.systems)
    return row.systems[router][0] >= best - tolerance


def markdown(
    rows: Sequence[LodoRow],
    *,
    routers: Sequence[str],
    candidates: Sequence[str],
    peers: Sequence[str],
) -> str:
    head = [
        "held-out dataset",
        "budget",
        "n",
        *routers,
        *candidates,
        *[p for p in peers if p not in candidates],
        "best fixed (oracle choice)",
        "per-instance upper",
    ]
    lines = [
        "| " + " | ".join(head) + " |",
        "|" + "|".join(":--" if k < 2 else "--:" for k in range(len(head))) + "|",
    ]
    for r in rows:
        cells = [r.dataset, str(r.budget), str(r.n)]
        for name in head[3:]:
            est = r.systems.get(name)
            cells.append("-" if est is None else f"{est[0]:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    rivals = [*candidates, *peers]
    # The goal counts Lead, each selector at its defaults and the peers; option
    # variants ("mmr:cost_exponent=0") are candidates to route to, not rivals of it.
    defaults = [c for c in rivals if ":" not in c]
    lines.append("")
    for name in [*routers, *(c for c in candidates if c not in routers)]:
        hits = sum(goal(r, name, rivals) for r in rows)
        goal_hits = sum(goal(r, name, defaults) for r in rows)
        mean = np.mean([r.systems[name][0] for r in rows])
        best = np.mean([max(r.systems[c][0] for c in rivals if c in r.systems) for r in rows])
        lines.append(
            f"- {name}: within 0.005 of the best fixed selector or peer in {hits} of "
            f"{len(rows)} cells ({goal_hits} counting selectors at their defaults, Lead and "
            f"the peers only); mean {mean:.4f} vs the per-cell best rival {best:.4f}"
        )
    return "\n".join(lines) + "\n"


def _figure(
    rows: Sequence[LodoRow], out: Path, *, routers: Sequence[str], peers: Sequence[str]
) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    budgets = sorted({r.budget for r in rows})
    fig = Figure(figsize=(11, 3.2 * len(budgets)))
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(budgets), 1, squeeze=False)[:, 0]
    for ax, budget in zip(axes, budgets, strict=True):
        rs = [r for r in rows if r.budget == budget]
        x = np.arange(len(rs))
        # the first sumy ranker given (with or without budgetctx's pins) stands for the peers;
        # the bundled router's own column is drawn when the grid's was passed
        lsa = next((p for p in peers if p.startswith("sumy-")), "sumy-lsa")
        shipped = ["auto"] if any("auto" in r.systems for r in rs) else []
        names = [*routers, *shipped, "best fixed (oracle choice)", lsa, "lead"]
        width = 0.8 / len(names)
        for k, name in enumerate(names):
            est = np.array([r.systems.get(name, (np.nan, np.nan, np.nan)) for r in rs])
            ax.bar(
                x + (k - len(names) / 2 + 0.5) * width,
                est[:, 0],
                width,
                yerr=[est[:, 0] - est[:, 1], est[:, 2] - est[:, 0]],
                label=name,
                capsize=1.5,
            )
        ax.plot(
            x,
            [r.systems["per-instance upper"][0] for r in rs],
            "k_",
            ms=14,
            label="per-instance upper",
        )
        ax.set_xticks(x, [r.dataset.replace("leval:", "") for r in rs], rotation=20, fontsize=7)
        ax.set_ylabel(f"ROUGE-1 F1 @ {budget}")
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=7, ncol=4, loc="upper right")
    fig.tight_layout()
    path = out / "lodo_rouge1.png"
    fig.savefig(path, dpi=130)
    return path
