"""An exclusive ``flock`` on a lock file, shared by the sweep's run lock and the batch's
output lock (:mod:`budgetctx.eval._lock`, :mod:`budgetctx.batch._lock`).

The lock is held for the whole run; the kernel drops it when the process dies, so a killed
run never leaves a stale lock behind. The file records who holds it (pid and host) so that a
second run can say so.

>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as tmp, FileLock(pathlib.Path(tmp) / "x.lock") as lock:
...     lock.path.name
'x.lock'
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import IO, Self

from budgetctx._core.private_files import create_private
from budgetctx._errors import InvalidParameterError

__all__ = ["FileLock"]

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock; the run goes unlocked
    fcntl = None  # type: ignore[assignment]


class FileLock:
    """Hold ``path`` exclusively, or fail at once naming the holder (see :meth:`busy`)."""

    #: create the lock file 0600 (a batch's lock sits beside files holding patient text)
    private = False

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fh: IO[str] | None = None

    def busy(self, holder: str) -> InvalidParameterError:
        """The error for a lock another process holds; subclasses say what is busy."""
        return InvalidParameterError(
            f"{self.path} is held by another process ({holder}); wait for it to finish.",
            parameter="out",
            value=str(self.path),
        )

    def acquire(self) -> None:
        if self.private:
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
                raise self.busy(holder) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
        fh.flush()
        self._fh = fh

    def fileno(self) -> int | None:
        """The lock file's descriptor while held. Forked workers should close their copy
        (closing is not unlocking), so that the lock dies with this process alone."""
        return self._fh.fileno() if self._fh is not None else None

    def release(self) -> None:
        if self._fh is not None:
            # Emptied, not deleted: deleting would let a third process lock a new inode
            # while a second still waits on the old one.
            self._fh.seek(0)
            self._fh.truncate()
            self._fh.close()  # closing the descriptor releases the flock
            self._fh = None

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
