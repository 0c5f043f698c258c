"""Synthetic sweep rows: a hand-computable toy and a noisy run shaped like the paper's."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from budgetctx.eval._store import SweepRow

# The paper's Table A1 (mean ROUGE-1 of sentence-level selection), budgets 256..2048.
PAPER_R1: dict[str, dict[str, tuple[float, float, float, float]]] = {
    "mimic": {
        "lead": (0.242, 0.246, 0.249, 0.230),
        "shuffled": (0.178, 0.226, 0.247, 0.234),
        "sliding": (0.111, 0.158, 0.205, 0.219),
        "hierarchical": (0.125, 0.185, 0.235, 0.233),
        "mmr": (0.141, 0.209, 0.262, 0.249),
        "rcd": (0.138, 0.201, 0.252, 0.247),
        "graphcluster": (0.117, 0.174, 0.210, 0.220),
    },
    "cochrane": {
        "lead": (0.312, 0.273, 0.249, 0.249),
        "shuffled": (0.306, 0.272, 0.249, 0.249),
        "sliding": (0.298, 0.267, 0.249, 0.249),
        "hierarchical": (0.309, 0.273, 0.249, 0.249),
        "mmr": (0.316, 0.276, 0.250, 0.249),
        "rcd": (0.316, 0.278, 0.250, 0.249),
        "graphcluster": (0.284, 0.261, 0.249, 0.249),
    },
    "leval": {
        "lead": (0.207, 0.177, 0.126, 0.079),
        "shuffled": (0.220, 0.183, 0.128, 0.080),
        "sliding": (0.226, 0.190, 0.132, 0.087),
        "hierarchical": (0.207, 0.184, 0.130, 0.081),
        "mmr": (0.220, 0.182, 0.128, 0.081),
        "rcd": (0.206, 0.184, 0.131, 0.081),
        "graphcluster": (0.217, 0.176, 0.122, 0.077),
    },
}
BUDGETS = (256, 512, 1024, 2048)


def row(
    dataset: str,
    example: str,
    selector: str,
    budget: int,
    metrics: Mapping[str, float],
    *,
    unitizer: str = "sentence",
    split: str = "test",
) -> SweepRow:
    return SweepRow(
        dataset=dataset,
        example_id=example,
        unitizer=unitizer,
        selector=selector,
        budget=budget,
        split=split,
        context_tokens=budget,
        document_tokens=4 * budget,
        n_units=10,
        kept=(0, 1),
        metrics=dict(metrics),
        stats={"phi": 0.5, "rho": 0.25},
    )


def realistic_rows(
    *,
    n_examples: int = 20,
    unitizers: Sequence[str] = ("sentence", "section"),
    seed: int = 0,
) -> Iterator[SweepRow]:
    """A sweep like the paper's: 3 datasets x 7 selectors + oracle x 4 budgets, noisy per
    example (an example effect shared by every selector, plus selector noise)."""
    rng = np.random.default_rng(seed)
    for dataset, table in PAPER_R1.items():
        for i in range(n_examples):
            example = f"{dataset}-{i:03d}"
            split = "validation" if i % 4 == 0 else "test"
            difficulty = rng.normal(0.0, 0.04)
            for u, unitizer in enumerate(unitizers):
                shift = -0.006 * u  # coarser units do a little worse
                for j, budget in enumerate(BUDGETS):
                    scores = {}
                    for selector, means in table.items():
                        r1 = means[j] + shift + difficulty + rng.normal(0.0, 0.03)
                        scores[selector] = float(np.clip(r1, 0.0, 1.0))
                    oracle = max(scores.values()) + abs(rng.normal(0.12, 0.02))
                    scores["oracle"] = float(min(oracle, 1.0))
                    for selector, r1 in scores.items():
                        r2 = float(np.clip(0.38 * r1 + rng.normal(0.0, 0.012), 0.0, 1.0))
                        yield row(
                            dataset,
                            example,
                            selector,
                            budget,
                            {
                                "rouge1": round(r1, 6),
                                "rouge2": round(r2, 6),
                                "rougeL": round(0.8 * r1, 6),
                            },
                            unitizer=unitizer,
                            split=split,
                        )


# The hand-computable toy. alpha/sentence (examples e1, e2 on test, e3 on validation):
#
#   budget 256    lead  mmr  rcd  oracle        budget 512    lead  mmr  rcd   oracle
#   e1            .30   .20  .10  .50           e1            .40   .40  .35   .70
#   e2            .10   .40  .20  .60           e2            .30   .20  .45   .70
#   e3            .20   .30  .30  .40           e3            .20   .30  .25   .70
#   mean          .20   .30  .20  .50           mean          .30   .30  .35   .70
#
# alpha/window: lead .25 (256) and .36 (512), mmr .10 at both, on every example.
# beta/sentence (b1, b2): lead .5/.4 and mmr .5/.3 at 256/512 on every example; no oracle.
TOY_ALPHA = {
    256: {
        "lead": (0.30, 0.10, 0.20),
        "mmr": (0.20, 0.40, 0.30),
        "rcd": (0.10, 0.20, 0.30),
        "oracle": (0.50, 0.60, 0.40),
    },
    512: {
        "lead": (0.40, 0.30, 0.20),
        "mmr": (0.40, 0.20, 0.30),
        "rcd": (0.35, 0.45, 0.25),
        "oracle": (0.70, 0.70, 0.70),
    },
}


def toy_rows() -> list[SweepRow]:
    out = []
    for budget, table in TOY_ALPHA.items():
        for selector, values in table.items():
            for i, v in enumerate(values):
                split = "validation" if i == 2 else "test"
                out.append(
                    row(
                        "alpha",
                        f"e{i + 1}",
                        selector,
                        budget,
                        {"rouge1": v, "rouge2": v / 2},
                        split=split,
                    )
                )
    for budget, lead in ((256, 0.25), (512, 0.36)):
        for i in range(3):
            split = "validation" if i == 2 else "test"
            for selector, v in (("lead", lead), ("mmr", 0.10)):
                out.append(
                    row(
                        "alpha",
                        f"e{i + 1}",
                        selector,
                        budget,
                        {"rouge1": v, "rouge2": v / 2},
                        unitizer="window",
                        split=split,
                    )
                )
    for budget, lead, mmr in ((256, 0.5, 0.5), (512, 0.4, 0.3)):
        for example in ("b1", "b2"):
            for selector, v in (("lead", lead), ("mmr", mmr)):
                out.append(row("beta", example, selector, budget, {"rouge1": v, "rouge2": v / 2}))
    return out


def sensitivity_rows(
    *,
    datasets: Sequence[str] = ("alpha", "beta"),
    budgets: Sequence[int] = (256, 1024),
    n_examples: int = 5,
    step: float = 0.25,
    seed: int = 0,
) -> tuple[list[SweepRow], dict[str, object]]:
    """Rows and store meta of a weight-sensitivity run: a smooth bowl around a per-dataset
    optimum, flatter at the larger budget, plus the bundled default weights (0.25, 0.75, 0)
    as an extra point. Documents are 600 tokens long, so the 1024 budget cuts none."""
    from budgetctx.eval._sensitivity import label_weights, simplex_grid, weight_label

    rng = np.random.default_rng(seed)
    grid = [weight_label(w) for w in simplex_grid(step)]
    default = weight_label((0.25, 0.75, 0.0))
    labels = list(dict.fromkeys([*grid, default]))
    out = []
    for d, dataset in enumerate(datasets):
        top = np.array([0.5, 0.5, 0.0]) if d == 0 else np.array([0.25, 0.25, 0.5])
        for i in range(n_examples):
            base = 0.3 + rng.normal(0.0, 0.02)
            for budget in budgets:
                depth = 0.08 if budget < 600 else 0.0
                for label in labels:
                    parsed = label_weights(label)
                    assert parsed is not None
                    dist = float(np.abs(np.array(parsed[0]) - top).sum()) / 2
                    r1 = base - depth * dist + rng.normal(0.0, 0.002) * (depth > 0)
                    out.append(
                        SweepRow(
                            dataset=dataset,
                            example_id=f"{dataset}-{i}",
                            unitizer="sentence",
                            selector=label,
                            budget=budget,
                            split="validation",
                            context_tokens=min(budget, 600),
                            document_tokens=600,
                            n_units=20,
                            kept=(0, 1),
                            metrics={"rouge1": round(float(r1), 6)},
                        )
                    )
    meta = {
        "kind": "rcd-weights",
        "base": "rcd",
        "steps": [step],
        "grid": grid,
        "default": default,
    }
    return out, meta
