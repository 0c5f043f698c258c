"""How time and peak memory grow with the input: ``segment_text`` and ``build_context`` on
synthetic clinical-like text and on the adversarial inputs of issue 10 (F2), up to 50 MB.

Each (input, size, stage) runs in a fresh subprocess, which reports its wall time, CPU time
(``time.process_time``: less disturbed by other load on a shared machine) and peak RSS (its own
VmHWM; ``ru_maxrss`` of a child can include its parent's pages from before ``exec``). The
tokenizer is loaded before the clock starts. For every input the table ends with the fitted
log-log exponent of CPU time and of peak RSS against size (1.0 is linear). A run that passes
``--timeout`` is shown as ``>T``. Informational only: nothing is asserted.

    .venv/bin/python benchmarks/bench_scaling.py                         # 0.1 .. 10 MB
    .venv/bin/python benchmarks/bench_scaling.py --sizes 0.1 1 10 50     # up to 50 MB
    .venv/bin/python benchmarks/bench_scaling.py --inputs clinical dr --stages segment

Inputs: ``clinical`` (notes with headers, sentences, vitals and medication lists),
``flowsheet`` (one vitals line per minute), ``dr`` (``"Dr. " * n``), ``mrs`` (``"Mrs. " * n``),
``dr-lines`` (``"Dr.\\n" * n``), ``cjk`` (Japanese sentences ending in 。 with no spaces).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

MB = 1_000_000
BUDGET = 2048

# --------------------------------------------------------------------------- synthetic inputs

_SECTIONS = (
    "CHIEF COMPLAINT",
    "HISTORY OF PRESENT ILLNESS",
    "PAST MEDICAL HISTORY",
    "MEDICATIONS",
    "PHYSICAL EXAMINATION",
    "LABORATORY DATA",
    "HOSPITAL COURSE",
    "ASSESSMENT AND PLAN",
    "DISCHARGE INSTRUCTIONS",
)
_SUBJECTS = (
    "The patient",
    "She",
    "He",
    "Dr. Lee",
    "The cardiology team",
    "Nursing staff",
    "Her daughter",
    "The surgical resident",
)
_VERBS = (
    "reported",
    "denied",
    "was treated for",
    "was started on",
    "tolerated",
    "developed",
    "was evaluated for",
    "improved with",
)
_OBJECTS = (
    "chest pain radiating to the left arm",
    "shortness of breath on exertion",
    "intermittent palpitations",
    "nausea without vomiting",
    "a urinary tract infection",
    "community-acquired pneumonia",
    "acute kidney injury",
    "poorly controlled hypertension",
    "atrial fibrillation with rapid ventricular response",
    "a fall at home without loss of consciousness",
    "lower extremity edema",
    "heparin drip",
)
_TAILS = (
    "",
    " on hospital day {d}",
    " after {d} doses of furosemide 40 mg IV",
    " per the family",
    " with troponin {t} ng/mL",
    " and was seen by Dr. Patel",
    " (creatinine {c} mg/dL)",
)
_DRUGS = ("Aspirin", "Metoprolol", "Lisinopril", "Atorvastatin", "Furosemide", "Apixaban")


def _sentence(rng: random.Random) -> str:
    tail = rng.choice(_TAILS).format(
        d=rng.randint(1, 9), t=round(rng.uniform(0.01, 2.0), 2), c=round(rng.uniform(0.6, 3), 1)
    )
    return f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}{tail}."


def _vitals(rng: random.Random, minute: int) -> str:
    return (
        f"{minute // 60 % 24:02d}:{minute % 60:02d} HR {rng.randint(50, 130)} "
        f"BP {rng.randint(85, 170)}/{rng.randint(45, 100)} SpO2 {rng.randint(86, 100)}% "
        f"T {rng.uniform(35.8, 39.4):.1f}"
    )


def clinical(size: int) -> str:
    """Discharge-note-like text: sections of sentences, medication lists and vitals."""
    rng = random.Random(0)
    parts: list[str] = []
    total = 0
    note = 0
    while total < size:
        note += 1
        lines = [f"PATIENT {note:06d}"]
        for name in _SECTIONS:
            lines.append(f"{name}:")
            if name == "MEDICATIONS":
                lines += [
                    f"{i}. {rng.choice(_DRUGS)} {rng.choice((5, 10, 20, 40, 81))} mg p.o. daily"
                    for i in range(1, rng.randint(3, 8))
                ]
            elif name == "LABORATORY DATA":
                lines += [_vitals(rng, rng.randint(0, 1439)) for _ in range(rng.randint(2, 6))]
            else:
                lines.append(" ".join(_sentence(rng) for _ in range(rng.randint(2, 7))))
            lines.append("")
        block = "\n".join(lines) + "\n"
        parts.append(block)
        total += len(block)
    return "".join(parts)[:size]


def flowsheet(size: int) -> str:
    rng = random.Random(0)
    lines = ["VITALS FLOWSHEET"]
    total, minute = 0, 0
    while total < size:
        line = _vitals(rng, minute)
        lines.append(line)
        total += len(line) + 1
        minute += 1
    return "\n".join(lines)[:size]


def _repeat(unit: str) -> Callable[[int], str]:
    def make(size: int) -> str:
        return (unit * (size // len(unit) + 1))[:size]

    return make


def cjk(size: int) -> str:
    rng = random.Random(0)
    parts, total = [], 0
    while total < size:
        s = f"患者の状態は安定しており、検査{rng.randint(0, 999)}は正常であった。"
        parts.append(s)
        total += len(s)
    return "".join(parts)[:size]


INPUTS: dict[str, Callable[[int], str]] = {
    "clinical": clinical,
    "flowsheet": flowsheet,
    "dr": _repeat("Dr. "),
    "mrs": _repeat("Mrs. "),
    "dr-lines": _repeat("Dr.\n"),
    "cjk": cjk,
}
STAGES = ("segment", "build_context")

# --------------------------------------------------------------------------- child


CHILD = r"""
import json, sys, time
from budgetctx import build_context, get_tokenizer
from budgetctx.unitizers import segment_text
path, stage, budget = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = open(path, encoding="utf-8").read()
get_tokenizer("o200k_base").count("warm up")
w, c = time.perf_counter(), time.process_time()
if stage == "segment":
    n = len(segment_text(text))
    timings = {}
