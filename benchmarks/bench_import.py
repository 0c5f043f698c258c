"""Cold-start cost: ``import budgetctx`` and ``budgetctx select`` on a 2k-token note.

Each figure is the median wall time of N fresh processes (default 5), so that module caches
never carry over; the bare interpreter's start is printed beside it for reference. Then the
slowest imports under ``python -X importtime -c "import budgetctx"`` (self time), to find the
culprits. Informational only: nothing is asserted (tests check *what* is imported, not how
fast).

    .venv/bin/python benchmarks/bench_import.py [--repeat N] [--budget B]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def wall(cmd: list[str], repeat: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times), times


def note_of(tokens: int) -> str:
    """The bundled sample note repeated to about ``tokens`` o200k_base tokens."""
    from budgetctx import get_tokenizer
    from budgetctx.data import sample_note

    note, tok = sample_note(), get_tokenizer("o200k_base")
    parts = [note]
    while tok.count("\n\n".join(parts)) < tokens:
        parts.append(note)
    text = "\n\n".join(parts)
    return tok.truncate(text, tokens)


def slowest_imports(n: int) -> list[tuple[int, int, str]]:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import budgetctx"],
        check=True,
        capture_output=True,
        text=True,
    ).stderr
    rows = []
    for line in out.splitlines():
        if not line.startswith("import time:") or "|" not in line or "self" in line:
            continue
        self_us, cumulative_us, name = (p.strip() for p in line[len("import time:") :].split("|"))
        rows.append((int(self_us), int(cumulative_us), name.strip()))
    return sorted(rows, reverse=True)[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--budget", type=int, default=512)
    parser.add_argument("--tokens", type=int, default=2000, help="size of the note")
    args = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        note = Path(tmp) / "note.txt"
        note.write_text(note_of(args.tokens), encoding="utf-8")
        cli = "import sys; from budgetctx.cli import main; sys.argv[0] = 'budgetctx'; main()"
        cases = {
            "python -c pass": [py, "-c", "pass"],
            "import budgetctx": [py, "-c", "import budgetctx"],
            f"budgetctx select ({args.tokens}-token note, -b {args.budget})": [
                py,
                "-c",
                cli,
                "select",
                str(note),
                "--budget",
                str(args.budget),
            ],
        }
        print(f"median of {args.repeat} cold processes ({py})")
        print(f"{'command':<48} {'median s':>9}  all runs")
        for label, cmd in cases.items():
            median, times = wall(cmd, args.repeat)
            runs = " ".join(f"{t:.2f}" for t in times)
            print(f"{label:<48} {median:9.3f}  {runs}")
    print("\nslowest imports of `import budgetctx` (self time, -X importtime):")
    print(f"{'self ms':>8} {'cumulative ms':>14}  module")
    for self_us, cum_us, name in slowest_imports(12):
        print(f"{self_us / 1000:8.1f} {cum_us / 1000:14.1f}  {name}")


if __name__ == "__main__":
    main()
