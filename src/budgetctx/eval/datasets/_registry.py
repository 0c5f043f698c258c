"""Dataset names -> loaders: ``load_dataset``, ``list_datasets``, ``dataset_info``."""

from __future__ import annotations

import dataclasses
import os
import statistics
import types
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from budgetctx._core.registry import Registry
from budgetctx._errors import DatasetError, InvalidParameterError
from budgetctx.eval.datasets._base import Dataset, Row
from budgetctx.eval.datasets._example import SPLITS, Example, Split
from budgetctx.eval.datasets._paths import resolve_data_dir
from budgetctx.eval.datasets._splits import (
    DEFAULT_VALIDATION_FRACTION,
    assign_split,
    check_fraction,
)

__all__ = ["DatasetInfo", "dataset_info", "get_dataset", "list_datasets", "load_dataset"]

_REGISTRY: Registry[Dataset] = Registry("dataset")


@dataclass(frozen=True)
class DatasetInfo:
    """What a dataset is, where it comes from, and what the data dir holds of it.

    Counts and medians (whitespace words) are None when the files are missing; ``error`` then
    says why. ``n_examples`` maps ``"validation"``, ``"test"`` and ``"total"`` to counts.

    >>> info = dataset_info("pubmedqa", data_dir="/nonexistent")
    >>> info.available, info.fetchable, info.commit[:7]
    (False, True, '1cbae8e')
    """

    name: str
    description: str
    license: str
    repository: str | None
    commit: str | None
    source_paths: tuple[str, ...]
    fetchable: bool
    data_dir: str
    files_present: tuple[str, ...]
    files_missing: tuple[str, ...]
    split_rule: str
    n_examples: Mapping[str, int] = field(default_factory=dict)
    skipped: int = 0
    median_document_words: float | None = None
    median_reference_words: float | None = None
    notes: tuple[str, ...] = ()
    error: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_examples", types.MappingProxyType(dict(self.n_examples)))

    @property
    def available(self) -> bool:
        """True when the dataset could be read from ``data_dir``."""
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "name": self.name,
            "description": self.description,
            "license": self.license,
            "repository": self.repository,
            "commit": self.commit,
            "source_paths": list(self.source_paths),
            "fetchable": self.fetchable,
            "data_dir": self.data_dir,
            "available": self.available,
            "files_present": list(self.files_present),
            "files_missing": list(self.files_missing),
            "split_rule": self.split_rule,
            "n_examples": dict(self.n_examples),
            "skipped": self.skipped,
            "median_document_words": self.median_document_words,
            "median_reference_words": self.median_reference_words,
            "notes": list(self.notes),
            "error": self.error,
        }


def get_dataset(name: str, /, **options: Any) -> Dataset:
    """The dataset object for a name (options such as ``path=`` go to its constructor)."""
    if not isinstance(name, str):
        raise InvalidParameterError(
            f"The dataset name must be a string. Got {name!r} instead; see list_datasets().",
            parameter="name",
            value=name,
        )
    return _REGISTRY.create(name, **options)


def list_datasets() -> list[str]:
    """Names accepted by :func:`load_dataset`.

    >>> [n for n in list_datasets() if not n.startswith("leval:")]
    ['cochrane', 'cochrane-pls', 'csv', 'jsonl', 'leval', 'mimic-bhc', 'mtsamples', 'pubmedqa']
    """
    return _REGISTRY.names()


def _check_options(split: str | None, limit: int | None, seed: int) -> None:
    if split is not None and split not in SPLITS:
        raise InvalidParameterError(
            f"The 'split' parameter must be one of {list(SPLITS)} or None (both). "
            f"Got {split!r} instead.",
            parameter="split",
            value=split,
        )
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise InvalidParameterError(
            f"The 'limit' parameter must be an int >= 0 or None (all). Got {limit!r} instead.",
            parameter="limit",
            value=limit,
        )
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidParameterError(
            f"The 'seed' parameter must be an int. Got {seed!r} instead.",
            parameter="seed",
            value=seed,
        )


def _examples(name: str, rows: list[Row], *, seed: int, fraction: float) -> list[Example]:
    duplicates = [i for i, n in Counter(r.id for r in rows).items() if n > 1]
    if duplicates:
        raise DatasetError(
            f"Dataset {name!r} has {len(duplicates)} duplicated id(s), e.g. {duplicates[0]!r}; "
            "ids must be unique. Map a unique column with id=, or leave id= out."
        )

    def split_of(row: Row) -> Split:
        return row.split or assign_split(row.group, seed=seed, validation_fraction=fraction)

    return [
        Example(
            row.id,
            row.document,
            row.reference,
            query=row.query,
            split=split_of(row),
            meta=row.meta,
            label=row.label,
        )
        for row in rows
    ]


