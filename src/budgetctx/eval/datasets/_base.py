"""The dataset contract: what a loader reads, where it comes from, and the rows it yields.

A dataset object knows its files (relative to the data dir), the pinned upstream files that
:func:`fetch_dataset` may download, and how to turn the files into :class:`Row` objects. Split
assignment, filtering and :class:`Example` construction happen once, in ``_registry``.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from budgetctx._errors import DatasetError
from budgetctx.eval.datasets._example import Split
from budgetctx.eval.datasets._paths import DATA_ENV

__all__ = [
    "Dataset",
    "DatasetRead",
    "RemoteFile",
    "Repository",
    "Row",
    "missing_error",
    "read_json",
    "read_jsonl",
    "read_text",
]


@dataclass(frozen=True)
class Repository:
    """A public repository pinned at one commit."""

    slug: str  # "owner/name" on GitHub
    commit: str
    license: str

    @property
    def url(self) -> str:
        return f"https://github.com/{self.slug}"


@dataclass(frozen=True)
class RemoteFile:
    """One file of the data dir and the upstream blob it is a copy of.

    ``sha256`` and ``size`` are of the bytes written to ``path``; when ``gzip`` is set the
    repository stores the blob gzip-compressed and it is decompressed before hashing.
    """

    path: str
    repo: Repository
    repo_path: str
    sha256: str
    size: int
    gzip: bool = False


@dataclass(frozen=True)
class Row:
    """A loader's output before split assignment.

    ``group`` is the split key (examples sharing it share a split); ``split`` is set only when
    the dataset ships an official split, which then wins over hashing.
    """

    id: str
    document: str
    reference: str
    group: str
    query: str | None = None
    label: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    split: Split | None = None


@dataclass(frozen=True)
class DatasetRead:
    """The rows of a dataset and how many source records were skipped as unusable."""

    rows: list[Row]
    skipped: int = 0


class Dataset(ABC):
    """Base class of the built-in datasets; subclasses set the class attributes and ``read``."""

    name: str
    description: str
    license: str
    repository: Repository | None = None
    source_paths: tuple[str, ...] = ()
    split_rule: str = "hash"
    notes: tuple[str, ...] = ()

    def remote_files(self) -> tuple[RemoteFile, ...]:
        """Pinned upstream files that ``fetch_dataset`` downloads; empty if not fetchable."""
        return ()

    def generated_files(self, root: Path) -> dict[str, bytes]:
        """Files derived locally after download (relative path -> content)."""
        del root
        return {}

    def expected_files(self) -> tuple[str, ...]:
        """Files (relative to the data dir) a complete copy of this dataset has."""
        return tuple(f.path for f in self.remote_files())

    @property
    def fetchable(self) -> bool:
        return bool(self.remote_files())

    @abstractmethod
    def read(self, root: Path) -> DatasetRead:
        """Read the files under ``root``; raise DatasetError when they are missing or broken."""


def missing_error(name: str, root: Path, path: Path) -> DatasetError:
    return DatasetError(
        f"Dataset {name!r} was not found in {root}: {path} is missing. "
        f"Run `budgetctx datasets fetch {name}`, or point --data-dir (data_dir= in Python, "
        f"or {DATA_ENV}) at a folder that holds it."
    )


def read_text(name: str, root: Path, path: Path, *, encoding: str = "utf-8") -> str:
    try:
        return path.read_text(encoding=encoding)
    except FileNotFoundError:
        raise missing_error(name, root, path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(
            f"Cannot read {path} for dataset {name!r}: {exc}. Fetch it again with "
            f"`budgetctx datasets fetch {name}`."
        ) from exc


def read_json(name: str, root: Path, path: Path) -> Any:
    text = read_text(name, root, path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"{path} (dataset {name!r}) is not valid JSON: {exc}. Fetch it again with "
            f"`budgetctx datasets fetch {name}`."
        ) from exc


def read_jsonl(name: str, root: Path, path: Path) -> list[Any]:
    """Non-blank lines of a JSON Lines file; the error names the bad line."""
    out: list[Any] = []
    for lineno, line in enumerate(read_text(name, root, path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"{path} line {lineno} (dataset {name!r}) is not valid JSON: {exc}. "
                f"Fetch it again with `budgetctx datasets fetch {name}`."
            ) from exc
    return out
