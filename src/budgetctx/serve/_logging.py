"""Structured (JSON lines) logs that never contain request text.

Only the server writes request records, and only through :func:`log_event`, whose fields are
numbers, booleans and short identifiers chosen by the server (route template, status, error
class, token counts), never a value taken from a request body. The formatter also drops
exception messages and tracebacks, keeping only the exception's class: a message may quote
the input (a JSON decoder's, an upstream's), and a log line must not.

>>> import io, logging
>>> stream = io.StringIO()
>>> log = logging.getLogger("budgetctx.serve.doctest")
>>> handler = logging.StreamHandler(stream)
>>> handler.setFormatter(JsonFormatter())
>>> log.addHandler(handler)
>>> log.propagate = False
>>> log.setLevel(logging.INFO)
>>> log_event(log, "request", route="/healthz", status=200, ms=0.4)
>>> json.loads(stream.getvalue())["status"]
200
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

__all__ = ["LOGGER", "JsonFormatter", "configure_logging", "log_event"]

LOGGER = logging.getLogger("budgetctx.serve")

#: Loggers whose records would carry request or upstream text at INFO/DEBUG: httpx logs the
#: upstream's reason phrase, httpcore its raw header lines, uvicorn.access the raw path.
_QUIET = ("httpx", "httpcore", "uvicorn.access")

_FIELD_LIMIT = 120


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, event or message, and the fields."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        fields = getattr(record, "budgetctx_fields", None)
        if isinstance(fields, dict):
            out.update(fields)
        else:
            # Other libraries' records (uvicorn's start-up lines): their text, cut short.
            out["message"] = record.getMessage()[:_FIELD_LIMIT]
        if record.exc_info and record.exc_info[0] is not None:
            out["exc_type"] = record.exc_info[0].__name__  # never the message or traceback
        return json.dumps(out, separators=(",", ":"), default=str)

    def formatException(self, ei: Any) -> str:  # noqa: N802 - logging's name
        return ""


def _safe(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    return str(value)[:_FIELD_LIMIT]


def log_event(
    logger: logging.Logger, event: str, /, *, level: int = logging.INFO, **fields: Any
) -> None:
    """Log ``event`` with ``fields``; pass only values the server chose, never request text."""
    if logger.isEnabledFor(level):
        record = {"event": event, **{k: _safe(v) for k, v in fields.items()}}
        logger.log(level, event, extra={"budgetctx_fields": record})


def configure_logging(*, level: int = logging.INFO) -> None:
    """Send the server's and uvicorn's records to stderr as JSON lines (the CLI calls this)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    for name in ("budgetctx", "uvicorn", "uvicorn.error"):
        log = logging.getLogger(name)
        log.handlers[:] = [handler] if name != "uvicorn.error" else []
        log.setLevel(level)
        log.propagate = name == "uvicorn.error"
    for name in _QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
