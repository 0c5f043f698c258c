"""Files that hold document text are created readable by their owner only (0600), and worker
processes that die with the process that started them.

>>> import tempfile, pathlib, stat
>>> p = pathlib.Path(tempfile.mkdtemp()) / "out.jsonl"
>>> create_private(p)
>>> oct(stat.S_IMODE(p.stat().st_mode))
'0o600'
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

__all__ = ["create_private", "die_with_parent"]

PRIVATE_MODE = 0o600


def create_private(path: str | Path) -> None:
    """Create ``path`` (empty) with mode 0600 if it does not exist, and make an existing file
    0600 too: a file opened afterwards for writing keeps this mode, whatever the umask."""
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, PRIVATE_MODE)
    try:
        os.fchmod(fd, PRIVATE_MODE)
    finally:
        os.close(fd)


def die_with_parent(parent: int, *, interval: float = 0.25) -> None:
    """In a worker process: exit as soon as ``parent`` is gone, however it ended (SIGKILL
    included, when no pool shutdown runs). A daemon thread polls the parent pid; a portable
    choice, where ``prctl(PR_SET_PDEATHSIG)`` would fire when the *thread* that forked the
    worker ends, which a pool does not control."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(0)

    threading.Thread(target=watch, name="budgetctx-parent-watch", daemon=True).start()
