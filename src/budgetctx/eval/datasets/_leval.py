"""L-Eval open-ended summarization tasks: one example per instruction/output pair."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from budgetctx._errors import DatasetError
from budgetctx.eval.datasets._base import (
    Dataset,
    DatasetRead,
    RemoteFile,
    Row,
    read_jsonl,
)
from budgetctx.eval.datasets._manifest import LEVAL, leval_file

__all__ = ["LEVAL_PAPER_TASKS", "LEVAL_QUERY_TASKS", "LEVAL_TASKS", "LEvalDataset"]

LEVAL_TASKS = (
    "gov_report_summ",
    "meeting_summ",
    "news_summ",
    "patent_summ",
    "tv_show_summ",
    "paper_assistant",
    "review_summ",
)
#: the four tasks of the paper; ``leval`` alone loads these together
LEVAL_PAPER_TASKS = ("gov_report_summ", "meeting_summ", "news_summ", "patent_summ")
#: tasks whose documents carry several different instructions: the instruction is the query
LEVAL_QUERY_TASKS = frozenset({"meeting_summ", "review_summ", "paper_assistant"})


class LEvalDataset(Dataset):
    """``leval:<task>`` for one task, or ``leval`` for the paper's four tasks together."""

    repository = LEVAL
    license = LEVAL.license
    split_rule = "hash of the document text (all pairs of one document share a split)"

    def __init__(self, tasks: tuple[str, ...], *, name: str) -> None:
        self.tasks = tasks
        self.name = name
        self.source_paths = tuple(f"LEval-data/Open-ended-tasks/{t}.jsonl" for t in tasks)
        focused = [t for t in tasks if t in LEVAL_QUERY_TASKS]
        kind = f"query-focused for {', '.join(focused)}" if focused else "generic summarization"
        self.description = f"L-Eval {', '.join(tasks)}: long document -> reference ({kind})."

    def remote_files(self) -> tuple[RemoteFile, ...]:
        return tuple(leval_file(t) for t in self.tasks)

    def read(self, root: Path) -> DatasetRead:
        rows: list[Row] = []
        for task in self.tasks:
            path = root / "leval" / f"{task}.jsonl"
            for doc_index, record in enumerate(read_jsonl(self.name, root, path)):
                rows.extend(self._pairs(task, doc_index, record, path))
        return DatasetRead(rows)

    def _pairs(self, task: str, doc_index: int, record: Any, path: Path) -> list[Row]:
        try:
            document = record["input"]
            instructions = record["instructions"]
            outputs = record["outputs"]
        except (KeyError, TypeError) as exc:
            raise DatasetError(
                f"{path} document {doc_index} lacks the L-Eval field {exc}; expected "
                "'input', 'instructions' and 'outputs'. Fetch the file again."
            ) from exc
        if len(instructions) != len(outputs):
            raise DatasetError(
                f"{path} document {doc_index} has {len(instructions)} instructions but "
                f"{len(outputs)} outputs; they must pair up. Fetch the file again."
            )
        query_focused = task in LEVAL_QUERY_TASKS
        return [
            Row(
                id=f"leval:{task}:{doc_index}:{pair_index}",
                document=document,
                reference=output,
                # The document text, not its index, so duplicated documents share a split too.
                group=document,
                query=instruction if query_focused else None,
                meta={
                    "task": task,
                    "doc_index": doc_index,
                    "pair_index": pair_index,
                    "instruction": instruction,
                    "evaluation": record.get("evaluation"),
                },
            )
            for pair_index, (instruction, output) in enumerate(
                zip(instructions, outputs, strict=True)
            )
        ]
