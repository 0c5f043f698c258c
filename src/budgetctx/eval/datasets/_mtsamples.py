"""MTSamples discharge summaries: the note without its hospital course -> the hospital course."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from budgetctx._errors import DatasetError
from budgetctx.eval.datasets._base import (
    Dataset,
    DatasetRead,
    RemoteFile,
    Row,
    missing_error,
    read_jsonl,
    read_text,
)
from budgetctx.eval.datasets._manifest import MTSAMPLES, MTSAMPLES_PAGES, mtsamples_files
from budgetctx.eval.datasets._mtsamples_html import (
    PAGE_ENCODING,
    PageError,
    note_text,
    parse_page,
    records_to_jsonl,
)

__all__ = ["HOSPITAL_COURSE", "MTSamples", "derive_records"]

FOLDER = "mtsamples_discharge"
INDEX = f"{FOLDER}/raw_html/INDEX.tsv"
DERIVED = f"{FOLDER}/discharge_summaries.derived.jsonl"

# Hospital-course headers. This pattern gives exactly the 87 notes (and the length statistics)
# of the shared SOURCE.md: HOSPITAL COURSE [SUMMARY | AND TREATMENT | PER PROBLEM LIST],
# BRIEF [SUMMARY OF] HOSPITAL COURSE [SUMMARY], HISTORY AND HOSPITAL COURSE, COURSE IN THE
# HOSPITAL, CLINICAL COURSE. It leaves out "COURSE IN HOSPITAL" (3 notes), "COURSE ON ADMISSION",
# "BRIEF HISTORY OF HOSPITAL COURSE", "BRIEF H&P AND HOSPITAL COURSE" and "HISTORY OF PRESENT
# ILLNESS AND HOSPITAL COURSE" (1 each); widen it only together with the published counts.
HOSPITAL_COURSE = re.compile(
    r"^(?:BRIEF |HISTORY AND )?(?:SUMMARY OF )?"
    r"(?:HOSPITAL COURSE|COURSE IN THE HOSPITAL|CLINICAL COURSE)\b"
)


def _index_bytes() -> bytes:
    lines = ["cache_key\turl"] + [f"{key}\t{url}" for key, url, _sha, _size in MTSAMPLES_PAGES]
    return ("\n".join(lines) + "\n").encode("ascii")


def _read_index(name: str, root: Path) -> list[tuple[str, str]]:
    path = root / INDEX
    pairs: list[tuple[str, str]] = []
    for lineno, line in enumerate(read_text(name, root, path).splitlines()[1:], start=2):
        if not line.strip():
            continue
        key, sep, url = line.partition("\t")
        if not sep:
            raise DatasetError(
                f"{path} line {lineno} is not 'cache_key<TAB>url'. "
                f"Fetch it again with `budgetctx datasets fetch {name}`."
            )
        pairs.append((key, url))
    return pairs


def derive_records(
    root: Path, *, index: list[tuple[str, str]] | None = None, name: str = "mtsamples"
) -> list[dict[str, Any]]:
    """Records of ``discharge_summaries.derived.jsonl`` rebuilt from ``raw_html/``.

    ``index`` is the ``(cache_key, url)`` list; by default it is read from ``INDEX.tsv``.
    """
    records: list[dict[str, Any]] = []
    for key, url in _read_index(name, root) if index is None else index:
        path = root / FOLDER / "raw_html" / f"{key}.html"
        page = read_text(name, root, path, encoding=PAGE_ENCODING)
        try:
            records.append(parse_page(page, cache_key=key, url=url))
        except PageError as exc:
            raise DatasetError(
                f"{path} is not an mtsamples.com sample page ({exc}). "
                f"Fetch it again with `budgetctx datasets fetch {name}`."
            ) from exc
    return records


class MTSamples(Dataset):
    name = "mtsamples"
    description = (
        "MTSamples discharge summaries with a hospital-course section: rest of the note -> "
        "hospital course."
    )
    repository = MTSAMPLES
    license = MTSAMPLES.license
    source_paths = (".scrapy/httpcache/mt/<xx>/<cache_key>/response_body (gzip)",)
    split_rule = "hash of the full note text (identical notes share a split)"
    notes = (
        "reads discharge_summaries.derived.jsonl when present, else derives it from raw_html/",
        "notes without a hospital-course header are skipped (24 of 111)",
    )

    def remote_files(self) -> tuple[RemoteFile, ...]:
        return mtsamples_files()

    def expected_files(self) -> tuple[str, ...]:
        return (*super().expected_files(), INDEX, DERIVED)

    def generated_files(self, root: Path) -> dict[str, bytes]:
        # INDEX.tsv comes from the manifest (the URLs are in the cache's meta files, which are
        # not fetched); the JSON Lines file is derived from the pages just downloaded.
        index = [(key, url) for key, url, _sha, _size in MTSAMPLES_PAGES]
        records = derive_records(root, index=index, name=self.name)
        return {INDEX: _index_bytes(), DERIVED: records_to_jsonl(records)}

    def read(self, root: Path) -> DatasetRead:
        derived = root / DERIVED
        if derived.is_file():
            records = read_jsonl(self.name, root, derived)
        elif (root / INDEX).is_file():
            records = derive_records(root, name=self.name)
        else:
            raise missing_error(self.name, root, root / INDEX)
        rows: list[Row] = []
        skipped = 0
        for record in records:
            row = self._row(record)
            if row is None:
                skipped += 1
            else:
                rows.append(row)
        return DatasetRead(rows, skipped=skipped)

    def _row(self, record: dict[str, Any]) -> Row | None:
        try:
            sections = record["sections"]
            course = next((s for s in sections if HOSPITAL_COURSE.match(s["header"].upper())), None)
            if course is None or not course["text"].strip():
                return None
            return Row(
                id=record["cache_key"],
                document=note_text(s for s in sections if s is not course),
                reference=course["text"],
                group=note_text(sections),
                meta={
                    "cache_key": record["cache_key"],
                    "url": record.get("url"),
                    "sample_name": record.get("sample_name"),
                    "description": record.get("description"),
                    "reference_header": course["header"],
                },
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise DatasetError(
                f"An MTSamples record ({str(record)[:80]}...) is malformed ({exc!r}). Delete "
                f"{DERIVED} and run `budgetctx datasets fetch {self.name}` again."
            ) from exc
