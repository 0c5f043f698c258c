"""Progress of a long job (a sweep, a batch): a rich bar on stderr with the rate and the time
left, a callback, or nothing."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["Progress"]


class Progress:
    """``Progress(total, True, label=...)`` draws a bar; a callable gets ``(done, total)`` per
    step. ``total`` may be None when it is costly to tell (the bar then has no end).

    >>> seen = []
    >>> with Progress(2, lambda done, total: seen.append((done, total)), label="x") as bar:
    ...     bar.advance(); bar.advance()
    >>> seen
    [(1, 2), (2, 2)]
    """

    def __init__(
        self,
        total: int | None,
        progress: bool | Callable[[int, Any], None],
        *,
        label: str,
        unit: str = "tasks",
    ) -> None:
        self.total, self.done = total, 0
        self.unit = unit
        self.callback = progress if callable(progress) else None
        self.rich: Any = None
        if progress is True and total != 0:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RichProgress

            self.rich = RichProgress(
                TextColumn(label),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
            )
            self.task_id = self.rich.add_task(label, total=total, rate="")
            self._start = time.perf_counter()

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
            elapsed = max(time.perf_counter() - self._start, 1e-9)
            rate = f"{self.done / elapsed:.1f} {self.unit}/s"
            self.rich.update(self.task_id, advance=1, rate=rate)
        if self.callback is not None:
            self.callback(self.done, self.total)
