"""Without its framework an adapter says which extra to install; the package itself and
``import budgetctx`` never need one."""

from __future__ import annotations

import json
import subprocess
import sys

# Runs where the frameworks are installed, so a finder hides them, as on a machine without
# the extras.
_CODE = """
import importlib, json, sys
from importlib.abc import MetaPathFinder

HIDDEN = ("langchain_core", "langchain_classic", "llama_index", "haystack", "pydantic")

class Hide(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Hide())
import budgetctx.integrations
from budgetctx import BudgetCtxError
out = {}
for name in ("langchain", "llamaindex", "haystack"):
    try:
        importlib.import_module(f"budgetctx.integrations.{name}")
    except ImportError as exc:
        out[name] = [isinstance(exc, BudgetCtxError), str(exc), repr(exc.__cause__)]
print(json.dumps(out))
"""


def test_a_missing_framework_names_the_extra() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CODE], capture_output=True, text=True, check=True, timeout=120
    )
    out = json.loads(done.stdout)
    assert set(out) == {"langchain", "llamaindex", "haystack"}
    for extra, package in [
        ("langchain", "langchain-core"),
        ("llamaindex", "llama-index-core"),
        ("haystack", "haystack-ai"),
    ]:
        is_ours, message, cause = out[extra]
        assert is_ours
        assert f"needs {package}, which is not installed" in message
        assert message.endswith(f"pip install 'budgetctx[{extra}]'.")
        assert "ModuleNotFoundError" in cause
