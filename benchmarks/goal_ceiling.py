"""How many cells issue 21's goal leaves within reach, measured on peer_grid results.

The goal counts a (dataset, budget) cell as a hit when ``auto``'s mean ROUGE-1 F1 is within
0.005 of the best of its rivals (Lead, every budgetctx selector at its defaults, the sumy
rankers) and asks for 20 of the 22 cells. Each cell is a mean over 1-10 documents, so the
best rival of a cell is partly the luckiest one. This script measures what that criterion
leaves within reach of *any* router, from the per-example scores ``peer_grid.py`` keeps:

- **hits** of every system on each split (the criterion itself);
- **the dataset-aware oracle**: in every cell, the system with the best validation mean,
  scored on test (a router that knew the dataset's name and had its validation documents;
  no run-time router knows either);
- **the split-half ceiling**: in every cell, the documents split at random into halves, the
  best system on one half scored on the other (a perfect in-distribution choice, judged by
  the same criterion on documents it did not see); the mean hit count over ``--resamples``
  splits. A cell of one document cannot be split and counts as a hit (optimistic);
- **the subject's hits under resampling**: documents resampled with replacement within every
  cell (paired across systems), the subject's hit count per resample: its mean and 95 %
  interval.

Nothing here selects anything; it reads scores. ``--pinned-peers`` scores the sumy rankers
with budgetctx's pins (``peer_grid.py --peer-pins``): on MTSamples the clinical profile pins
the allergy and medication lists, which budgetctx pays for and the plain peers do not::

    python benchmarks/peer_grid.py --split validation --limit 10 --peer-pins \\
        --selectors lead mmr facility rcd auto hierarchical graphcluster sliding --out val.json
    python benchmarks/peer_grid.py --split test --limit 10 --peer-pins ... --out test.json
    python benchmarks/goal_ceiling.py val.json test.json
    python benchmarks/goal_ceiling.py val.json test.json --pinned-peers
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

MARGIN = 0.005
Cell = tuple[str, str]  # (dataset, budget)


def cell_scores(
    result: Mapping[str, Any], systems: Sequence[str]
) -> dict[Cell, NDArray[np.float64]]:
    """Per cell, a (systems x documents) array of scores, in ``systems``' order."""
    out: dict[Cell, NDArray[np.float64]] = {}
    for ds, by_name in result["scores"].items():
        for b in map(str, result["budgets"]):
            out[(ds, b)] = np.array([by_name[s][b] for s in systems], dtype=np.float64)
    return out


def default_rivals(result: Mapping[str, Any], subject: str, *, pinned_peers: bool) -> list[str]:
    """The goal's rivals present in every dataset of ``result``: names without options or a
    configuration label (selectors at their defaults, Lead), and the sumy rankers (with
    budgetctx's pins when ``pinned_peers``)."""
    names = [set(by_name) for by_name in result["scores"].values()]
    common = [n for n in next(iter(result["scores"].values())) if all(n in s for s in names)]
    rivals = []
    for n in common:
        if n == subject or ":" in n or "/" in n:
            continue
        if n.startswith("sumy-") and n.endswith("+pins") != pinned_peers:
            continue
        rivals.append(n)
    return rivals


def hits(means: NDArray[np.float64], subject: int, rivals: Sequence[int]) -> bool:
    """Whether ``means[subject]`` is within :data:`MARGIN` of the best of ``rivals`` (true
    when there is no other rival)."""
    return not rivals or bool(means[subject] >= max(means[r] for r in rivals) - MARGIN)


def hit_counts(
    cells: Mapping[Cell, NDArray[np.float64]], systems: Sequence[str], rivals: Sequence[str]
) -> dict[str, int]:
    """Each system's hits against the rivals other than itself.

    >>> cells = {("a", "256"): np.array([[0.308, 0.308], [0.32, 0.30], [0.10, 0.10]])}
    >>> hit_counts(cells, ["x", "y", "z"], ["y", "z"])
    {'x': 1, 'y': 1, 'z': 0}
    """
    idx = {s: i for i, s in enumerate(systems)}
    out = dict.fromkeys(systems, 0)
    for scores in cells.values():
        means = scores.mean(axis=1)
        for s in systems:
            others = [idx[r] for r in rivals if r != s]
            out[s] += hits(means, idx[s], others)
    return out


def oracle_transfer(
    chosen_on: Mapping[Cell, NDArray[np.float64]],
    scored_on: Mapping[Cell, NDArray[np.float64]],
    systems: Sequence[str],
    rivals: Sequence[str],
) -> tuple[int, dict[Cell, str]]:
    """Hits on ``scored_on`` of the system with the best mean of each cell in ``chosen_on``
    (among every system), against the rivals other than it; and the choice per cell.

    >>> val = {("a", "256"): np.array([[0.5], [0.4]])}
    >>> test = {("a", "256"): np.array([[0.3], [0.4]])}
    >>> oracle_transfer(val, test, ["x", "y"], ["x", "y"])
    (0, {('a', '256'): 'x'})
    """
    idx = {s: i for i, s in enumerate(systems)}
    n_hits = 0
    choice: dict[Cell, str] = {}
    for cell, scores in scored_on.items():
        if cell not in chosen_on:
            continue
        best = systems[int(np.argmax(chosen_on[cell].mean(axis=1)))]
        choice[cell] = best
        others = [idx[r] for r in rivals if r != best]
        n_hits += hits(scores.mean(axis=1), idx[best], others)
    return n_hits, choice


