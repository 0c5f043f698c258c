"""Cold-start cost: ``import budgetctx`` and ``budgetctx select`` on a 2k-token note.

Each figure is the median wall time of N fresh processes (default 5), so that module caches
never carry over; the bare interpreter's start is printed beside it for reference. Then the
slowest imports under ``python -X importtime -c "import budgetctx"`` (self time), to find the
culprits. Informational only: nothing is asserted (tests check *what* is imported, not how
fast). Last, encoding the note's sentences with budgetctx's TF-IDF beside scikit-learn's
``TfidfVectorizer`` (when installed), which budgetctx reproduces without importing it.

    .venv/bin/python benchmarks/bench_import.py [--repeat N] [--budget B]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

HEAVY = ("sklearn", "pandas", "scipy.stats")


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


def heavy_modules(cmd: list[str]) -> list[str]:
    """Heavy packages that ``cmd`` (a ``python -c`` line plus arguments) leaves imported."""
    code = cmd[2] + "\n" if cmd[1] == "-c" else ""
    probe = (
        "import sys\n"
        "try:\n" + "".join(f"    {line}\n" for line in code.splitlines()) + "except SystemExit:\n"
        "    pass\n"
        f"print('HEAVY', *sorted(m for m in sys.modules if m.startswith({HEAVY!r})))\n"
    )
    out = subprocess.run(
        [cmd[0], "-c", probe, *cmd[3:]], check=True, capture_output=True, text=True
    ).stdout
    return [line for line in out.splitlines() if line.startswith("HEAVY")][-1].split()[1:]


def encode_times(text: str) -> dict[str, float]:
    """Best-of-5 milliseconds to encode the sentences of ``text`` (fit on them, as select does)."""
    from budgetctx import get_unitizer
    from budgetctx.representations import TfidfRepresentation

    units = [u.text for u in get_unitizer("sentence").unitize(text).units]
    rep = TfidfRepresentation()
    cases = {f"budgetctx TfidfRepresentation ({len(units)} units)": lambda: rep.encode(units)}
    try:
        import numpy as np
        from sklearn.feature_extraction.text import TfidfVectorizer

        from budgetctx.representations._tfidf import _TOKEN_PATTERN
    except ImportError:
        pass
    else:
        vec = TfidfVectorizer(
            stop_words="english", sublinear_tf=True, token_pattern=_TOKEN_PATTERN, dtype=np.float64
        )
        cases["scikit-learn TfidfVectorizer.fit_transform"] = lambda: vec.fit_transform(units)
    return {k: min(timeit.repeat(f, number=20, repeat=5)) / 20 * 1000 for k, f in cases.items()}


def scipy_sparse_import(repeat: int) -> float:
    """Median cold ``import scipy.sparse`` after numpy: what a TF-IDF matrix costs to build."""
    t = "import time, numpy; t = time.perf_counter(); import scipy.sparse; "
    cmd = [sys.executable, "-c", t + "print(time.perf_counter() - t)"]
    runs = [float(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)]
    runs += [
        float(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        for _ in range(repeat - 1)
    ]
    return statistics.median(runs)


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
        select = cases[f"budgetctx select ({args.tokens}-token note, -b {args.budget})"]
        print(f"heavy modules after select ({', '.join(HEAVY)}): {heavy_modules(select)}")
        print(f"cold `import scipy.sparse` after numpy: {scipy_sparse_import(args.repeat):.3f} s")
        text = note.read_text(encoding="utf-8")
    print("\nslowest imports of `import budgetctx` (self time, -X importtime):")
    print(f"{'self ms':>8} {'cumulative ms':>14}  module")
    for self_us, cum_us, name in slowest_imports(12):
        print(f"{self_us / 1000:8.1f} {cum_us / 1000:14.1f}  {name}")
    print(f"\nencoding the {args.tokens}-token note (best of 5, ms per call):")
    for label, ms in encode_times(text).items():
        print(f"{ms:8.2f}  {label}")


if __name__ == "__main__":
    main()
