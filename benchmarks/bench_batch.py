"""Throughput of ``build_contexts`` on ~2k-token notes: contexts/s with 1 and 2 workers, the
per-item overhead of the batch machinery over ``build_context`` in a loop, and the projected
cost of a 10M-note run in core-hours.

Notes are MTSamples discharge summaries from the shared data (consecutive notes joined and cut
at a line boundary to ~2048 o200k_base tokens); the bundled sample note is used, likewise
joined, when the shared data is absent. Each configuration is timed ``--repeats`` times,
interleaved, and the median is reported. Informational only: nothing is asserted; the targets
are printed next to the figures and a missed one is flagged with "!".

    .venv/bin/python benchmarks/bench_batch.py                    # 40 notes, budget 512, mmr
    .venv/bin/python benchmarks/bench_batch.py --notes 80 --selector rcd --json out.json

On a busy machine the wall-clock speedup says little (other jobs take the second core);
``balance`` then says how evenly the pooled run's work fell on its workers: the sum of their
CPU time over (workers x the busiest one's), which is the speedup's ceiling from scheduling
alone on an idle machine (1.0 when they finish together). Each worker's CPU time is taken
around every chunk it runs (the benchmark wraps the pool's chunk function).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import resource
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import budgetctx
from budgetctx import build_context, build_contexts, get_tokenizer

REPO = Path(__file__).resolve().parents[1]
ENV_DATA = "BUDGETCTX_SHARED_DATA"
TARGET_SPEEDUP = 1.85
TARGET_OVERHEAD_PCT = 5.0
TARGET_TOKENS = 2048


def _source_texts() -> tuple[list[str], str]:
    data = Path(os.environ.get(ENV_DATA, REPO.parent / "shared" / "data"))
    path = data / "mtsamples_discharge" / "discharge_summaries.derived.jsonl"
    if path.is_file():
        with path.open(encoding="utf-8") as fh:
            return [json.loads(line)["text"] for line in fh if line.strip()], str(path)
    from budgetctx.data import sample_note

    return [sample_note()], "the bundled sample note"


def make_notes(n: int, tokens: int = TARGET_TOKENS) -> tuple[list[str], str]:
    """``n`` notes of about ``tokens`` tokens each, cut at line boundaries."""
    texts, source = _source_texts()
    tok = get_tokenizer("o200k_base")
    notes: list[str] = []
    i = 0
    while len(notes) < n:
        lines: list[str] = []
        used = 0
        while used < tokens:
            for line in texts[i % len(texts)].splitlines():
                cost = tok.count(line + "\n")
                if used + cost > tokens:
                    used = tokens
                    break
                lines.append(line)
                used += cost
            i += 1
        notes.append("\n".join(lines))
    return notes, source


def _timed(fn: Callable[[], Any]) -> tuple[float, float, float]:
    """Wall seconds, this process's CPU seconds, and CPU seconds of children that ended."""
    w, c = time.perf_counter(), time.process_time()
    k = _children_cpu()
    fn()
    return time.perf_counter() - w, time.process_time() - c, _children_cpu() - k


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


_CHUNK_LOG = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_batch_chunks_{os.getpid()}.log"


def _log_worker_cpu() -> None:
    """Wrap the pool's chunk function so that each worker appends ``pid cpu_seconds`` per
    chunk to _CHUNK_LOG (workers are forked, so they inherit the wrapper)."""
    from budgetctx.batch import _build

    run_chunk = _build._run_chunk

    def logged(entries: list[Any]) -> list[Any]:
        start = time.process_time()
        out = run_chunk(entries)
        with _CHUNK_LOG.open("a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()} {time.process_time() - start}\n")
        return out

    logged.__module__, logged.__qualname__ = _build.__name__, "_run_chunk"
    _build._run_chunk = logged  # type: ignore[assignment]


def _balance() -> float:
    """Sum of the workers' CPU over (workers x the busiest one's), from _CHUNK_LOG."""
    per: dict[str, float] = {}
    for line in _CHUNK_LOG.read_text(encoding="utf-8").splitlines():
        pid, seconds = line.split()
        per[pid] = per.get(pid, 0.0) + float(seconds)
    return sum(per.values()) / (len(per) * max(per.values()))