def split_half(
    cells: Mapping[Cell, NDArray[np.float64]],
    systems: Sequence[str],
    rivals: Sequence[str],
    *,
    resamples: int,
    seed: int,
) -> tuple[float, dict[Cell, float]]:
    """Expected hits of the best system on a random half of each cell's documents, scored on
    the other half; a cell of one document counts as a hit. Returns the sum and per cell."""
    rng = np.random.default_rng(seed)
    idx = {s: i for i, s in enumerate(systems)}
    per: dict[Cell, float] = {}
    for cell, scores in cells.items():
        n = scores.shape[1]
        if n < 2:
            per[cell] = 1.0
            continue
        got = 0
        for _ in range(resamples):
            perm = rng.permutation(n)
            a, b = perm[: n // 2], perm[n // 2 :]
            best = int(np.argmax(scores[:, a].mean(axis=1)))
            others = [idx[r] for r in rivals if r != systems[best]]
            got += hits(scores[:, b].mean(axis=1), best, others)
        per[cell] = got / resamples
    return float(sum(per.values())), per


def resampled_hits(
    cells: Mapping[Cell, NDArray[np.float64]],
    systems: Sequence[str],
    subject: str,
    rivals: Sequence[str],
    *,
    resamples: int,
    seed: int,
) -> tuple[float, float, float]:
    """The subject's hit count with documents resampled (with replacement, paired across
    systems) within every cell: mean, 2.5 and 97.5 percentiles."""
    rng = np.random.default_rng(seed)
    idx = {s: i for i, s in enumerate(systems)}
    others = [idx[r] for r in rivals if r != subject]
    counts = np.zeros(resamples)
    for scores in cells.values():
        n = scores.shape[1]
        for k in range(resamples):
            pick = rng.integers(0, n, n)
            counts[k] += hits(scores[:, pick].mean(axis=1), idx[subject], others)
    lo, hi = np.percentile(counts, [2.5, 97.5])
    return float(counts.mean()), float(lo), float(hi)


def report(
    validation: Mapping[str, Any],
    test: Mapping[str, Any] | None,
    *,
    subject: str = "auto",
    rivals: Sequence[str] | None = None,
    pinned_peers: bool = False,
    resamples: int = 2000,
    seed: int = 0,
) -> str:
    """The markdown report (see the module docstring)."""
    riv = list(rivals or default_rivals(validation, subject, pinned_peers=pinned_peers))
    systems = [subject, *[r for r in riv if r != subject]]
    splits = {"validation": validation} | ({"test": test} if test is not None else {})
    cells = {name: cell_scores(res, systems) for name, res in splits.items()}
    lines = [
        f"Rivals: {', '.join(riv)}. A hit: within {MARGIN} of the best rival's cell mean.",
        "",
        "| system | " + " | ".join(f"hits, {s} ({len(c)} cells)" for s, c in cells.items()) + " |",
        "|:--|" + "--:|" * len(cells),
    ]
    counts = {s: hit_counts(c, systems, riv) for s, c in cells.items()}
    for name in systems:
        lines.append(f"| {name} | " + " | ".join(str(counts[s][name]) for s in cells) + " |")
    lines += ["", "| ceiling | " + " | ".join(cells) + " |", "|:--|" + "--:|" * len(cells)]
    if test is not None:
        to_test, _ = oracle_transfer(cells["validation"], cells["test"], systems, riv)
        to_val, _ = oracle_transfer(cells["test"], cells["validation"], systems, riv)
        lines.append(
            f"| best system per cell chosen on the other split (dataset-aware oracle) "
            f"| {to_val} | {to_test} |"
        )
    halves = {
        s: split_half(c, systems, riv, resamples=resamples, seed=seed)[0] for s, c in cells.items()
    }
    lines.append(
        "| best system per cell on half of its documents, scored on the other half "
        "| " + " | ".join(f"{halves[s]:.1f}" for s in cells) + " |"
    )
    boot = {
        s: resampled_hits(c, systems, subject, riv, resamples=resamples, seed=seed)
        for s, c in cells.items()
    }
    lines.append(
        f"| {subject}, documents resampled: mean [95 %] "
        "| " + " | ".join(f"{m:.1f} [{lo:.0f}, {hi:.0f}]" for m, lo, hi in boot.values()) + " |"
    )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("validation", type=Path, help="peer_grid.py --split validation --out")
    ap.add_argument("test", type=Path, nargs="?", help="peer_grid.py --split test --out")
    ap.add_argument("--subject", default="auto")
    ap.add_argument("--rivals", nargs="+", help="default: the goal's rivals in the grid")
    ap.add_argument("--pinned-peers", action="store_true", help="sumy-NAME+pins as the peers")
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    val = json.loads(args.validation.read_text())
    test = json.loads(args.test.read_text()) if args.test else None
    print(
        report(
            val,
            test,
            subject=args.subject,
            rivals=args.rivals,
            pinned_peers=args.pinned_peers,
            resamples=args.resamples,
            seed=args.seed,
        )
    )


if __name__ == "__main__":
    main()
