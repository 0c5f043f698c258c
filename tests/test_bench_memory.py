"""benchmarks/bench_memory.py's measurement: one fresh process per call reports its own peak
resident set before and after ``build_context`` (the comparison of two trees is the
benchmark's, not a test's)."""

from __future__ import annotations

from pathlib import Path

from budgetctx.data import sample_note
from tests._benchmarks import load_benchmark

ROOT = Path(__file__).resolve().parents[1]


def test_peak_reports_the_childs_own_peak_around_one_call(tmp_path: Path) -> None:
    bench = load_benchmark("bench_memory")
    path = tmp_path / "note.txt"
    path.write_text(sample_note(), encoding="utf-8")
    got = bench.peak(ROOT / "src", path, 64, "mmr")
    assert 0 < got["before"] <= got["after"]
    assert 0 < got["tokens"] <= 64
