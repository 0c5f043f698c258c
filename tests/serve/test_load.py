"""A bounded load test of ``budgetctx serve`` on 127.0.0.1: the connection cap, the idle and
body timeouts and the selection cap hold (F6), a million-space document is condensed rather
than a 500 with a Rust backtrace (F1), and every log line is JSON (F8)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

import budgetctx
from tests.serve._upstream import free_port

pytestmark = pytest.mark.slow

MAX_CONNECTIONS = 8
NOTE = "Chest pain. Troponin negative. Discharged home on aspirin. Follow up in clinic."


@dataclass
class Server:
    port: int
    pid: int
    stderr: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("load")
    config = folder / "serve.toml"
    config.write_text(
        f"""
[limits]
max_connections = {MAX_CONNECTIONS}
idle_timeout_s = 1.0
body_timeout_s = 1.0
max_selections = 2
selection_timeout_s = 120
""",
        encoding="utf-8",
    )
    stderr = folder / "stderr.log"
    port = free_port()
    source = str(Path(budgetctx.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-c", "from budgetctx.cli import main; main()", "serve"]
    command += ["--port", str(port), "--config", str(config)]
    with stderr.open("wb") as err:
        process = subprocess.Popen(command, stdout=err, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, stderr.read_text(errors="replace")[-2000:]
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "budgetctx serve did not start within 90 s"
            time.sleep(0.2)
        yield Server(port, process.pid, stderr)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def _closed_within(sock: socket.socket, seconds: float) -> bytes | None:
    """What the server sent before closing ``sock`` within ``seconds``; None if still open."""
    sock.settimeout(seconds)
    data = b""
    try:
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                return data
            data += chunk
    except TimeoutError:
        return None
    except OSError:
        return data


def test_trickling_connections_are_capped_and_closed(server: Server) -> None:
    socks = []
    for _ in range(3 * MAX_CONNECTIONS):
        s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        s.sendall(b"POST /v1/context HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # headers never end
        socks.append(s)
        time.sleep(0.01)
    # Past the cap: a 503 and closed at once.
    refused = [_closed_within(s, 0.5) for s in socks[MAX_CONNECTIONS + 2 :]]
    assert all(r is not None and r.startswith(b"HTTP/1.1 503") for r in refused), refused[:3]
    # Within it: closed by the idle timeout (1 s), not held for ever.
    start = time.monotonic()
    held = [_closed_within(s, 5.0) for s in socks[: MAX_CONNECTIONS - 1]]
    assert all(h is not None for h in held)
    assert time.monotonic() - start < 5.0
    for s in socks:
        s.close()
    after = httpx.post(f"{server.url}/v1/context", json={"text": NOTE, "budget": 8}, timeout=60)
    assert after.status_code == 200


def test_a_body_that_never_finishes_is_a_408_and_frees_the_connection(server: Server) -> None:
    socks = []
    for _ in range(MAX_CONNECTIONS - 2):
        s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        s.sendall(
            b"POST /v1/context HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b"content-length: 4000000\r\n\r\n" + b"x" * 1000
        )
        socks.append(s)
    answers = [_closed_within(s, 6.0) or b"" for s in socks]
    for s in socks:
        s.close()
    assert all(a.startswith(b"HTTP/1.1 408") for a in answers), [a[:40] for a in answers]


def test_concurrent_selections_are_answered_200_or_503(server: Server) -> None:
    statuses: list[int] = []
    body = {"text": NOTE * 200, "budget": 60, "selector": "mmr"}

    def one() -> None:
        statuses.append(httpx.post(f"{server.url}/v1/context", json=body, timeout=150).status_code)

    threads = [threading.Thread(target=one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(statuses) <= {200, 503} and 200 in statuses


def test_a_million_spaces_are_condensed_and_every_log_line_is_json(server: Server) -> None:
    body = {"text": "a" + " " * 1_000_000 + "b", "budget": 50, "selector": "lead"}
    response = httpx.post(f"{server.url}/v1/context", json=body, timeout=150)
    assert response.status_code == 200, response.text[:300]
    assert response.json()["tokens_used"] <= 50
    for line in server.stderr.read_text(encoding="utf-8", errors="replace").splitlines():
        record = json.loads(line)  # a Rust panic message or a traceback would not parse
        assert record.get("status") != 500 and "Traceback" not in line
