"""One sweep per run folder at a time: an exclusive lock on ``RUN/sweep.lock``.

Two sweeps on the same folder would both plan the same tasks and pay an LLM twice for each
prompt. The lock is an ``fcntl.flock`` held for the whole run; the kernel drops it when the
process dies, so a killed sweep never leaves a stale lock behind. The file records who holds
it (pid and host) so that the second sweep can say so.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as tmp, RunLock(tmp) as lock:
...     lock.path.name
'sweep.lock'
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import IO

from budgetctx._errors import InvalidParameterError

__all__ = ["RunLock"]

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock; the run goes unlocked
    fcntl = None  # type: ignore[assignment]


class RunLock:
    """Hold ``<run_dir>/sweep.lock`` exclusively, or fail at once naming the holder."""

    FILENAME = "sweep.lock"

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / self.FILENAME
        self._fh: IO[str] | None = None

    def acquire(self) -> None:
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
                    f"{self.path.parent} is in use by another sweep ({holder}); wait for it to "
                    "finish, or pass another --out.",
                    parameter="out",
                    value=str(self.path.parent),
                ) from None
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

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
