"""Fixtures: a real upstream (uvicorn in a thread) and the real proxy (``budgetctx serve`` in a
subprocess), shared by the module's tests so that the suite starts each once."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

import budgetctx
from tests.serve._upstream import Upstream, free_port

#: The budgets the proxy's configuration gives its two models.
BUDGET = 300
SMALL_BUDGET = 120


@dataclass
class Proxy:
    url: str
    stderr: Path
    upstream: Upstream

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def log_text(self) -> str:
        return self.stderr.read_text(encoding="utf-8", errors="replace")


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream(max_prompt_tokens=BUDGET) as up:
        yield up


@pytest.fixture
def fresh(upstream: Upstream) -> Upstream:
    """The shared upstream with its record and faults cleared."""
    upstream.received.clear()
    upstream.faults.clear()
    upstream.gate.clear()
    return upstream


def _config(upstream_url: str) -> str:
    return f"""
default_budget = {BUDGET}

[upstream]
base_url = "{upstream_url}"
timeout_s = 1.0
connect_timeout_s = 1.0

[models."gpt-4o"]
budget = {BUDGET}

[models."small"]
tokenizer = "o200k_base"
budget = {SMALL_BUDGET}

[limits]
max_body_bytes = 200000
max_documents = 3
selection_timeout_s = 20
"""


@pytest.fixture(scope="module")
def proxy(upstream: Upstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    """``budgetctx serve`` on a free loopback port, its stderr kept in a file."""
    folder = tmp_path_factory.mktemp("serve")
    config = folder / "serve.toml"
    config.write_text(_config(upstream.url), encoding="utf-8")
    stderr = folder / "stderr.log"
    port = free_port()
    # This checkout's source first, whatever the test run's own path is.
    source = str(Path(budgetctx.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}
    command = [
        sys.executable,
        "-c",
        "from budgetctx.cli import main; main()",
        "serve",
        "--port",
        str(port),
        "--config",
        str(config),
    ]
    with stderr.open("wb") as err:
        process = subprocess.Popen(command, stdout=err, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                pytest.fail(
                    f"budgetctx serve exited with {process.returncode}: "
                    + stderr.read_text(errors="replace")[-2000:]
                )
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("budgetctx serve did not answer /healthz within 60 s")
            time.sleep(0.1)
        yield Proxy(url, stderr, upstream)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
