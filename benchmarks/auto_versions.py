"""`auto` now against the third pass's `auto` on every validation document (issue 21, session 4).

The fourth pass chose ``least_divergence``'s candidates (MMR, MMR fused, RCD fused) and its
chooser (JS divergence of term presence) on ``peer_grid.py --limit 10``: up to 10 documents
per dataset. This runs the same grid on every validation document (``--limit 1000``; the
L-Eval validation tasks hold 1-8 documents, so only Cochrane, Cochrane-PLS, MTSamples and
PubMedQA gain any), with the third pass's ``auto`` registered as ``ld_old``
(``LeastDivergenceSelector(candidates=("mmr", "mmr:salience=fused"), terms="mass")``), and
reports, per (dataset, budget) cell and overall (mean over cells; mean over documents):

- every system's mean ROUGE-1 F1 and the hits (cells within 0.005 of the best rival);
- paired bootstrap intervals of the differences (documents resampled with replacement within
  each dataset, one index set for both budgets and both systems);
- the same on the *fresh* documents only: those not in the ``--limit 10`` grid, on which
  nothing was chosen.

Nothing is fitted here; the reference is read only to score (inside ``peer_grid.run``)::

    nice python benchmarks/auto_versions.py --split validation --limit 1000 \\
        --sumy-cache /tmp/sumy --out /tmp/auto_versions.json      # ~4 min on 2 busy cores
    python benchmarks/auto_versions.py --load /tmp/auto_versions.json
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import peer_grid as pg
from budgetctx.selectors import register_selector
from budgetctx.selectors._leastdiv import LeastDivergenceSelector

NEW, OLD = "least_divergence", "ld_old"
SELECTORS = ("lead", "mmr", "facility", "rcd", NEW, OLD)
RIVALS = {
    "mmr, rcd": ("mmr", "rcd"),
    "lead, mmr, facility, rcd": ("lead", "mmr", "facility", "rcd"),
    "+ sumy": ("lead", "mmr", "facility", "rcd", "sumy-lsa", "sumy-lexrank", "sumy-sumbasic"),
}
PAIRS = ((NEW, OLD), (NEW, "mmr"), (OLD, "mmr"), (NEW, "rcd"), (OLD, "rcd"))
Masks = Mapping[str, np.ndarray]


def register_old_auto() -> None:
    """The third pass's ``auto`` under the name ``ld_old`` (once per process)."""
    from budgetctx.selectors import list_selectors

    if OLD not in list_selectors():
        register_selector(
            OLD,
            functools.partial(
                LeastDivergenceSelector, candidates=("mmr", "mmr:salience=fused"), terms="mass"
            ),
        )


def fresh_masks(result: Mapping[str, Any], data_dir: str, chosen_on: int) -> dict[str, Any]:
    """Per dataset: True for the documents not in the ``--limit chosen_on`` grid."""
    out = {}
    for ds, ids in result["ids"].items():
        seen = {e.id for e in pg._examples(ds, result["split"], data_dir, chosen_on)}
        out[ds] = np.array([i not in seen for i in ids])
    return out


def _diffs(result: Mapping[str, Any], a: str, b: str, masks: Masks | None) -> list[np.ndarray]:
    """Per dataset, the (budget x document) differences a - b over the masked documents."""
    parts = []
    for ds, by_name in result["scores"].items():
        if a not in by_name or b not in by_name:
            continue
        keep = np.ones(len(result["ids"][ds]), bool) if masks is None else masks[ds]
        rows = [
            np.asarray(by_name[a][str(B)]) - np.asarray(by_name[b][str(B)])
            for B in result["budgets"]
        ]
        d = np.stack(rows)[:, keep]
        if d.shape[1]:
            parts.append(d)
    return parts


def _stat(parts: Sequence[np.ndarray], weight: str) -> float:
    if weight == "cells":
        return float(np.mean([row.mean() for d in parts for row in d]))
    return float(np.concatenate([d.ravel() for d in parts]).mean())


def paired(
    result: Mapping[str, Any],
    a: str,
    b: str,
    *,
    masks: Masks | None = None,
    weight: str = "cells",
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, float]:
    """Mean of a - b (over cells or over document x budget pairs) with its 95 % interval."""
    parts = _diffs(result, a, b, masks)
    rng = np.random.default_rng(seed)
    stats = np.empty(n_resamples)
    for r in range(n_resamples):
        stats[r] = _stat([d[:, rng.integers(0, d.shape[1], d.shape[1])] for d in parts], weight)
    low, high = np.percentile(stats, [2.5, 97.5])
    rows = [row.mean() for d in parts for row in d]
    return {
        "diff": round(_stat(parts, weight), 4),
        "low": round(float(low), 4),
        "high": round(float(high), 4),
        "cells_up": sum(r > 1e-9 for r in rows),
        "cells_down": sum(r < -1e-9 for r in rows),
    }


