"""The built wheel works on its own: installed into a fresh virtual environment (nothing but
the wheel and its runtime dependencies), ``budgetctx demo`` runs and ``--version`` agrees.

uv builds and installs with pip's indexes (``.ci/uv_pip_options.py``), so the test works
offline against the package mirror, and its cache makes the install a matter of seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from budgetctx._version import __version__

ROOT = Path(__file__).resolve().parents[1]


def _uv() -> str:
    found = Path(sys.executable).parent / "uv"
    if found.is_file():
        return str(found)
    on_path = shutil.which("uv")
    if on_path is None:
        pytest.skip("uv is not installed (make installs it into .venv)")
    return on_path


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout)
    assert proc.returncode == 0, f"{args[:3]} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc


@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv_and_runs_the_demo(tmp_path: Path) -> None:
    uv = _uv()
    options = _run(sys.executable, str(ROOT / ".ci" / "uv_pip_options.py")).stdout.split()
    # uv build has no --constraint; pip's constraints apply to the build as build constraints.
    build_options = ["--build-constraints" if o == "--constraint" else o for o in options]
    dist = tmp_path / "dist"
    _run(uv, "build", "--wheel", "--quiet", *build_options, "--out-dir", str(dist), str(ROOT))
    (wheel,) = dist.glob("budgetctx-*.whl")
    assert wheel.name.startswith(f"budgetctx-{__version__}-")
    venv = tmp_path / "venv"
    _run(uv, "venv", "--quiet", "--python", sys.executable, str(venv))
    python = venv / "bin" / "python"
    _run(uv, "pip", "install", "--quiet", "--python", str(python), *options, str(wheel))
    # The entry point of the installed wheel, not this checkout: run from an empty folder.
    exe = str(venv / "bin" / "budgetctx")
    version = _run(exe, "--version")
    assert version.stdout.strip() == f"budgetctx {__version__}"
    demo = subprocess.run(
        [exe, "demo"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert demo.returncode == 0, demo.stderr
    assert "Provenance" in demo.stdout and "/256 tokens" in demo.stdout
    # Only runtime dependencies came along: no test extra in the fresh environment.
    listed = _run(uv, "pip", "list", "--python", str(python)).stdout
    assert "pytest" not in listed and "budgetctx" in listed
    # The SBOM step of make dist, on the same environment: every runtime dependency with its
    # resolved version (schema validation is left to make dist: it costs ~10 s of CPU).
    cyclonedx = Path(sys.executable).parent / "cyclonedx-py"
    if not cyclonedx.is_file():
        pytest.skip("cyclonedx-bom is not installed (the test extra has it)")
    sbom = tmp_path / "sbom.cdx.json"
    _run(
        str(cyclonedx), "environment", "--no-validate", "--of", "JSON", "-o", str(sbom), str(python)
    )
    components = {
        c["name"].lower(): c["version"] for c in json.loads(sbom.read_text())["components"]
    }
    import numpy
    import tiktoken  # noqa: F401

    assert components["budgetctx"] == __version__
    assert components["numpy"] == numpy.__version__ and "tiktoken" in components
    assert "pytest" not in components and "mkdocs" not in components