def load_dataset(
    name: str,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    split: str | None = None,
    limit: int | None = None,
    seed: int = 0,
    validation_fraction: float = DEFAULT_VALIDATION_FRACTION,
    **options: Any,
) -> list[Example]:
    """Examples of a dataset, read from the data dir; nothing is ever downloaded here.

    ``split`` keeps ``"validation"`` or ``"test"`` (None keeps both); ``limit`` then keeps the
    first examples in the dataset's own order. Datasets with an official split (PubMedQA,
    cochrane-pls) use it; the others hash a group key with ``seed`` (see
    :func:`assign_split`), sending ``validation_fraction`` of the groups to validation.
    ``options`` go to the loader: ``path=`` and the column mapping for ``jsonl``/``csv``,
    ``path=`` for ``mimic-bhc``. For example::

        load_dataset("pubmedqa", split="test", limit=2)
        load_dataset("jsonl", path="notes.jsonl", document="text", reference="summary")
    """
    _check_options(split, limit, seed)
    fraction = check_fraction(validation_fraction)
    dataset = get_dataset(name, **options)
    read = dataset.read(resolve_data_dir(data_dir))
    examples = _examples(dataset.name, read.rows, seed=seed, fraction=fraction)
    if split is not None:
        examples = [e for e in examples if e.split == split]
    return examples if limit is None else examples[:limit]


def _median_words(texts: list[str]) -> float | None:
    return float(statistics.median(len(t.split()) for t in texts)) if texts else None


def dataset_info(
    name: str,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    seed: int = 0,
    validation_fraction: float = DEFAULT_VALIDATION_FRACTION,
    **options: Any,
) -> DatasetInfo:
    """Description, source, license, files present or missing, split sizes and median lengths.

    A missing dataset is not an error here: the info says so (``available`` is False).
    """
    _check_options(None, None, seed)
    fraction = check_fraction(validation_fraction)
    dataset = get_dataset(name, **options)
    root = resolve_data_dir(data_dir)
    expected = dataset.expected_files()
    present = tuple(p for p in expected if (root / p).is_file())
    repo = dataset.repository
    info = DatasetInfo(
        name=dataset.name,
        description=dataset.description,
        license=dataset.license,
        repository=repo.url if repo else None,
        commit=repo.commit if repo else None,
        source_paths=dataset.source_paths,
        fetchable=dataset.fetchable,
        data_dir=str(root),
        files_present=present,
        files_missing=tuple(p for p in expected if p not in present),
        split_rule=dataset.split_rule,
        notes=dataset.notes,
    )
    try:
        read = dataset.read(root)
        examples = _examples(dataset.name, read.rows, seed=seed, fraction=fraction)
    except (DatasetError, InvalidParameterError) as exc:
        return dataclasses.replace(info, error=str(exc))
    counts = Counter(e.split for e in examples)
    return dataclasses.replace(
        info,
        n_examples={**{s: counts[s] for s in SPLITS}, "total": len(examples)},
        skipped=read.skipped,
        median_document_words=_median_words([e.document for e in examples]),
        median_reference_words=_median_words([e.reference for e in examples]),
    )


def _register_builtins() -> None:
    from budgetctx.eval.datasets._cochrane import CochraneConclusions, CochranePLS
    from budgetctx.eval.datasets._generic import CsvDataset, JsonlDataset
    from budgetctx.eval.datasets._leval import LEVAL_PAPER_TASKS, LEVAL_TASKS, LEvalDataset
    from budgetctx.eval.datasets._mimic import MimicBHC
    from budgetctx.eval.datasets._mtsamples import MTSamples
    from budgetctx.eval.datasets._pubmedqa import PubMedQA

    def leval(tasks: tuple[str, ...], name: str) -> Callable[[], Dataset]:
        # A closure, not a partial: the registry would offer a partial's keywords as options.
        def make() -> Dataset:
            return LEvalDataset(tasks, name=name)

        return make

    _REGISTRY.register("leval", leval(LEVAL_PAPER_TASKS, "leval"))
    for task in LEVAL_TASKS:
        _REGISTRY.register(f"leval:{task}", leval((task,), f"leval:{task}"))
    _REGISTRY.register("cochrane", CochraneConclusions)
    _REGISTRY.register("cochrane-pls", CochranePLS)
    _REGISTRY.register("pubmedqa", PubMedQA)
    _REGISTRY.register("mtsamples", MTSamples)
    _REGISTRY.register("mimic-bhc", MimicBHC)
    _REGISTRY.register("jsonl", JsonlDataset)
    _REGISTRY.register("csv", CsvDataset)


_register_builtins()
