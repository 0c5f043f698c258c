"""Progress of a long job (a sweep, a batch): a rich bar on stderr with the rate and the time
left, a callback, or nothing; and :class:`Working`, for one long call with no steps to count
(``budgetctx select`` on a large file, ``budgetctx report``)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO, TypeVar

__all__ = ["Progress", "Working"]

_T = TypeVar("_T")

#: Seconds a job runs before :class:`Working` shows anything: a spinner on a terminal.
SPINNER_AFTER = 0.5
#: Seconds before :class:`Working` writes its one line when stderr is not a terminal (a log).
LINE_AFTER = 5.0


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


class Working:
    """Says on stderr that a long call is running, and only when it is long: on a terminal a
    spinner with the elapsed time after :data:`SPINNER_AFTER` seconds, elsewhere one line after
    :data:`LINE_AFTER` seconds; a call that ends sooner prints nothing. ``label`` must hold
    no document text (sizes and counts only).

    >>> import io
    >>> log = io.StringIO()
    >>> with Working("condensing 1 document (12 bytes)", stream=log, after=0):
    ...     pass
    >>> log.getvalue()
    'budgetctx: condensing 1 document (12 bytes) ...\\n'
    """

    def __init__(
        self, label: str, *, stream: TextIO | None = None, after: float | None = None
    ) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.tty = tty and stream is None  # rich draws on the real stderr only
        self.after = after if after is not None else (SPINNER_AFTER if self.tty else LINE_AFTER)
        self._lock = threading.Lock()
        self._done = False
        self._status: Any = None
        self._timer: threading.Timer | None = None

    def _show(self) -> None:
        with self._lock:
            if self._done:
                return
            if not self.tty:
                self.stream.write(f"budgetctx: {self.label} ...\n")
                self.stream.flush()
                return
            from rich.console import Console

            self._status = Console(stderr=True).status(f"budgetctx: {self.label}")
            self._status.start()

    def __enter__(self) -> Working:
        if self.after <= 0:
            self._show()
        else:
            self._timer = threading.Timer(self.after, self._show)
            self._timer.daemon = True
            self._timer.start()
        return self

    def call(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
        """``fn(*args, **kwargs)`` with this notice shown while it runs."""
        with self:
            return fn(*args, **kwargs)

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._done = True
            if self._status is not None:
                self._status.stop()
