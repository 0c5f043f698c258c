"""What a cold start imports (issue 27): ``import budgetctx`` and ``budgetctx select`` on one
file leave out the modules that only other calls need. How long they take is measured in
benchmarks/bench_import.py, not here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import budgetctx.data

NOTE = Path(budgetctx.data.__file__).with_name("sample_discharge_note.txt")

#: Loaded on first use only: process pools and the batch journal (build_contexts, run_batch),
#: the chat functions, the command line's libraries, the cache folder lookup.
NOT_AT_IMPORT = (
    "budgetctx.batch",
    "budgetctx.chat",
    "budgetctx.cli",
    "multiprocessing",
    "concurrent.futures.process",
    "sqlite3",
    "typer",
    "rich",
    "pydantic",
    "platformdirs",
    "tiktoken",
    "regex",
)
#: ``budgetctx select FILE``: one document, printed as text.
NOT_IN_SELECT = (
    "budgetctx.batch",
    "budgetctx.chat",
    "budgetctx.build._html",
    "multiprocessing",
    "concurrent.futures.process",
    "rich",
    # o200k_base counts with bpe-openai's prebuilt encoder: tiktoken's is never built
    "tiktoken",
)


def _loaded(code: str, names: tuple[str, ...]) -> list[str]:
    probe = (
        "import json, sys\n"
        f"{code}\n"
        f"print(json.dumps(sorted(m for m in {names!r} if m in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return list(json.loads(out.stdout.splitlines()[-1]))


def test_import_leaves_out_what_one_call_does_not_need() -> None:
    assert _loaded("import budgetctx", NOT_AT_IMPORT) == []


def test_lazy_names_load_on_first_use() -> None:
    code = (
        "import budgetctx\n"
        "assert 'build_contexts' in dir(budgetctx) and 'ItemError' in dir(budgetctx)\n"
        "from budgetctx import build_contexts, ItemError\n"
        "import budgetctx.batch as batch\n"
        "assert build_contexts is batch.build_contexts and ItemError is batch.ItemError\n"
        "assert [c.text for c in build_contexts(['Fever. Home.'], 3, selector='lead')]"
        " == ['Fever.']\n"
        "try:\n"
        "    budgetctx.no_such_name\n"
        "except AttributeError as exc:\n"
        "    assert 'no_such_name' in str(exc)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')"
    )
    assert _loaded(code, ("budgetctx.batch",)) == ["budgetctx.batch"]


def test_select_on_one_file_leaves_out_batch_and_rich() -> None:
    code = (
        "from budgetctx.cli import main\n"
        f"sys.argv = ['budgetctx', 'select', {str(NOTE)!r}, '--budget', '64']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    assert exc.code in (0, None), exc.code\n"
    )
    assert _loaded(code, NOT_IN_SELECT) == []
