"""MIMIC-IV-Ext-BHC (PhysioNet, credentialed): discharge note -> brief hospital course."""

from __future__ import annotations

import os
from pathlib import Path

from budgetctx._errors import DatasetError
from budgetctx.eval.datasets._base import Dataset, DatasetRead, Row
from budgetctx.eval.datasets._generic import cell, open_table

__all__ = ["MIMIC_BHC_FILE", "MIMIC_BHC_HOWTO", "MimicBHC"]

MIMIC_BHC_FILE = "mimic-bhc/mimic-iv-bhc.csv"
MIMIC_BHC_HOWTO = (
    "MIMIC-IV-Ext-BHC cannot be downloaded by budgetctx: it needs PhysioNet credentialed access "
    "(CITI training and the signed data use agreement). Get mimic-iv-bhc.csv from "
    "https://physionet.org/content/labelled-notes-hospital-course/, then pass "
    f"path='.../mimic-iv-bhc.csv' or put it at <data dir>/{MIMIC_BHC_FILE}."
)


class MimicBHC(Dataset):
    """Columns ``input`` (the note without its hospital course) and ``target`` (the brief
    hospital course); ``note_id`` when present gives the id, and its subject part
    (``10000032`` of ``10000032-DS-21``) the split group, so one patient's notes share a split."""

    name = "mimic-bhc"
    description = "MIMIC-IV-Ext-BHC: discharge note -> brief hospital course (credentialed)."
    license = "PhysioNet Credentialed Health Data License 1.5.0; never redistribute"
    source_paths = ("physionet.org/content/labelled-notes-hospital-course/: mimic-iv-bhc.csv",)
    split_rule = "hash of the patient (subject id of note_id), else of the note text"

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = None if path is None else Path(path).expanduser()

    def expected_files(self) -> tuple[str, ...]:
        return (str(self.path),) if self.path else (MIMIC_BHC_FILE,)

    def read(self, root: Path) -> DatasetRead:
        path = self.path or root / MIMIC_BHC_FILE
        if not path.is_file():
            raise DatasetError(f"MIMIC-IV-Ext-BHC was not found at {path}. {MIMIC_BHC_HOWTO}")
        columns, records = open_table(path, "csv")
        if not {"input", "target"} <= set(columns):
            raise DatasetError(
                f"{path} has the columns {columns}, not the MIMIC-IV-Ext-BHC columns 'input' "
                "and 'target'. Pass the mimic-iv-bhc.csv file, or use load_dataset('csv', "
                "path=..., document=..., reference=...) for another layout."
            )
        has_id = "note_id" in columns
        rows: list[Row] = []
        for index, (lineno, record) in enumerate(records):
            document = cell(path, lineno, record, "input", required=True)
            note_id = cell(path, lineno, record, "note_id", required=True) if has_id else None
            rows.append(
                Row(
                    id=note_id or f"mimic-bhc:{index}",
                    document=document,
                    reference=cell(path, lineno, record, "target", required=True),
                    group=note_id.split("-")[0] if note_id else document,
                    meta={"note_id": note_id, "row": index},
                )
            )
        return DatasetRead(rows)
