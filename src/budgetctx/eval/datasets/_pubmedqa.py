"""PubMedQA PQA-L as a query-focused summarization (and yes/no/maybe) dataset."""

from __future__ import annotations

from pathlib import Path

from budgetctx._errors import DatasetError
from budgetctx.eval.datasets._base import Dataset, DatasetRead, RemoteFile, Row, read_json
from budgetctx.eval.datasets._manifest import PUBMEDQA, pubmedqa_files

__all__ = ["PubMedQA"]


class PubMedQA(Dataset):
    """Document = the abstract's CONTEXTS joined by blank lines, without their section labels
    (kept in ``meta["labels"]``), so the document is the text the authors wrote; reference =
    LONG_ANSWER (the abstract's conclusion); query = QUESTION; label = final_decision."""

    name = "pubmedqa"
    description = (
        "PubMedQA PQA-L: abstract without its conclusion + question -> conclusion "
        "(label yes/no/maybe)."
    )
    repository = PUBMEDQA
    license = PUBMEDQA.license
    source_paths = ("data/ori_pqal.json", "data/test_ground_truth.json")
    split_rule = (
        "official: the 500 PMIDs of test_ground_truth.json -> test, the other 500 -> validation"
    )

    def remote_files(self) -> tuple[RemoteFile, ...]:
        return pubmedqa_files()

    def read(self, root: Path) -> DatasetRead:
        folder = root / "pubmedqa"
        records = read_json(self.name, root, folder / "ori_pqal.json")
        test_ids = read_json(self.name, root, folder / "test_ground_truth.json")
        if not isinstance(records, dict) or not isinstance(test_ids, dict):
            raise DatasetError(
                f"{folder}/ori_pqal.json and test_ground_truth.json must be JSON objects keyed "
                f"by PMID. Fetch them again with `budgetctx datasets fetch {self.name}`."
            )
        unknown = sorted(set(test_ids) - set(records))
        if unknown:
            raise DatasetError(
                f"{len(unknown)} test PMIDs (e.g. {unknown[0]}) are not in ori_pqal.json. "
                f"Fetch both files again with `budgetctx datasets fetch {self.name}`."
            )
        rows: list[Row] = []
        for pmid, record in records.items():
            try:
                contexts = record["CONTEXTS"]
                rows.append(
                    Row(
                        id=pmid,
                        document="\n\n".join(c.strip() for c in contexts),
                        reference=record["LONG_ANSWER"].strip(),
                        group=pmid,
                        query=record["QUESTION"].strip(),
                        label=record["final_decision"],
                        split="test" if pmid in test_ids else "validation",
                        meta={
                            "pmid": pmid,
                            "labels": list(record.get("LABELS", [])),
                            "meshes": list(record.get("MESHES", [])),
                            "year": record.get("YEAR"),
                        },
                    )
                )
            except (KeyError, TypeError, AttributeError) as exc:
                raise DatasetError(
                    f"PubMedQA record {pmid} in {folder}/ori_pqal.json is malformed ({exc!r}). "
                    f"Fetch it again with `budgetctx datasets fetch {self.name}`."
                ) from exc
        return DatasetRead(rows)