def run(n_notes: int, budget: int, selector: str, repeats: int) -> dict[str, Any]:
    _log_worker_cpu()
    notes, source = make_notes(n_notes)
    tok = get_tokenizer("o200k_base")
    lengths = [tok.count(x) for x in notes]
    opts = {"selector": selector}

    def loop() -> None:
        for x in notes:
            build_context(x, budget, **opts)

    def batch(workers: int) -> Callable[[], None]:
        def go() -> None:
            for _ in build_contexts(notes, budget, workers=workers, **opts):
                pass

        return go

    # Warm up every path once (tokenizer ranks, the pool's first fork).
    build_context(notes[0], budget, **opts)
    list(build_contexts(notes[:4], budget, workers=2, **opts))
    load_before = os.getloadavg()
    wall: dict[str, list[float]] = {"loop": [], "batch1": [], "batch2": []}
    cpu: dict[str, list[float]] = {"loop": [], "batch1": [], "batch2": []}
    main_cpu: list[float] = []  # the parent's share of the pooled run: the machinery
    balance: list[float] = []
    for rep in range(repeats):
        # Alternate the order so that a change in the machine's load hits every path alike.
        order = ["loop", "batch1", "batch2"] if rep % 2 == 0 else ["batch2", "batch1", "loop"]
        for key in order:
            fn = loop if key == "loop" else batch(int(key[-1]))
            _CHUNK_LOG.write_text("", encoding="utf-8")
            w, c, children = _timed(fn)
            wall[key].append(w)
            cpu[key].append(c + children)  # the pool's workers end with the generator
            if key == "batch2":
                main_cpu.append(c)
                balance.append(_balance())
    load_after = os.getloadavg()
    _CHUNK_LOG.unlink(missing_ok=True)
    med = {k: statistics.median(v) for k, v in wall.items()}
    cpu_med = {k: statistics.median(v) for k, v in cpu.items()}
    per_item_ms = {k: 1000.0 * v / n_notes for k, v in med.items()}
    cpu_item_ms = {k: 1000.0 * v / n_notes for k, v in cpu_med.items()}

    # What a process pool adds per item: the note pickled out, the Context pickled back.
    ctxs = [build_context(x, budget, **opts) for x in notes]
    t = time.process_time()
    for x, c in zip(notes, ctxs, strict=True):
        pickle.loads(pickle.dumps(x))
        pickle.loads(pickle.dumps(c))
    ipc_ms = 1000.0 * (time.process_time() - t) / n_notes
    context_kib = statistics.median(len(pickle.dumps(c)) for c in ctxs) / 1024

    speedup = med["batch1"] / med["batch2"]
    # On an idle machine two workers share the total CPU work of the pooled run.
    est_speedup = cpu_med["batch1"] / (cpu_med["batch2"] / 2)
    s_per_ctx_1core = cpu_med["batch1"] / n_notes
    return {
        "budgetctx": budgetctx.__version__,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
        "source": source,
        "notes": n_notes,
        "tokens_median": int(statistics.median(lengths)),
        "budget": budget,
        "selector": selector,
        "repeats": repeats,
        "wall_seconds": {k: [round(x, 3) for x in v] for k, v in wall.items()},
        "cpu_seconds": {k: [round(x, 3) for x in v] for k, v in cpu.items()},
        "per_item_ms": {k: round(v, 2) for k, v in per_item_ms.items()},
        "cpu_per_item_ms": {k: round(v, 2) for k, v in cpu_item_ms.items()},
        "contexts_per_s": {
            "loop": round(n_notes / med["loop"], 2),
            "workers_1": round(n_notes / med["batch1"], 2),
            "workers_2": round(n_notes / med["batch2"], 2),
        },
        "speedup_2_over_1": round(speedup, 3),
        "speedup_2_over_1_cpu_estimate": round(est_speedup, 3),
        "balance_2_workers": [round(x, 3) for x in balance],
        # the busiest worker sets the wall time: the CPU estimate scaled by the balance
        "speedup_2_over_1_projected": round(est_speedup * statistics.median(balance), 3),
        "serial_overhead_cpu_ms": round(cpu_item_ms["batch1"] - cpu_item_ms["loop"], 3),
        "serial_overhead_pct": round(
            100.0 * (cpu_item_ms["batch1"] - cpu_item_ms["loop"]) / cpu_item_ms["loop"], 2
        ),
        "pool_overhead_cpu_ms": round(cpu_item_ms["batch2"] - cpu_item_ms["batch1"], 3),
        "pool_overhead_pct": round(
            100.0 * (cpu_item_ms["batch2"] - cpu_item_ms["batch1"]) / cpu_item_ms["loop"], 2
        ),
        "pool_pickling_ms": round(ipc_ms, 3),
        "pool_parent_cpu_ms": round(1000.0 * statistics.median(main_cpu) / n_notes, 3),
        "context_pickle_kib": round(context_kib, 1),
        "projection_10M": {
            "core_seconds_per_context": round(s_per_ctx_1core, 4),
            "core_hours": round(10_000_000 * s_per_ctx_1core / 3600.0, 1),
        },
    }


