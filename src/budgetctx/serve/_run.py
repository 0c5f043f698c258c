"""Run the app with uvicorn: JSON logs on stderr, no access log (it would print raw paths)."""

from __future__ import annotations

import logging

import uvicorn

from budgetctx._core.validation import InstanceOf, Interval, check
from budgetctx.serve._app import create_app
from budgetctx.serve._config import ServeConfig
from budgetctx.serve._limits import guarded_protocol
from budgetctx.serve._logging import configure_logging

__all__ = ["run"]


def run(config: ServeConfig, *, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve until interrupted (what ``budgetctx serve`` does)."""
    check("serve", "host", host, InstanceOf(str, "a str", fix="e.g. '127.0.0.1'."))
    check("serve", "port", port, Interval(int, 0, 65535, fix="e.g. 8000."))
    configure_logging(level=logging.INFO)
    limits = config.limits
    uvicorn.run(
        create_app(config, bound_host=host),
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        server_header=False,
        # The h11 protocol with a connection cap and an idle timeout (see _limits); uvicorn's
        # own limit answers 503 past max_connections requests in flight.
        http=guarded_protocol(
            max_connections=limits.max_connections, idle_timeout=limits.idle_timeout_s
        ),
        limit_concurrency=limits.max_connections,
        timeout_keep_alive=5,
        h11_max_incomplete_event_size=64 * 1024,
    )
