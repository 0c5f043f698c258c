from __future__ import annotations

from pathlib import Path

import pytest

from budgetctx.eval._store import SweepRow, SweepStore
from tests.eval.report._synthetic import realistic_rows, toy_rows


@pytest.fixture
def toy() -> list[SweepRow]:
    return toy_rows()


@pytest.fixture(scope="module")
def realistic_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stored sweep shaped like the paper's (3 datasets x 7 selectors + oracle x 4
    budgets x 2 unitizers), small enough to report on in a few seconds."""
    run = tmp_path_factory.mktemp("run")
    with SweepStore(run) as store:
        store.check_settings({"tokenizer": "o200k_base", "separator": "\n", "seed": 0})
        store.write(realistic_rows(n_examples=8))
    return run
