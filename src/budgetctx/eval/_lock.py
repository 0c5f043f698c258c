"""One sweep per run folder at a time: an exclusive lock on ``RUN/sweep.lock``.

Two sweeps on the same folder would both plan the same tasks and pay an LLM twice for each
prompt. The lock is :class:`budgetctx._core.filelock.FileLock` (dropped by the kernel when the
process dies, so a killed sweep never leaves a stale lock behind).

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as tmp, RunLock(tmp) as lock:
...     lock.path.name
'sweep.lock'
"""

from __future__ import annotations

from pathlib import Path

from budgetctx._core.filelock import FileLock
from budgetctx._errors import InvalidParameterError

__all__ = ["RunLock"]


class RunLock(FileLock):
    """Hold ``<run_dir>/sweep.lock`` exclusively, or fail at once naming the holder."""

    FILENAME = "sweep.lock"

    def __init__(self, run_dir: str | Path) -> None:
        super().__init__(Path(run_dir) / self.FILENAME)

    def busy(self, holder: str) -> InvalidParameterError:
        return InvalidParameterError(
            f"{self.path.parent} is in use by another sweep ({holder}); wait for it to "
            "finish, or pass another --out.",
            parameter="out",
            value=str(self.path.parent),
        )