def _print(r: dict[str, Any]) -> None:
    def flag(ok: bool) -> str:
        return "" if ok else " !"

    cps, cpu = r["contexts_per_s"], r["cpu_per_item_ms"]
    print(
        f"budgetctx {r['budgetctx']}, Python {r['python']}, {r['cpus']} CPUs, load average "
        f"{r['loadavg_before'][0]} before / {r['loadavg_after'][0]} after"
    )
    print(
        f"{r['notes']} notes of ~{r['tokens_median']} tokens ({r['source']}), budget "
        f"{r['budget']}, selector {r['selector']}, median of {r['repeats']} runs"
    )
    for key, label in (("loop", "build_context loop"), ("workers_1", "build_contexts w=1")):
        k = "loop" if key == "loop" else "batch1"
        print(f"  {label} : {cps[key]:8.2f} contexts/s wall, {cpu[k]:7.2f} CPU-ms per context")
    print(
        f"  build_contexts w=2 : {cps['workers_2']:8.2f} contexts/s wall, {cpu['batch2']:7.2f}"
        " CPU-ms per context (main + workers)"
    )
    sp, est = r["speedup_2_over_1"], r["speedup_2_over_1_cpu_estimate"]
    print(
        f"  speedup 2 workers / 1: {sp:.2f}x wall{flag(sp >= TARGET_SPEEDUP)}; "
        f"{est:.2f}x from CPU time (an idle 2-core machine){flag(est >= TARGET_SPEEDUP)} "
        f"(target >= {TARGET_SPEEDUP}x)"
    )
    bal, proj = r["balance_2_workers"], r["speedup_2_over_1_projected"]
    print(
        f"  balance of the 2 workers' CPU (1.0: they finish together): "
        f"{' '.join(f'{b:.3f}' for b in bal)}; median {statistics.median(bal):.3f}; projected "
        f"speedup on an idle machine (CPU estimate x balance) {proj:.2f}x"
        f"{flag(proj >= TARGET_SPEEDUP)}"
    )
    so, po = r["serial_overhead_pct"], r["pool_overhead_pct"]
    print(
        f"  overhead per item (CPU): serial {r['serial_overhead_cpu_ms']:+.2f} ms ({so:+.1f} %)"
        f"{flag(so < TARGET_OVERHEAD_PCT)}, pool {r['pool_overhead_cpu_ms']:+.2f} ms "
        f"({po:+.1f} %){flag(po < TARGET_OVERHEAD_PCT)}; pickling alone "
        f"{r['pool_pickling_ms']:.2f} ms (Context {r['context_pickle_kib']} KiB), parent "
        f"{r['pool_parent_cpu_ms']:.2f} ms "
        f"(target < {TARGET_OVERHEAD_PCT} %)"
    )
    p = r["projection_10M"]
    print(
        f"  10M notes: {p['core_seconds_per_context'] * 1000:.1f} core-ms each -> "
        f"{p['core_hours']:,.0f} core-hours"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=40)
    parser.add_argument("--budget", type=int, default=512)
    parser.add_argument("--selector", default="mmr")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="Also write the results here.")
    args = parser.parse_args()
    result = run(args.notes, args.budget, args.selector, args.repeats)
    _print(result)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
