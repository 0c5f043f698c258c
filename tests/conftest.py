"""Shared fixtures. Datasets are read from ../shared/data beside the checkout, never copied."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from budgetctx.data import sample_note as _sample_note

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("BUDGETCTX_SHARED_DATA", REPO.parent / "shared" / "data"))


def _env_folder(tmp_path_factory: pytest.TempPathFactory, name: str, var: str) -> Iterator[Path]:
    """``var`` pointed at a new temporary folder for the session (and every process the tests
    start), then restored."""
    folder = tmp_path_factory.mktemp(name)
    with pytest.MonkeyPatch.context() as m:
        m.setenv(var, str(folder))
        yield folder


@pytest.fixture(scope="session", autouse=True)
def _state_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The user's state folder (where the server keeps provenance by default) in a temporary
    folder, for every test and every server they start: tests never write to the real one."""
    yield from _env_folder(tmp_path_factory, "state", "XDG_STATE_HOME")


@pytest.fixture(scope="session", autouse=True)
def _cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The cache of decoded rank files (budgetctx.tokenizers._rank_cache) in a temporary folder,
    for every test and every process they start: tests never write to the user's cache."""
    yield from _env_folder(tmp_path_factory, "cache", "BUDGETCTX_CACHE_DIR")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared dataset folder; tests using it skip (with the reason) when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared datasets not found at {SHARED_DATA} (set BUDGETCTX_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def sample_note() -> str:
    return _sample_note()


@pytest.fixture(scope="session")
def mtsamples_notes(shared_data: Path) -> list[str]:
    path = shared_data / "mtsamples_discharge" / "discharge_summaries.derived.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is missing")
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line)["text"] for line in fh if line.strip()]


@pytest.fixture(scope="session")
def leval_docs(shared_data: Path) -> dict[str, list[str]]:
    """L-Eval summarization inputs by task (documents only)."""
    folder = shared_data / "leval"
    if not folder.is_dir():
        pytest.skip(f"{folder} is missing")
    out: dict[str, list[str]] = {}
    for path in sorted(folder.glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            out[path.stem] = [json.loads(line)["input"] for line in fh if line.strip()]
    return out
