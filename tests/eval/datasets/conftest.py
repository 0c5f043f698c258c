"""A real local HTTP server for the fetch tests (127.0.0.1, port 0, one thread)."""

from __future__ import annotations

import functools
import http.server
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


class FileServer:
    """Serves ``directory``; records every GET path; can answer 503 a few times per path."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.requests: list[str] = []
        self.failures: Counter[str] = Counter()  # path -> 503 answers still to give
        handler = functools.partial(_Handler, self, directory=str(directory))
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        # A short poll interval keeps shutdown() (and so each test's teardown) fast.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


class _Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, server_state: FileServer, *args: Any, **kwargs: Any) -> None:
        self.state = server_state
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:
        self.state.requests.append(self.path)
        if self.state.failures[self.path] > 0:
            self.state.failures[self.path] -= 1
            self.send_error(503, "try again")
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass


@pytest.fixture
def serve() -> Iterator[Callable[[Path], FileServer]]:
    """``serve(directory)`` starts a server for the test; it is shut down afterwards."""
    servers: list[FileServer] = []

    def start(directory: Path) -> FileServer:
        server = FileServer(directory)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture(autouse=True)
def _no_env_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's BUDGETCTX_DATA must not leak into tests that rely on the default.
    monkeypatch.delenv("BUDGETCTX_DATA", raising=False)
