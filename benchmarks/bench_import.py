"""Cold-start cost: ``import budgetctx``, ``budgetctx select`` on a 2k-token note and
``budgetctx select --help`` (and ``from budgetctx import build_context``: ``import budgetctx``
imports its public names on first use).

Each figure is the median wall time of N fresh processes (default 5), so that module caches
never carry over; the bare interpreter's start is printed beside it for reference. ``select``
is timed twice: with an empty cache folder each run (a first run on a machine: the tokenizer's
rank file is decoded and its cache written) and with a filled one (every later run). With
``--before SRC`` every case is also run with another source tree first on the path (e.g. an
export of main's ``src``), alternating run by run so that the machine's load hits both alike.
Then building the o200k_base tokenizer in a fresh process and counting the note's segments with
it, with bpe-openai's prebuilt encoder (the default) and with tiktoken's
(``BUDGETCTX_TIKTOKEN_ONLY=1``), alternating; then the slowest imports under
``python -X importtime -c "import budgetctx"`` (self time), to find the culprits.
Informational only: nothing is asserted (tests check *what* is imported, not how fast). Last,
encoding the note's sentences with budgetctx's TF-IDF beside scikit-learn's
``TfidfVectorizer`` (when installed), which budgetctx reproduces without importing it.

    .venv/bin/python benchmarks/bench_import.py [--repeat N] [--budget B] [--before SRC]
        [--note FILE]    # e.g. src/budgetctx/data/sample_discharge_note.txt --budget 256
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

HEAVY = ("sklearn", "pandas", "scipy.stats")
#: What a small document's select and ``select --help`` should leave out since issue 27's
#: fifth pass (TF-IDF rows without scipy.sparse; the library imported where a command runs).
STARTUP = ("scipy", "numpy.testing", "numpy.f2py", "numpy")


SRC = Path(__file__).resolve().parents[1] / "src"


def timed(cmd: list[str], env: dict[str, str], cache: Path | None) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run of ``cmd``; ``cache`` (the rank cache
    folder) is emptied first. CPU time is what to compare on a busy machine: other jobs
    stretch the wall time of a process far more than its CPU time."""
    if cache is not None:
        shutil.rmtree(cache, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def environments(tmp: Path, before: Path | None) -> dict[str, dict[str, str]]:
    """The environment of each source tree: it first on the path, its own cache folder."""
    trees = {"after": SRC} if before is None else {"before": before, "after": SRC}
    out = {}
    for label, src in trees.items():
        env = dict(os.environ, PYTHONPATH=str(src), BUDGETCTX_CACHE_DIR=str(tmp / label))
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # cold, not uncompiled: .pyc files are kept
        env.pop("BUDGETCTX_NO_CACHE", None)
        out[label] = env
    return out


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
        [sys.executable, "-X", "importtime", "-c", "from budgetctx import build_context"],
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


def heavy_modules(cmd: list[str], prefixes: tuple[str, ...] = HEAVY) -> list[str]:
    """Packages of ``prefixes`` that ``cmd`` (a ``python -c`` line plus arguments) leaves
    imported."""
    code = cmd[2] + "\n" if cmd[1] == "-c" else ""
    probe = (
        "import sys\n"
        "try:\n" + "".join(f"    {line}\n" for line in code.splitlines()) + "except SystemExit:\n"
        "    pass\n"
        "print('HEAVY', *sorted(m for m in sys.modules if m in "
        f"{prefixes!r} or m.startswith(tuple(p + '.' for p in {prefixes!r}))))\n"
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


_BUILD = """
import sys, time
from budgetctx.tokenizers import TiktokenTokenizer
text = open(sys.argv[1], encoding="utf-8").read()
spans = [(m, m + 40) for m in range(0, len(text) - 40, 60)]
w, c = time.perf_counter(), time.process_time()
tok = TiktokenTokenizer("o200k_base")
tok.count_segments(text, spans, "\\n")
print(time.perf_counter() - w, time.process_time() - c)
"""


def tokenizer_build(note: Path, env: dict[str, str], repeat: int) -> dict[str, list[float]]:
    """Wall and CPU seconds to build the o200k_base tokenizer and count ``note``'s segments once,
    in fresh processes (rank cache filled): bpe-openai's encoder against tiktoken's."""
    cases = {"bpe-openai encoder": env, "tiktoken (BUDGETCTX_TIKTOKEN_ONLY=1)": dict(env)}
    cases["tiktoken (BUDGETCTX_TIKTOKEN_ONLY=1)"]["BUDGETCTX_TIKTOKEN_ONLY"] = "1"
    out: dict[str, list[float]] = {}
    for label, case_env in cases.items():  # fill the cache on both paths
        subprocess.run(
            [sys.executable, "-c", _BUILD, str(note)], check=True, capture_output=True, env=case_env
        )
        out[label] = []
    runs: dict[str, list[tuple[float, float]]] = {label: [] for label in cases}
    for i in range(repeat):
        for label in list(cases) if i % 2 == 0 else list(reversed(cases)):
            line = subprocess.run(
                [sys.executable, "-c", _BUILD, str(note)],
                check=True,
                capture_output=True,
                text=True,
                env=cases[label],
            ).stdout.split()
            runs[label].append((float(line[0]), float(line[1])))
    for label, got in runs.items():
        out[label] = [statistics.median(w for w, _ in got), statistics.median(c for _, c in got)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--budget", type=int, default=512)
    parser.add_argument("--tokens", type=int, default=2000, help="size of the note")
    parser.add_argument("--before", type=Path, help="another src folder, timed alternately")
    parser.add_argument(
        "--note",
        type=Path,
        help="a document to select from (default: the bundled note repeated to --tokens)",
    )
    args = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        note = tmp / "note.txt"
        if args.note is not None:
            note.write_text(args.note.read_text(encoding="utf-8"), encoding="utf-8")
        else:
            note.write_text(note_of(args.tokens), encoding="utf-8")
        size = args.note.name if args.note is not None else f"{args.tokens}-token note"
        envs = environments(tmp, args.before)
        cli = "import sys; from budgetctx.cli import main; sys.argv[0] = 'budgetctx'; main()"
        select = [py, "-c", cli, "select", str(note), "--budget", str(args.budget)]
        # label -> (command, empty the cache before each run)
        cases: dict[str, tuple[list[str], bool]] = {
            "python -c pass": ([py, "-c", "pass"], False),
            "import budgetctx": ([py, "-c", "import budgetctx"], False),
            # since issue 27's fourth-pass follow-up ``import budgetctx`` imports its names on
            # first use: this is what the old "import budgetctx" row measured
            "from budgetctx import build_context": (
                [py, "-c", "from budgetctx import build_context"],
                False,
            ),
            f"select ({size}, -b {args.budget}), first run": (select, True),
            f"select ({size}, -b {args.budget}), cache filled": (select, False),
            "select --help": ([py, "-c", cli, "select", "--help"], False),
        }
        for env in envs.values():  # compile every tree's .pyc files and fill its cache
            subprocess.run(select, check=True, capture_output=True, env=env)
        print(f"median of {args.repeat} cold processes ({py}); seconds; load {os.getloadavg()}")
        print(f"{'command':<50} {'tree':<6} {'wall':>6} {'CPU':>6}  all runs (wall)")
        for label, (cmd, empty) in cases.items():
            times: dict[str, list[tuple[float, float]]] = {tree: [] for tree in envs}
            for i in range(args.repeat):
                order = list(envs) if i % 2 == 0 else list(reversed(envs))
                for tree in order:
                    cache = Path(envs[tree]["BUDGETCTX_CACHE_DIR"]) if empty else None
                    times[tree].append(timed(cmd, envs[tree], cache))
                if empty:  # the "cache filled" case after this one finds it filled again
                    for env in envs.values():
                        subprocess.run(select, check=True, capture_output=True, env=env)
            for tree, runs in times.items():
                walls, cpus = [w for w, _ in runs], [c for _, c in runs]
                shown = " ".join(f"{w:.2f}" for w in walls)
                print(
                    f"{label:<50} {tree:<6} {statistics.median(walls):6.3f} "
                    f"{statistics.median(cpus):6.3f}  {shown}"
                )
        print(f"heavy modules after select ({', '.join(HEAVY)}): {heavy_modules(select)}")
        for label, cmd in (
            ("select", select),
            ("select --help", [py, "-c", cli, "select", "--help"]),
        ):
            loaded = sorted(
                {m for m in heavy_modules(cmd, STARTUP) if m in STARTUP or m == "scipy.sparse"}
            )
            print(f"of {', '.join(STARTUP)}, scipy.sparse, after {label}: {loaded}")
        print(f"cold `import scipy.sparse` after numpy: {scipy_sparse_import(args.repeat):.3f} s")
        print("o200k_base tokenizer built and the note's segments counted once, fresh process:")
        for label, (wall, cpu) in tokenizer_build(note, envs["after"], args.repeat).items():
            print(f"  {label:<40} wall {wall:.3f} s  CPU {cpu:.3f} s")
        text = note.read_text(encoding="utf-8")
    print("\nslowest imports of `from budgetctx import build_context` (self, -X importtime):")
    print(f"{'self ms':>8} {'cumulative ms':>14}  module")
    for self_us, cum_us, name in slowest_imports(12):
        print(f"{self_us / 1000:8.1f} {cum_us / 1000:14.1f}  {name}")
    print(f"\nencoding {size} (best of 5, ms per call):")
    for label, ms in encode_times(text).items():
        print(f"{ms:8.2f}  {label}")


if __name__ == "__main__":
    main()
