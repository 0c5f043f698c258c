"""benchmarks/bench_memory.py's measurement: one fresh process per call reports its own peak
resident set before and after ``build_context`` (the comparison of two trees is the
benchmark's, not a test's)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from budgetctx.data import sample_note

ROOT = Path(__file__).resolve().parents[1]


def test_peak_reports_the_childs_own_peak_around_one_call(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "bench_memory", ROOT / "benchmarks" / "bench_memory.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_memory"] = bench
    spec.loader.exec_module(bench)
    path = tmp_path / "note.txt"
    path.write_text(sample_note(), encoding="utf-8")
    got = bench.peak(ROOT / "src", path, 64, "mmr")
    assert 0 < got["before"] <= got["after"]
    assert 0 < got["tokens"] <= 64
