"""A sweep's progress: a rich bar with ETA on stderr, a callback, or nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Progress"]


class Progress:
    """``Progress(total, True)`` draws a bar; a callable gets ``(done, total)`` per task.

    >>> seen = []
    >>> with Progress(2, lambda done, total: seen.append((done, total))) as bar:
    ...     bar.advance(); bar.advance()
    >>> seen
    [(1, 2), (2, 2)]
    """

    def __init__(self, total: int, progress: bool | Callable[[int, int], None]) -> None:
        self.total, self.done = total, 0
        self.callback = progress if callable(progress) else None
        self.rich: Any = None
        if progress is True and total:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RichProgress

            self.rich = RichProgress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
            )
            self.task_id = self.rich.add_task("sweep", total=total)

    def __enter__(self) -> Progress:
        if self.rich is not None:
            self.rich.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.rich is not None:
            self.rich.stop()

    def advance(self) -> None:
        self.done += 1
        if self.rich is not None:
            self.rich.advance(self.task_id)
        if self.callback is not None:
            self.callback(self.done, self.total)
