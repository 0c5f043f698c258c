"""RCD's weight sensitivity (paper, Appendix "Sensitivity Analysis"): RCD over a grid on the
weight simplex ``alpha + beta + gamma = 1``, run as an ordinary sweep.

Each grid point is a selector spec (``"rcd:alpha=0.3,beta=0.5,gamma=0.2"``), so the run is a
sweep over selector parameters: rows go to the sweep store as they complete, a killed run
resumes where it stopped, workers run in parallel, and each document is unitized, counted and
featurized once for every weight setting and budget (:func:`budgetctx.prepare`, then
``PreparedDocument.select`` per setting). The bundled default weights are run beside the grid
(they need not lie on it) so that the report can mark and score them.

>>> len(simplex_grid(0.1)), simplex_grid(0.5)[:3]
(66, ((1.0, 0.0, 0.0), (0.5, 0.5, 0.0), (0.5, 0.0, 0.5)))
>>> weight_label((0.3, 0.5, 0.2))
'rcd:alpha=0.3,beta=0.5,gamma=0.2'
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from budgetctx._core.validation import (
    Boolean,
    InstanceOf,
    Interval,
    NoneOr,
    OneOf,
    Predicate,
    validate_fields,
)
from budgetctx._errors import InvalidParameterError
from budgetctx.eval._config import SweepConfig
from budgetctx.eval._lock import RunLock
from budgetctx.eval._store import SweepStore
from budgetctx.eval._sweep import SweepSummary, run_sweep
from budgetctx.selectors import get_selector, parse_selector_spec

__all__ = [
    "META_KEY",
    "SensitivityConfig",
    "Weights",
    "best_table",
    "grid_size",
    "label_weights",
    "run_sensitivity",
    "simplex_grid",
    "weight_label",
]

#: ``(alpha, beta, gamma)``: the shares of relevance, coverage and diversity.
Weights = tuple[float, float, float]
#: The store's meta key that marks a run as a weight-sensitivity run (read by the report).
META_KEY = "sensitivity"
_WEIGHT_NAMES = ("alpha", "beta", "gamma")
# Six places: grid weights are i / n, and a label must read back as the same float.
_PLACES = 6


def _steps(step: float) -> int:
    """How many steps of ``step`` make 1; the step must divide 1 evenly."""
    if isinstance(step, bool) or not isinstance(step, int | float) or not 0 < step <= 1:
        raise InvalidParameterError(
            f"The 'step' parameter must be a number in (0, 1]. Got {step!r} instead; "
            "e.g. 0.1 (66 points) or 0.25 (15 points).",
            parameter="step",
            value=step,
        )
    n = round(1 / step)
    if abs(n * step - 1) > 1e-9:
        raise InvalidParameterError(
            f"The 'step' parameter must divide 1 evenly (1/step a whole number). Got {step!r} "
            f"instead; e.g. {1 / n:g} or {1 / (n + 1):g}.",
            parameter="step",
            value=step,
        )
    return n


def simplex_grid(step: float = 0.1) -> tuple[Weights, ...]:
    """Every ``(alpha, beta, gamma)`` with ``alpha + beta + gamma = 1`` on a ``step`` lattice,
    edges and corners included: ``(n + 1)(n + 2) / 2`` points for ``n = 1 / step``.

    Ordered by alpha, then beta, both descending (the pure-relevance corner first).

    >>> simplex_grid(1.0)
    ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    """
    n = _steps(step)
    out = []
    for i in range(n, -1, -1):
        for j in range(n - i, -1, -1):
            k = n - i - j
            out.append((round(i / n, _PLACES), round(j / n, _PLACES), round(k / n, _PLACES)))
    return tuple(out)


def _num(x: float) -> str:
    return repr(round(float(x), _PLACES))


def weight_label(weights: Weights, *, base: str = "rcd") -> str:
    """The selector spec (and sweep row label) of one weight setting; ``base`` adds the
    other options (``"rcd:eta=0.5"``), after the weights, in sorted order.

    >>> weight_label((1.0, 0.0, 0.0), base="rcd:eta=0.5")
    'rcd:alpha=1.0,beta=0.0,gamma=0.0,eta=0.5'
    """
    name, options = parse_selector_spec(base)
    parts = [f"{k}={_num(w)}" for k, w in zip(_WEIGHT_NAMES, weights, strict=True)]
    parts += [f"{k}={_value(v)}" for k, v in sorted(options.items())]
    return f"{name}:{','.join(parts)}"


def _value(v: Any) -> str:
    if v is None:
        return "null"  # as a spec reads it back (parse_option_value)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return _num(v)
    return str(v)


def label_weights(label: str) -> tuple[Weights, dict[str, Any]] | None:
    """``(weights, other options)`` of a row label written by :func:`weight_label`; None for
    any other label.

    >>> label_weights("rcd:alpha=0.3,beta=0.5,gamma=0.2,eta=2")
    ((0.3, 0.5, 0.2), {'eta': 2})
    >>> label_weights("mmr") is None
    True
    """
    try:
        name, options = parse_selector_spec(label)
    except InvalidParameterError:
        return None
    if name != "rcd" or not all(k in options for k in _WEIGHT_NAMES):
        return None
    try:
        w = tuple(float(options.pop(k)) for k in _WEIGHT_NAMES)
    except (TypeError, ValueError):
        return None
    return (w[0], w[1], w[2]), options


def _base(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        name, options = parse_selector_spec(value)
    except InvalidParameterError:
        return False
    return name == "rcd" and not set(options) & set(_WEIGHT_NAMES)


def _budgets(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) > 0
        and all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in value)
    )


def _names(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) > 0
        and all(isinstance(v, str) and v.strip() for v in value)
    )


# Any: as in SweepConfig, mypy does not see the frozen rule classes as Constraint.
_STR: Any = InstanceOf(str, "a str")


@dataclass(frozen=True)
class SensitivityConfig:
    """What a weight-sensitivity run covers: RCD at every point of a ``step`` grid on the
    simplex (and at the bundled default weights), on ``split`` of ``datasets``, at ``budgets``.

    ``base`` is the RCD spec the weights are added to (``"rcd:position_decay=0"``); ``eta``
    is the log-det scale (None: RCD's default). Unless ``base`` names a ``salience``, R is
    the paper's (``salience=null``, the centroid cosine), not RCD's default fused salience:
    this is the paper's appendix, and docs/results.md's tables were run with it. ``limit``
    keeps the first examples of each dataset's split, ``sample`` a seeded random sample.

    >>> cfg = SensitivityConfig(datasets=("cochrane",), budgets=(512,), eta=0.5)
    >>> len(cfg.grid()), cfg.labels()[0]
    (66, 'rcd:alpha=1.0,beta=0.0,gamma=0.0,eta=0.5,salience=null')
    """

    datasets: tuple[str, ...]
    budgets: tuple[int, ...] = (256, 512, 1024, 2048)
    step: float = 0.1
    eta: float | None = None
    base: str = "rcd"
    include_default: bool = True
    split: str | None = "validation"
    limit: int | None = None
    sample: int | None = None
    unitizer: str = "sentence"
    data_dir: str | None = None
    tokenizer: str = "o200k_base"
    representation: str = "tfidf"
    separator: str = "\n"
    seed: int = 0
    workers: int = field(default_factory=lambda: max(1, min(2, os.cpu_count() or 1)))

    _constraints: ClassVar[Mapping[str, Any]] = {
        "datasets": Predicate(
            _names, "a non-empty tuple of dataset names", fix="e.g. --dataset cochrane."
        ),
        "budgets": Predicate(
            _budgets, "a non-empty tuple of positive ints", fix="e.g. 256,512,1024,2048."
        ),
        "step": Interval(float, 0, 1, closed="right", fix="e.g. 0.1 (66 points)."),
        "eta": NoneOr(
            Interval(float, 0, None, closed="neither", fix="e.g. 1; it scales log det(I + eta K).")
        ),
        "base": Predicate(
            _base,
            "an RCD spec without alpha, beta or gamma",
            fix="the grid sets the weights; e.g. 'rcd' or 'rcd:position_decay=0'.",
        ),
        "include_default": Boolean(),
        "split": NoneOr(
            OneOf(("validation", "test")), fix="choose weights on validation (the default)."
        ),
        "limit": NoneOr(Interval(int, 1, None), fix="None runs every example."),
        "sample": NoneOr(Interval(int, 1, None), fix="None runs every example."),
        "unitizer": _STR,
        "data_dir": NoneOr(_STR),
        "tokenizer": _STR,
        "representation": _STR,
        "separator": _STR,
        "seed": Interval(int, 0, None),
        "workers": Interval(int, 1, None, fix="1 runs in this process."),
    }

    def __post_init__(self) -> None:
        validate_fields(self)
        object.__setattr__(self, "datasets", tuple(self.datasets))
        object.__setattr__(self, "budgets", tuple(self.budgets))
        _steps(self.step)
        # Resolve the selector now, so that a bad base option or eta fails before any work.
        get_selector("rcd", **self._options())

    def _options(self) -> dict[str, Any]:
        _, options = parse_selector_spec(self.base)
        # the paper's objective (R = centroid cosine) unless the base says otherwise: RCD's
        # default salience became "fused" in issue 21's third pass, after the published run
        options.setdefault("salience", None)
        if self.eta is not None:
            options["eta"] = float(self.eta)
        return options

    def base_spec(self) -> str:
        """The base spec with ``eta`` folded in, options sorted: the run's identity."""
        options = self._options()
        if not options:
            return "rcd"
        return "rcd:" + ",".join(f"{k}={_value(v)}" for k, v in sorted(options.items()))

    def grid(self) -> tuple[Weights, ...]:
        return simplex_grid(self.step)

    def default_weights(self) -> Weights:
        """RCD's bundled default weights (what ``"rcd"`` alone uses)."""
        p = get_selector("rcd", **self._options()).params()
        return (float(p["alpha"]), float(p["beta"]), float(p["gamma"]))

    def labels(self) -> tuple[str, ...]:
        """The selector specs run: the grid, then the defaults when not on it."""
        base = self.base_spec()
        out = [weight_label(w, base=base) for w in self.grid()]
        if self.include_default:
            default = weight_label(self.default_weights(), base=base)
            if default not in out:
                out.append(default)
        return tuple(out)

    def sweep_config(self) -> SweepConfig:
        """The sweep that runs it: no oracle (it does not depend on the weights)."""
        return SweepConfig(
            datasets=self.datasets,
            budgets=self.budgets,
            selectors=self.labels(),
            unitizers=(self.unitizer,),
            split=self.split,
            limit=self.limit,
            sample=self.sample,
            data_dir=self.data_dir,
            tokenizer=self.tokenizer,
            representation=self.representation,
            separator=self.separator,
            oracle=False,
            seed=self.seed,
            workers=self.workers,
        )

    def meta(self) -> dict[str, Any]:
        """What the report needs to know about the grid (stored beside the rows)."""
        base = self.base_spec()
        return {
            "kind": "rcd-weights",
            "base": base,
            "steps": [self.step],
            "grid": [weight_label(w, base=base) for w in self.grid()],
            "default": weight_label(self.default_weights(), base=base),
        }

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _merge(old: Mapping[str, Any] | None, new: dict[str, Any], path: Path) -> dict[str, Any]:
    """A resumed or extended run keeps its grid and adds the new points (a finer step)."""
    if old is None:
        return new
    if old.get("base") != new["base"]:
        raise InvalidParameterError(
            f"{path} holds a sensitivity run of {old.get('base')!r}, not {new['base']!r}; "
            "pass the same --eta and base options, or another --out.",
            parameter="out",
            value=str(path),
        )
    grid = list(old.get("grid", []))
    grid += [g for g in new["grid"] if g not in grid]
    steps = sorted({*map(float, old.get("steps", [])), *new["steps"]}, reverse=True)
    return {**new, "grid": grid, "steps": steps}


def run_sensitivity(
    config: SensitivityConfig,
    out: str | Path,
    *,
    progress: bool | Callable[[int, int], None] = True,
) -> SweepSummary:
    """Run (or resume) the weight grid into the run folder ``out``.

    A folder that already holds another kind of sweep is refused: its report would mix
    selectors and weight settings.
    """
    run = SweepStore.check_run_dir(out)
    with RunLock(run), SweepStore(run) as store:
        old = store.meta(META_KEY)
        if old is None and store.count():
            raise InvalidParameterError(
                f"{run} holds a sweep that is not a weight-sensitivity run; pass another --out.",
                parameter="out",
                value=str(run),
            )
        store.set_meta(META_KEY, _merge(old, config.meta(), run))
    return run_sweep(config.sweep_config(), run, progress=progress)


def grid_size(step: float) -> int:
    """``(n + 1)(n + 2) / 2`` for ``n = 1 / step``.

    >>> grid_size(0.1)
    66
    """
    n = _steps(step)
    return math.comb(n + 2, 2)


def best_table(means: Mapping[str, Mapping[str, Mapping[int, float]]]) -> str:
    """A sweep summary's means, as the best weights per dataset and budget (text).

    >>> print(best_table({"d": {weight_label((1.0, 0.0, 0.0)): {256: 0.2},
    ...                         weight_label((0.0, 1.0, 0.0)): {256: 0.3}}}))
    <BLANKLINE>
    d: best RCD weights by budget (mean ROUGE-1 over 2 settings)
      budget   alpha   beta  gamma    best   worst
         256    0.00   1.00   0.00   0.300   0.200
    """
    lines: list[str] = []
    for ds, by_label in means.items():
        by_budget: dict[int, list[tuple[float, Weights]]] = {}
        for label, scores in by_label.items():
            parsed = label_weights(label)
            if parsed is None:
                continue
            for b, v in scores.items():
                by_budget.setdefault(int(b), []).append((float(v), parsed[0]))
        if not by_budget:
            continue
        n = max(len(v) for v in by_budget.values())
        lines.append(f"\n{ds}: best RCD weights by budget (mean ROUGE-1 over {n} settings)")
        lines.append("  budget   alpha   beta  gamma    best   worst")
        for b, found in sorted(by_budget.items()):
            best = max(found, key=lambda t: t[0])
            worst = min(v for v, _ in found)
            if best[0] == worst:
                # Every setting sent the same contexts (the documents fit): no best weights.
                where = f" {'(all equal)':>21}"
            else:
                a, be, g = best[1]
                where = f" {a:7.2f} {be:6.2f} {g:6.2f}"
            lines.append(f"  {b:6d}{where} {best[0]:7.3f} {worst:7.3f}")
    return "\n".join(lines)
