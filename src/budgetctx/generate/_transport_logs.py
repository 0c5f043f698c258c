"""Log records of the HTTP libraries, made safe while a budgetctx request is in flight.

httpx logs every response at INFO as ``HTTP Request: POST <url> "HTTP/1.1 400 <reason
phrase>"``, and httpcore's DEBUG traces carry response headers and exception messages
(``illegal header line: bytearray(b'...')``): bytes a server chose, which may echo the prompt.
While :func:`withheld` is active in a thread, a filter on those loggers keeps the method, URL
and status of the INFO line and only the event name of a trace; other threads and other
callers of those libraries are untouched. The ``openai`` client's own records carry status
codes and class names only and are left as they are.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["withheld"]

_ACTIVE: ContextVar[bool] = ContextVar("budgetctx_withhold_transport_logs", default=False)
# httpx2/httpcore2 are the names the openai client of this environment uses; httpx/httpcore
# the names of the usual distribution. A filter on a logger does not apply to its children,
# hence every module logger by name.
_HTTP_LINE = ("httpx", "httpx2")
_TRACES = tuple(
    f"{lib}.{part}"
    for lib in ("httpcore", "httpcore2")
    for part in ("connection", "connection_pool", "http11", "http2", "proxy", "socks")
)
_installed = False
_install_lock = threading.Lock()


class _Withhold(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not _ACTIVE.get():
            return True
        args = record.args
        if record.name in _HTTP_LINE and isinstance(args, tuple) and len(args) == 5:
            record.msg = 'HTTP Request: %s %s "%s %s" (reason phrase withheld by budgetctx)'
            record.args = args[:4]
        else:
            event = str(record.msg).split(" ", 1)[0][:80]
            record.msg = "%s (details withheld by budgetctx: they may echo the prompt)"
            record.args = (event,)
        return True


def _install() -> None:
    global _installed
    with _install_lock:
        if _installed:
            return
        flt = _Withhold()
        for name in (*_HTTP_LINE, *_TRACES):
            logging.getLogger(name).addFilter(flt)
        _installed = True


@contextmanager
def withheld() -> Iterator[None]:
    """Withhold upstream text from the HTTP libraries' log records in this context.

    >>> with withheld():
    ...     pass
    """
    _install()
    token = _ACTIVE.set(True)
    try:
        yield
    finally:
        _ACTIVE.reset(token)