else:
    ctx = build_context(text, budget)
    assert ctx.tokens_used <= budget
    n = ctx.n_units
    timings = ctx.timings_ms
wall, cpu = time.perf_counter() - w, time.process_time() - c
hwm = 0.0
for line in open("/proc/self/status", encoding="ascii"):
    if line.startswith("VmHWM:"):
        hwm = int(line.split()[1]) / 1024
print(json.dumps({"wall": wall, "cpu": cpu, "units": n, "rss_mib": hwm, "timings": timings}))
"""


def run_child(path: Path, stage: str, timeout: float) -> dict[str, object] | None:
    try:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(path), stage, str(BUDGET)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        print(proc.stderr[-2000:], file=sys.stderr)
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed"}
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def slope(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Least-squares slope of log(y) against log(x)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    den = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / den if den else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[0.1, 0.5, 1, 5, 10])
    parser.add_argument("--inputs", nargs="+", choices=sorted(INPUTS), default=list(INPUTS))
    parser.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES))
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    args = parser.parse_args(argv)

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()}")
    header = f"{'input':<10} {'stage':<13} {'MB':>6} {'units':>8} {'wall s':>8} {'cpu s':>8}"
    header += f" {'cpu us/KB':>9} {'peak MiB':>9}  stages (ms)"
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.inputs:
            for stage in args.stages:
                print(header)
                sizes, cpus, rss = [], [], []
                for mb in args.sizes:
                    size = int(mb * MB)
                    path = Path(tmp) / f"{name}-{mb}.txt"
                    if not path.exists():
                        path.write_text(INPUTS[name](size), encoding="utf-8")
                    res = run_child(path, stage, args.timeout)
                    if res is None:
                        print(
                            f"{name:<10} {stage:<13} {mb:>6g} {'':>8} {'>' + str(args.timeout):>8}"
                        )
                        break
                    if "error" in res:
                        print(f"{name:<10} {stage:<13} {mb:>6g} error: {res['error']}")
                        break
                    cpu, wall = float(res["cpu"]), float(res["wall"])  # type: ignore[arg-type]
                    peak = float(res["rss_mib"])  # type: ignore[arg-type]
                    sizes.append(size)
                    cpus.append(cpu)
                    rss.append(peak)
                    timings = res.get("timings") or {}
                    stages = " ".join(
                        f"{k[:4]}={v:.0f}"
                        for k, v in timings.items()  # type: ignore[union-attr]
                        if k in ("unitize", "count", "represent", "select", "render")
                    )
                    print(
                        f"{name:<10} {stage:<13} {mb:>6g} {res['units']:>8} {wall:>8.2f} "
                        f"{cpu:>8.2f} {cpu * 1e6 / (size / 1000):>9.1f} {peak:>9.0f}  {stages}",
                        flush=True,
                    )
                k_cpu, k_rss = slope(sizes, cpus), slope(sizes, rss)
                fmt = lambda v: "n/a" if v is None else f"{v:.2f}"  # noqa: E731
                print(f"{name:<10} {stage:<13} exponent: cpu {fmt(k_cpu)}, peak RSS {fmt(k_rss)}")
                print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
