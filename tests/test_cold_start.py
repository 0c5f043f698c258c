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
    # Every public name is imported on first use: a bare import loads no numpy (so the CLI
    # can bound BLAS's threads before they start) and none of the rooms.
    "numpy",
    "scipy",
    "budgetctx._core.results",
    "budgetctx.build",
    "budgetctx.router",
    "budgetctx.selectors",
    "budgetctx.tokenizers",
    "budgetctx.unitizers",
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
    # ... and the separator's slack reads bpe-openai's pre-tokenizer, not the pattern's regex
    "regex",
    # a small document's TF-IDF rows are a CsrRows (representations/_csr.py): scipy.sparse,
    # and numpy.testing and numpy.f2py that its import loads, are left out
    "scipy",
    "numpy.testing",
    "numpy.f2py",
)
#: ``budgetctx select --help`` (and any command's start): the library is imported where a
#: command runs, so help reads no numpy.
NOT_IN_HELP = ("numpy", "scipy", "budgetctx.build", "budgetctx.selectors", "budgetctx.batch")
#: ``import budgetctx.build`` (the library a call runs): importlib.resources and tempfile are
#: read on first use only, by ``auto`` (the bundled router's file), the tekken tokenizer (its
#: bundled ranks) and a first run (the rank cache's writer). (A selection with TF-IDF of a
#: large document or a query loads them all the same, through scipy's import of numpy.testing.)
NOT_IN_BUILD = ("importlib.resources", "tempfile", "regex", "scipy", "tiktoken")


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


def test_every_public_name_and_room_loads_on_first_use() -> None:
    code = (
        "import budgetctx\n"
        "assert set(budgetctx.__all__) <= set(dir(budgetctx))\n"
        "import budgetctx.build, budgetctx.selectors\n"
        "assert budgetctx.build_context is budgetctx.build.build_context\n"
        "assert budgetctx.Selection is budgetctx.selectors.Selection\n"
        "assert all(getattr(budgetctx, n) is not None for n in budgetctx.__all__)\n"
        "from budgetctx import *  # noqa: F403\n"
    )
    assert _loaded(code, ("numpy",)) == ["numpy"]
    # a room is reachable as an attribute after a bare import, as it was when it was eager
    code = "import budgetctx\nbudgetctx.router.default_router\nbudgetctx.profiles.get_profile"
    assert _loaded(code, ("budgetctx.router", "budgetctx.profiles")) == [
        "budgetctx.profiles",
        "budgetctx.router",
    ]


def test_the_library_leaves_out_what_only_some_calls_read() -> None:
    assert _loaded("import budgetctx.build", NOT_IN_BUILD) == []


def test_script_patterns_compile_on_first_use() -> None:
    code = (
        "import re\n"
        "from budgetctx.unitizers._segment import segment_text, _script_chars\n"
        "segment_text('Chest pain. No fever.')\n"
        "assert _script_chars.cache_info().currsize == 0\n"
        "assert [s.text for s in segment_text('胸痛。無熱。')] == ['胸痛。', '無熱。']\n"
        "assert _script_chars.cache_info().currsize == 1\n"
    )
    _loaded(code, ())


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


def test_select_help_leaves_out_the_library() -> None:
    code = (
        "from budgetctx.cli import main\n"
        "sys.argv = ['budgetctx', 'select', '--help']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    assert exc.code in (0, None), exc.code\n"
    )
    assert _loaded(code, NOT_IN_HELP) == []
