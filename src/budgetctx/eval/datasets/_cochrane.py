"""Cochrane reviews: abstract -> authors' conclusions (TSAR 2025) and -> plain-language summary
(Devaraj et al. 2021)."""

from __future__ import annotations

import re
from pathlib import Path

from budgetctx._errors import DatasetError
from budgetctx.eval.datasets._base import (
    Dataset,
    DatasetRead,
    RemoteFile,
    Row,
    missing_error,
    read_json,
    read_text,
)
from budgetctx.eval.datasets._example import Split
from budgetctx.eval.datasets._manifest import DEVARAJ, TSAR, devaraj_files, tsar_files

__all__ = ["CochraneConclusions", "CochranePLS", "split_conclusions"]

# The heading alone on its line. Ten TSAR abstracts have their headings run into the previous
# paragraph ("... outcomes. Authors' conclusions\nWe found ..."): they are skipped, not guessed.
_CONCLUSIONS = re.compile(r"^Authors['’] conclusions[ \t]*$", re.MULTILINE)


def split_conclusions(abstract: str) -> tuple[str, str] | None:
    """``(body, conclusions)`` of a Cochrane abstract, or None without the heading line.

    >>> split_conclusions("Background\\nX.\\n\\nAuthors' conclusions\\nY works.")
    ('Background\\nX.', 'Y works.')
    """
    match = _CONCLUSIONS.search(abstract)
    if match is None:
        return None
    body, conclusions = abstract[: match.start()].strip(), abstract[match.end() :].strip()
    if not body or not conclusions:
        return None
    return body, conclusions


class CochraneConclusions(Dataset):
    name = "cochrane"
    description = (
        "Cochrane abstracts (TSAR 2025): Background ... Main results -> Authors' conclusions."
    )
    repository = TSAR
    license = TSAR.license
    source_paths = ("data/original/*.json",)
    split_rule = "hash of the review id without its .PUBn version"
    notes = (
        'abstracts without an "Authors\' conclusions" heading line are skipped (10 of 100 in '
        "the pinned snapshot, whose headings are run into the text)",
    )

    def remote_files(self) -> tuple[RemoteFile, ...]:
        return tsar_files()

    def read(self, root: Path) -> DatasetRead:
        folder = root / "cochrane" / "tsar2025_cochrane_abstracts"
        paths = sorted(folder.glob("*.json"))
        if not paths:
            raise missing_error(self.name, root, folder / "*.json")
        rows: list[Row] = []
        skipped = 0
        for path in paths:
            record = read_json(self.name, root, path)
            abstract = record.get("abstract") if isinstance(record, dict) else None
            if not isinstance(abstract, str):
                raise DatasetError(
                    f"{path} has no 'abstract' string; is it a TSAR Cochrane file? "
                    f"Fetch it again with `budgetctx datasets fetch {self.name}`."
                )
            parts = split_conclusions(abstract)
            if parts is None:
                skipped += 1
                continue
            review_id = str(record.get("cochrane_review_id") or path.stem)
            rows.append(
                Row(
                    id=review_id,
                    document=parts[0],
                    reference=parts[1],
                    # Versions (.PUB3, .PUB4) of one review must not straddle splits.
                    group=review_id.upper().split(".PUB")[0],
                    meta={
                        "review_id": review_id,
                        "title": record.get("title"),
                        "year": record.get("year"),
                        "doi": record.get("doi"),
                    },
                )
            )
        return DatasetRead(rows, skipped=skipped)


class CochranePLS(Dataset):
    name = "cochrane-pls"
    description = (
        "Cochrane abstracts (Devaraj et al. 2021): Main results + Authors' conclusions -> "
        "plain-language summary."
    )
    repository = DEVARAJ
    license = DEVARAJ.license
    source_paths = ("data/data-1024/{val,test}.{source,target,doi}",)
    split_rule = "official: the dataset's val -> validation, test -> test"
    notes = ("the train split (about 3.5k pairs) is not in the pinned snapshot",)

    def remote_files(self) -> tuple[RemoteFile, ...]:
        return devaraj_files()

    def read(self, root: Path) -> DatasetRead:
        folder = root / "cochrane" / "devaraj2021_data-1024"
        rows: list[Row] = []
        official: tuple[tuple[str, Split], ...] = (("val", "validation"), ("test", "test"))
        for part, split in official:
            columns = [
                read_text(self.name, root, folder / f"{part}.{ext}").splitlines()
                for ext in ("source", "target", "doi")
            ]
            sources, targets, dois = columns
            if not len(sources) == len(targets) == len(dois):
                raise DatasetError(
                    f"{folder}/{part}.{{source,target,doi}} have {len(sources)}, {len(targets)} "
                    f"and {len(dois)} lines; they must be parallel. Fetch them again with "
                    f"`budgetctx datasets fetch {self.name}`."
                )
            for line, (source, target, doi) in enumerate(zip(sources, targets, dois, strict=True)):
                rows.append(
                    Row(
                        id=doi.strip(),
                        document=source.strip(),
                        reference=target.strip(),
                        group=doi.strip(),
                        split=split,
                        meta={"doi": doi.strip(), "source_split": part, "line": line},
                    )
                )
        return DatasetRead(rows)
