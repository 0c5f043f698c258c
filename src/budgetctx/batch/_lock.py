"""One batch per output at a time: an exclusive ``flock`` on ``.OUT.lock`` beside ``OUT``.

Two batches on the same OUT would both compute every row and race over the part file. This
is the sweep's lock (:class:`budgetctx._core.filelock.FileLock`), keyed by the output file and
created 0600 like the outputs beside it.

>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "out.jsonl"
>>> with OutLock(out) as lock:
...     lock.path.name
'.out.jsonl.lock'
"""

from __future__ import annotations

from pathlib import Path

from budgetctx._core.filelock import FileLock
from budgetctx._errors import InvalidParameterError

__all__ = ["OutLock"]


class OutLock(FileLock):
    """Hold ``.OUT.lock`` exclusively, or fail at once naming the holder."""

    private = True

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        super().__init__(self.out.with_name(f".{self.out.name}.lock"))

    def busy(self, holder: str) -> InvalidParameterError:
        return InvalidParameterError(
            f"{str(self.out)!r} is being written by another batch ({holder}); wait for "
            "it to finish (then run the same command to complete it), or choose another "
            "--out.",
            parameter="out",
            value=str(self.out),
        )
