"""What a sweep runs (:class:`SweepConfig`) and what selection may see (:class:`SelectionInput`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
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
from budgetctx._version import __version__
from budgetctx.eval._llm_runner import GenerationConfig
from budgetctx.eval.datasets import parse_dataset_spec
from budgetctx.representations import get_representation
from budgetctx.selectors import get_selector, parse_selector_spec
from budgetctx.tokenizers import get_tokenizer
from budgetctx.unitizers import get_unitizer

__all__ = ["SelectionInput", "SweepConfig"]


@dataclass(frozen=True)
class SelectionInput:
    """Everything selection may see about an example. There is no reference here.

    >>> SelectionInput("Chest pain. Troponin negative.", None).query is None
    True
    """

    document: str
    query: str | None


def _strings(value: Any, *, empty: bool = False) -> bool:
    return (
        isinstance(value, list | tuple)
        and (empty or len(value) > 0)
        and all(isinstance(v, str) and v.strip() for v in value)
    )


def _budgets(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) > 0
        and all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in value)
    )


# Any: see the note on SweepConfig._constraints.
_STR: Any = InstanceOf(str, "a str")
_SPLITS: Any = OneOf(("validation", "test"))
_POSITIVE: Any = Interval(int, 1, None)
_GENERATION: Any = InstanceOf(GenerationConfig, "a GenerationConfig")


@dataclass(frozen=True)
class SweepConfig:
    """What to run. ``selectors`` are registry names, optionally with options
    (``"rcd:alpha=0.6"``); the extractive oracle is added when ``oracle`` is true.

    >>> SweepConfig(datasets=("cochrane",), budgets=[256]).budgets
    (256,)
    """

    datasets: tuple[str, ...]
    budgets: tuple[int, ...] = (256, 512, 1024, 2048)
    selectors: tuple[str, ...] = (
        "lead",
        "shuffled",
        "sliding",
        "hierarchical",
        "graphcluster",
        "mmr",
        "rcd",
    )
    unitizers: tuple[str, ...] = ("sentence",)
    split: str | None = None
    limit: int | None = None
    #: a seeded random sample of this many examples per dataset (after ``split``), kept in
    #: the dataset's order; ``limit`` keeps the first ones instead
    sample: int | None = None
    data_dir: str | None = None
    tokenizer: str = "o200k_base"
    representation: str = "tfidf"
    separator: str = "\n"
    oracle: bool = True
    rouge_stemmer: bool = True
    seed: int = 0
    workers: int = field(default_factory=lambda: max(1, min(2, os.cpu_count() or 1)))
    #: an end-to-end sweep: every context (and the full document) goes to an LLM
    generation: GenerationConfig | None = None

    # Mapping[str, Any]: mypy does not yet see the frozen rule classes as Constraint (its
    # Protocol declares ``fix`` settable); validate_fields checks them all the same.
    _constraints: ClassVar[Mapping[str, Any]] = {
        "datasets": Predicate(
            _strings,
            "a non-empty tuple of dataset names",
            fix="pass at least one, e.g. --dataset cochrane.",
        ),
        "budgets": Predicate(
            _budgets,
            "a non-empty tuple of positive ints",
            fix="token counts, e.g. 256,512,1024,2048.",
        ),
        "selectors": Predicate(
            _strings, "a non-empty tuple of selector specs", fix="e.g. lead,mmr,rcd:alpha=0.6."
        ),
        "unitizers": Predicate(
            _strings, "a non-empty tuple of unitizer names", fix="e.g. sentence,section."
        ),
        "split": NoneOr(_SPLITS, fix="None runs both splits (--split omitted)."),
        "limit": NoneOr(_POSITIVE, fix="None runs every example."),
        "sample": NoneOr(_POSITIVE, fix="None runs every example."),
        "data_dir": NoneOr(_STR),
        "tokenizer": _STR,
        "representation": _STR,
        "separator": _STR,
        "oracle": Boolean(),
        "rouge_stemmer": Boolean(),
        "seed": Interval(int, 0, None),
        "workers": Interval(int, 1, None, fix="1 runs in this process."),
        "generation": NoneOr(_GENERATION),
    }

    def __post_init__(self) -> None:
        validate_fields(self)
        for name in ("datasets", "budgets", "selectors", "unitizers"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        for spec in self.datasets:
            parse_dataset_spec(spec)
        # Every name is resolved now, so that a typo fails before the first task, with the
        # list of valid names, instead of mid-run.
        for spec in self.selectors:
            name, options = parse_selector_spec(spec)
            get_selector(name, **options)
        for unitizer in self.unitizers:
            get_unitizer(unitizer)
        get_representation(self.representation)
        get_tokenizer(self.tokenizer)
        if self.limit is not None and self.sample is not None:
            raise InvalidParameterError(
                "Pass limit (the first examples) or sample (a random sample), not both.",
                parameter="sample",
                value=self.sample,
            )
        if self.generation is not None and self.oracle:
            raise InvalidParameterError(
                "The extractive oracle reads the reference, so an LLM sweep does not send it "
                "to the model; pass oracle=False (--no-oracle) with generation.",
                parameter="oracle",
                value=True,
            )

    def settings(self) -> dict[str, Any]:
        """What must stay the same when a run is resumed or extended."""
        return {
            "tokenizer": self.tokenizer,
            "representation": self.representation,
            "separator": self.separator,
            "rouge_stemmer": self.rouge_stemmer,
            "seed": self.seed,
            "budgetctx": __version__,
            **({"generation": self.generation.settings()} if self.generation is not None else {}),
        }