def cell_means(
    result: Mapping[str, Any], name: str, masks: Masks | None
) -> dict[tuple[str, int], float]:
    out = {}
    for ds, by_name in result["scores"].items():
        keep = np.ones(len(result["ids"][ds]), bool) if masks is None else masks[ds]
        if name in by_name and keep.any():
            for B in result["budgets"]:
                out[(ds, B)] = float(np.asarray(by_name[name][str(B)])[keep].mean())
    return out


def hits(result: Mapping[str, Any], name: str, rivals: Sequence[str], masks: Masks | None) -> int:
    """Cells where ``name`` is within 0.005 of the best of ``rivals`` (itself excluded)."""
    mine = cell_means(result, name, masks)
    others = [cell_means(result, r, masks) for r in rivals if r != name]
    return sum(v >= max(o[k] for o in others) - 0.005 - 1e-9 for k, v in mine.items())


def summary(result: Mapping[str, Any], masks: Masks | None) -> dict[str, Any]:
    first = next(iter(result["scores"].values()))
    names = [n for n in (*SELECTORS, "sumy-lsa", "sumy-lexrank", "sumy-sumbasic") if n in first]
    cells = {n: cell_means(result, n, masks) for n in names}
    docs: dict[str, float] = {}
    for n in names:
        values = []
        for ds, by_name in result["scores"].items():
            keep = np.ones(len(result["ids"][ds]), bool) if masks is None else masks[ds]
            values += [np.asarray(by_name[n][str(B)])[keep] for B in result["budgets"]]
        docs[n] = round(float(np.concatenate(values).mean()), 4)
    out: dict[str, Any] = {
        "documents": {
            ds: int((np.ones(len(ids), bool) if masks is None else masks[ds]).sum())
            for ds, ids in result["ids"].items()
        },
        "mean_over_cells": {
            n: round(float(np.mean(list(c.values()))), 4) for n, c in cells.items()
        },
        "mean_over_documents": docs,
        "cells": {
            f"{ds} {B}": {n: round(cells[n][(ds, B)], 4) for n in names} for ds, B in cells[NEW]
        },
        "paired": {},
        "hits": {},
    }
    for a, b in PAIRS:
        for weight in ("cells", "documents"):
            out["paired"][f"{a} - {b} ({weight})"] = paired(
                result, a, b, masks=masks, weight=weight
            )
    for label, rivals in RIVALS.items():
        if all(r in first for r in rivals):
            out["hits"][label] = {
                n: hits(result, n, rivals, masks) for n in (NEW, OLD, "mmr", "rcd")
            }
    out["hits"]["cells"] = len(cells[NEW])
    return out


def markdown(s: Mapping[str, Any]) -> str:
    names = list(s["mean_over_cells"])
    lines = ["| cell | " + " | ".join(names) + " |", "|:--|" + "--:|" * len(names)]
    for cell, row in s["cells"].items():
        lines.append(f"| {cell} | " + " | ".join(f"{row[n]:.3f}" for n in names) + " |")
    for label in ("mean_over_cells", "mean_over_documents"):
        lines.append(f"| {label} | " + " | ".join(f"{s[label][n]:.4f}" for n in names) + " |")
    lines.append("")
    for pair, p in s["paired"].items():
        lines.append(
            f"{pair}: {p['diff']:+.4f} [{p['low']:+.4f}, {p['high']:+.4f}], "
            f"cells up/down {p['cells_up']}/{p['cells_down']}"
        )
    for label, by in s["hits"].items():
        if label != "cells":
            lines.append(f"hits against {label}: {by} of {s['hits']['cells']}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("validation", "test"), default="validation")
    ap.add_argument("--limit", type=int, default=1000, help="documents per dataset (spread)")
    ap.add_argument("--chosen-on", type=int, default=10, help="the --limit the choice was made on")
    ap.add_argument("--data-dir", default=str(Path(__file__).parents[1] / "../shared/data"))
    ap.add_argument("--sumy-cache", type=Path)
    ap.add_argument("--peers", nargs="*", default=list(pg.PEERS))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--load", type=Path, help="summarise a saved grid instead of running")
    args = ap.parse_args()
    if args.load:
        result = json.loads(args.load.read_text())
    else:
        if not Path(args.data_dir).is_dir():
            print(f"no data at {args.data_dir}; nothing to run", file=sys.stderr)
            return
        register_old_auto()
        result = pg.run(
            pg.DATASETS,
            args.split,
            pg.BUDGETS,
            args.data_dir,
            limit=args.limit,
            selectors=SELECTORS,
            peers=args.peers,
            configs={},
            checkpoint=args.out,
            cache_dir=args.sumy_cache,
        )
        if args.out:
            args.out.write_text(json.dumps(result))
    fresh = fresh_masks(result, args.data_dir, args.chosen_on)
    for title, masks in (
        ("every document", None),
        (f"fresh documents (not in the --limit {args.chosen_on} grid)", fresh),
        (f"the --limit {args.chosen_on} documents", {k: ~v for k, v in fresh.items()}),
    ):
        print(f"\n## {title}\n\n{markdown(summary(result, masks))}")


if __name__ == "__main__":
    main()
