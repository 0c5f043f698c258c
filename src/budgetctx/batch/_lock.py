"""One batch per output at a time: an exclusive ``flock`` on ``.OUT.lock`` beside ``OUT``.

Two batches on the same OUT would both compute every row and race over the part file. The
lock is held for the whole run and dropped by the kernel when the process dies (a SIGKILL
leaves no stale lock); the file records the holder so that the second batch can name it.
This is the sweep's lock (:mod:`budgetctx.eval._lock`), keyed by the output file.

>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "out.jsonl"
>>> with OutLock(out) as lock:
...     lock.path.name
'.out.jsonl.lock'
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import IO

from budgetctx._errors import InvalidParameterError
from budgetctx._private_files import create_private

__all__ = ["OutLock"]

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock; the batch goes unlocked
    fcntl = None  # type: ignore[assignment]


class OutLock:
    """Hold ``.OUT.lock`` exclusively, or fail at once naming the holder."""

    def __init__(self, out: str | Path) -> None:
        p = Path(out)
        self.out = p
        self.path = p.with_name(f".{p.name}.lock")
        self._fh: IO[str] | None = None

    def acquire(self) -> None:
        create_private(self.path)
        # "a+" never truncates: the holder's pid stays readable while we try the lock.
        fh = self.path.open("a+", encoding="utf-8")
        if fcntl is not None:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                holder = fh.read().strip()[:200] or "another process"
                fh.close()
                raise InvalidParameterError(
                    f"{str(self.out)!r} is being written by another batch ({holder}); wait for "
                    "it to finish (then run the same command to complete it), or choose another "
                    "--out.",
                    parameter="out",
                    value=str(self.out),
                ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        if self._fh is not None:
            # Emptied, not deleted: deleting would let a third process lock a new inode
            # while a second still waits on the old one.
            self._fh.seek(0)
            self._fh.truncate()
            self._fh.close()
            self._fh = None

    def __enter__(self) -> OutLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
