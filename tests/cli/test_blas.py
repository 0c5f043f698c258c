"""The command line bounds BLAS's threads before numpy starts them (issue 27, fourth pass):
``$BUDGETCTX_BLAS_THREADS`` (default 1) unless the user set OpenBLAS's own variables."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from budgetctx.build._prepare import BLAS_THREADS_ENV
from budgetctx.cli import _blas

_PROBE = (
    "import json, os\n"
    "import budgetctx.cli\n"
    "import numpy  # as a command does: the command line itself no longer imports it\n"
    "from threadpoolctl import threadpool_info\n"
    "blas = [i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas']\n"
    "print(json.dumps([os.environ.get('OPENBLAS_NUM_THREADS'), blas]))"
)


def _run(**env: str) -> tuple[str | None, list[int]]:
    clean = {
        k: v for k, v in os.environ.items() if k not in (*_blas._OPENBLAS_VARS, BLAS_THREADS_ENV)
    }
    out = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    value, threads = json.loads(out.stdout.splitlines()[-1])
    return value, threads


def test_the_library_setting_is_the_one_read() -> None:
    assert _blas._BLAS_THREADS_ENV == BLAS_THREADS_ENV


@pytest.mark.skipif(os.cpu_count() == 1, reason="one core: BLAS runs one thread anyway")
def test_the_cli_starts_one_blas_thread_by_default() -> None:
    value, threads = _run()
    assert value == "1"
    assert threads and set(threads) == {1}


@pytest.mark.parametrize(
    ("env", "want"),
    [
        ({BLAS_THREADS_ENV: "2"}, "2"),
        ({BLAS_THREADS_ENV: "0"}, None),  # 0: BLAS left alone, as the library does
        ({BLAS_THREADS_ENV: "many"}, None),
        ({"OMP_NUM_THREADS": "2"}, None),  # the user's own variables stand
        ({"OPENBLAS_NUM_THREADS": "2", BLAS_THREADS_ENV: "1"}, "2"),
    ],
)
def test_the_users_settings_are_kept(env: dict[str, str], want: str | None) -> None:
    assert _run(**env)[0] == want


def test_nothing_is_set_once_numpy_is_loaded() -> None:
    # in this process numpy is loaded already: too late to bound its threads
    environ: dict[str, str] = {}
    assert "numpy" in sys.modules
    assert _blas.bound_blas_threads(environ) is None
    assert environ == {}
