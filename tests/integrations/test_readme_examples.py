"""The README's adapter examples run as written (offline: in-memory stores, mock models)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _examples() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Framework adapters\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


def test_there_is_one_example_per_framework() -> None:
    examples = _examples()
    assert len(examples) == 3
    for example, module in zip(examples, ("langchain", "llamaindex", "haystack"), strict=True):
        assert f"from budgetctx.integrations.{module} import" in example


@pytest.mark.parametrize("index", range(3), ids=["langchain", "llamaindex", "haystack"])
def test_readme_example_runs(index: int) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(_examples()[index], f"README example {index}", "exec"), {})
    assert out.getvalue().strip()
