"""Latency and peak memory of ``build_context`` for every selector on ~2k/16k/64k-token documents.

Documents are real text from the shared datasets: MTSamples discharge notes concatenated (~2k
tokens; the first ~2k tokens of L-Eval inputs when MTSamples is absent) and L-Eval inputs
concatenated and cut at a line boundary (~16k, ~64k tokens). "k" means 1024 o200k_base tokens.

For every (size, selector, budget) it warms up once, times ``--repeats`` calls per document with
``time.perf_counter`` around ``build_context`` and reports the median and p95 (nearest rank) of
the pooled calls, the median per-stage breakdown from ``ctx.timings_ms``, the ratio to one
``tok.count(document)`` and the peak RSS of a fresh subprocess that ran that measurement (its own
VmHWM: ``ru_maxrss`` of a child can include its parent's pages from before ``exec``).
Informational only: nothing is asserted; targets are printed next to the results and rows that
miss one are flagged with "!".

    .venv/bin/python benchmarks/bench_build_context.py              # the grid (~2k/16k/64k)
    .venv/bin/python benchmarks/bench_build_context.py --scaling    # + RCD at 8k..64k tokens
    .venv/bin/python benchmarks/bench_build_context.py --huge --no-grid   # ~5 MB document only
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import budgetctx
from budgetctx import build_context, get_tokenizer, list_selectors
from budgetctx.tokenizers import Tokenizer

REPO = Path(__file__).resolve().parents[1]
ENV_DATA = "BUDGETCTX_SHARED_DATA"
TOKENIZER = "o200k_base"
STAGES = ("unitize", "count", "represent", "select", "render")
STAGE_ABBR = {
    "unitize": "unit",
    "count": "cnt",
    "represent": "repr",
    "select": "sel",
    "render": "rend",
}
DEFAULT_SIZES = ("2k", "16k", "64k")
DEFAULT_DOCS = {"2k": 5, "16k": 3, "64k": 2}
DEFAULT_REPEATS = {"2k": 7, "16k": 5, "64k": 3}
DEFAULT_BUDGETS: dict[str, tuple[int, ...]] = {"2k": (512,), "16k": (2048,), "64k": (2048, 8192)}
# size label -> (median target in ms, selectors it applies to; None = every selector)
TARGETS_MS: dict[str, tuple[float, frozenset[str] | None]] = {
    "2k": (25.0, None),
    "16k": (400.0, None),
    "64k": (3000.0, frozenset({"rcd"})),
}
SCALING_SIZES = ("8k", "16k", "32k", "64k")
HUGE_SELECTORS = ("lead", "mmr", "rcd", "facility", "graphcluster")
HUGE_BUDGET = 4096
HUGE_RSS_LIMIT_MIB = 1024.0
SHORT_DOC_TOKENS = 4096  # sizes up to this use MTSamples notes when available


# --------------------------------------------------------------------------- measurement (child)


def peak_rss() -> dict[str, float]:
    """This process's peak RSS in MiB: VmHWM (Linux) and ru_maxrss where available."""
    out: dict[str, float] = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                out["vmhwm_mib"] = int(line.split()[1]) / 1024.0
    except OSError:
        pass
    try:
        import resource

        ru = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out["ru_maxrss_mib"] = ru / 2**20 if sys.platform == "darwin" else ru / 1024.0
    except ImportError:
        pass
    return out


def measure(
    docs: Sequence[str],
    selector: str,
    budget: int,
    repeats: int,
    warmup_chars: int | None = None,
) -> dict[str, Any]:
    """Warm up once, then time ``repeats`` calls of ``build_context`` on every document."""
    warm_text = docs[0] if warmup_chars is None else docs[0][:warmup_chars]
    t0 = time.perf_counter()
    build_context(warm_text, budget, tokenizer=TOKENIZER, selector=selector)
    warmup_ms = (time.perf_counter() - t0) * 1000.0
    totals: list[list[float]] = []
    stages: list[list[dict[str, float]]] = []
    tokens: list[int] = []
    units: list[int] = []
    used: list[int] = []
    for doc in docs:
        per_doc: list[float] = []
        per_stage: list[dict[str, float]] = []
        for _ in range(repeats):
            t = time.perf_counter()
            ctx = build_context(doc, budget, tokenizer=TOKENIZER, selector=selector)
            per_doc.append((time.perf_counter() - t) * 1000.0)
            per_stage.append(dict(ctx.timings_ms))
        totals.append(per_doc)
        stages.append(per_stage)
        tokens.append(ctx.document_tokens)
        units.append(ctx.n_units)
        used.append(ctx.tokens_used)
    return {
        "warmup_ms": warmup_ms,
        "totals_ms": totals,
        "stages_ms": stages,
        "tokens": tokens,
        "units": units,
        "tokens_used": used,
    }


def child_main(spec_path: str) -> int:
    """Run one measurement described by a JSON spec and print one JSON line with its results."""
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    docs: list[str] = json.loads(Path(spec["docs_path"]).read_text(encoding="utf-8"))
    if spec.get("baseline"):
        # What an idle measurement process holds: interpreter, budgetctx, tokenizer ranks, docs.
        build_context(docs[0][:2000], 64, tokenizer=TOKENIZER, selector="lead")
        result: dict[str, Any] = {}
    else:
        result = measure(
            docs, spec["selector"], spec["budget"], spec["repeats"], spec.get("warmup_chars")
        )
    result.update(peak_rss())
    print(json.dumps(result))
    return 0


# --------------------------------------------------------------------------- documents


def parse_size(label: str) -> int:
    s = label.strip().lower()
    if s.endswith("k"):
        return int(float(s[:-1]) * 1024)
    return int(s)


def load_leval(folder: Path) -> list[str]:
    seen: set[str] = set()
    docs: list[str] = []
    for path in sorted(folder.glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                text = json.loads(line).get("input") or ""
                if text.strip() and text not in seen:
                    seen.add(text)
                    docs.append(text)
    return docs


def load_mtsamples(path: Path) -> list[str]:
    if not path.is_file():
        return []
    notes: list[str] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                text = json.loads(line).get("text") or ""
                if text.strip():
                    notes.append(text.strip())
    return notes


def cut_to_tokens(tok: Tokenizer, text: str, target: int) -> str:
    """The longest prefix of ``text`` within ``target`` tokens that ends at a line (else a
    sentence) boundary, as long as that keeps >= 85% of the prefix."""
    prefix = tok.truncate(text, target)
    if len(prefix) == len(text):
        return text.rstrip()
    floor = int(len(prefix) * 0.85)
    cut = prefix.rfind("\n")
    if cut < floor:
        cut = max(prefix.rfind(p) + 1 for p in (". ", "? ", "! ", ".\n"))
    if cut < floor:
        cut = len(prefix)
    return prefix[:cut].rstrip()


def make_docs(tok: Tokenizer, pieces: Iterator[str], target: int, n: int) -> list[str]:
    """``n`` documents of about ``target`` tokens, each from its own consecutive pieces."""
    docs: list[str] = []
    for _ in range(n):
        parts: list[str] = []
        have = 0
        for piece in pieces:
            parts.append(piece)
            have += tok.count(piece) + 1
            if have >= target:
                break
        if have < int(target * 0.9):
            break  # the data ran out: fewer documents
        docs.append(cut_to_tokens(tok, "\n\n".join(parts), target))
    return docs


@dataclass
class Corpus:
    leval: list[str]
    notes: list[str]
    seed: int
    _leval_iter: Iterator[str] = field(init=False)
    _notes_iter: Iterator[str] = field(init=False)

    def __post_init__(self) -> None:
        shuffled = list(self.leval)
        random.Random(self.seed).shuffle(shuffled)  # mixes genres; deterministic
        self._leval_iter = iter(shuffled)
        self._notes_iter = iter(self.notes)

    def docs(self, tok: Tokenizer, target: int, n: int) -> tuple[list[str], str]:
        """Distinct documents: no input or note is used twice in one run."""
        if target <= SHORT_DOC_TOKENS and self.notes:
            docs = make_docs(tok, self._notes_iter, target, n)
            if len(docs) == n:
                return docs, "MTSamples discharge notes, concatenated"
            return docs + make_docs(tok, self._leval_iter, target, n - len(docs)), "mixed"
        if target <= SHORT_DOC_TOKENS:
            # One L-Eval input per document, its first `target` tokens.
            out = [cut_to_tokens(tok, next(self._leval_iter), target) for _ in range(n)]
            return out, "L-Eval inputs, prefix"
        return make_docs(tok, self._leval_iter, target, n), "L-Eval inputs, concatenated"


def huge_document(leval: Sequence[str], megabytes: float) -> str:
    """All L-Eval inputs (file order) joined, repeated if needed, cut at a newline near the
    target size in UTF-8 bytes."""
    target = int(megabytes * 1_000_000)
    parts: list[str] = []
    size = 0
    while size < target:
        for text in leval:
            parts.append(text)
            size += len(text.encode("utf-8")) + 2
            if size >= target:
                break
    doc = "\n\n".join(parts)
    raw = doc.encode("utf-8")[:target].decode("utf-8", errors="ignore")
    cut = raw.rfind("\n")
    return raw[:cut] if cut > len(raw) * 0.9 else raw


# --------------------------------------------------------------------------- running


@dataclass
class Row:
    size: str
    selector: str
    budget: int
    tokens: list[int]
    units: list[int]
    totals: list[float]  # pooled over documents and repeats
    stages: dict[str, float]  # median per stage (ms)
    used_max: int
    load1: float
    peak_mib: float | None = None
    error: str | None = None
    per_doc: list[list[float]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.totals) if self.totals else math.nan

    @property
    def doc_medians(self) -> list[float]:
        return [statistics.median(d) for d in self.per_doc if d]

    @property
    def p95(self) -> float:
        if not self.totals:
            return math.nan
        ordered = sorted(self.totals)
        return ordered[max(math.ceil(0.95 * len(ordered)) - 1, 0)]


def median_stages(stages: Sequence[Sequence[Mapping[str, float]]]) -> dict[str, float]:
    flat = [s for per_doc in stages for s in per_doc]
    out: dict[str, float] = {}
    for name in (*STAGES, "total"):
        values = [s[name] for s in flat if name in s]
        if values:
            out[name] = statistics.median(values)
    return out


class Runner:
    """Runs measurements in fresh subprocesses (peak RSS) or in this process."""

    def __init__(self, workdir: Path, *, subprocesses: bool, timeout: float) -> None:
        self.workdir = workdir
        self.subprocesses = subprocesses
        self.timeout = timeout
        self._n = 0
        self.rss_sources: set[str] = set()
        self.max_rss_gap = 0.0  # ru_maxrss - VmHWM, when both are known

    def write_docs(self, docs: Sequence[str]) -> Path:
        self._n += 1
        path = self.workdir / f"docs{self._n}.json"
        path.write_text(json.dumps(list(docs)), encoding="utf-8")
        return path

    def _child(self, spec: dict[str, Any]) -> dict[str, Any]:
        self._n += 1
        spec_path = self.workdir / f"spec{self._n}.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        try:
            proc = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--child", str(spec_path)],
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return {"error": f"timeout after {self.timeout:.0f} s"}
        if proc.returncode != 0 or not proc.stdout.strip():
            tail = (proc.stderr or "").strip().splitlines()[-1:] or ["no output"]
            return {"error": f"child exit {proc.returncode}: {tail[0][:160]}"}
        result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
        if "vmhwm_mib" in result:
            result["peak_mib"] = result["vmhwm_mib"]
            self.rss_sources.add("VmHWM")
            if "ru_maxrss_mib" in result:
                gap = result["ru_maxrss_mib"] - result["vmhwm_mib"]
                self.max_rss_gap = max(self.max_rss_gap, gap)
        elif "ru_maxrss_mib" in result:
            result["peak_mib"] = result["ru_maxrss_mib"]
            self.rss_sources.add("ru_maxrss")
        return result

    def baseline(self, docs_path: Path) -> float | None:
        if not self.subprocesses:
            return None
        result = self._child({"docs_path": str(docs_path), "baseline": True})
        peak = result.get("peak_mib")
        return float(peak) if peak is not None else None

    def run(
        self,
        size: str,
        docs: Sequence[str],
        docs_path: Path,
        selector: str,
        budget: int,
        repeats: int,
        warmup_chars: int | None = None,
        *,
        force_subprocess: bool = False,
    ) -> Row:
        load1 = os.getloadavg()[0]
        if self.subprocesses or force_subprocess:
            result = self._child(
                {
                    "docs_path": str(docs_path),
                    "selector": selector,
                    "budget": budget,
                    "repeats": repeats,
                    "warmup_chars": warmup_chars,
                }
            )
        else:
            try:
                result = measure(docs, selector, budget, repeats, warmup_chars)
            except Exception as exc:  # a benchmark reports, it does not stop
                result = {"error": f"{type(exc).__name__}: {exc}"[:200]}
        if "error" in result:
            return Row(size, selector, budget, [], [], [], {}, 0, load1, error=result["error"])
        return Row(
            size=size,
            selector=selector,
            budget=budget,
            tokens=result["tokens"],
            units=result["units"],
            totals=[t for per_doc in result["totals_ms"] for t in per_doc],
            stages=median_stages(result["stages_ms"]),
            used_max=max(result["tokens_used"]),
            load1=load1,
            peak_mib=result.get("peak_mib"),
            per_doc=result["totals_ms"],
            extra={"warmup_ms": result["warmup_ms"]},
        )


def tokenize_ms(tok: Tokenizer, docs: Sequence[str], repeats: int) -> float:
    """Median time of one ``tok.count(document)``, pooled over documents."""
    tok.count(docs[0])
    samples: list[float] = []
    for doc in docs:
        for _ in range(max(repeats, 3)):
            t = time.perf_counter()
            tok.count(doc)
            samples.append((time.perf_counter() - t) * 1000.0)
    return statistics.median(samples)


# --------------------------------------------------------------------------- formatting


def fmt_ms(v: float) -> str:
    if math.isnan(v):
        return "-"
    if v >= 1000:
        return f"{v:,.0f}"
    return f"{v:.2f}" if v < 10 else f"{v:.1f}"


def fmt_range(values: Sequence[int]) -> str:
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"


def fmt_stages(stages: Mapping[str, float]) -> str:
    parts = [f"{STAGE_ABBR[s]} {fmt_ms(stages[s])}" for s in STAGES if s in stages]
    return " / ".join(parts) if parts else "-"


def dominant_stage(stages: Mapping[str, float]) -> tuple[str, float]:
    present = {s: stages[s] for s in STAGES if s in stages}
    if not present:
        return "-", 0.0
    name = max(present, key=lambda s: present[s])
    total = stages.get("total") or sum(present.values())
    return name, (100.0 * present[name] / total) if total else 0.0


def describe_dominant(stages: Mapping[str, float]) -> str:
    name, share = dominant_stage(stages)
    return f"{name} {fmt_ms(stages.get(name, math.nan))} ms ({share:.0f}% of total)"


def target_for(size: str, selector: str) -> float | None:
    spec = TARGETS_MS.get(size)
    if spec is None:
        return None
    ms, who = spec
    return ms if who is None or selector in who else None


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    print("| " + " | ".join(headers) + " |")
    print("|" + "|".join("---" for _ in headers) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def source_state() -> str:
    """Commit, whether src/ is modified, and a digest of the source files actually imported."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        commit, dirty = "?", ""
    digest = hashlib.sha1()
    package = Path(budgetctx.__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    state = f"{len(dirty.splitlines())} file(s) under src/ modified" if dirty else "clean src/"
    return f"{commit or '?'} ({state}; source digest {digest.hexdigest()[:10]})"


def machine_facts(data_dir: Path) -> str:
    load = os.getloadavg()
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    source = source_state()
    import numpy as np

    print("## Machine")
    print()
    print(
        f"- python {platform.python_version()} ({platform.python_implementation()}), "
        f"{platform.platform()}"
    )
    print(f"- cpu_count {os.cpu_count()}, usable CPUs {affinity}")
    print(f"- budgetctx {budgetctx.__version__}, numpy {np.__version__}, tokenizer {TOKENIZER}")
    print(f"- repo commit {source}")
    print(f"- data {data_dir}")
    print(f"- load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print()
    return source


# --------------------------------------------------------------------------- sections


def parse_size_map(values: Sequence[str] | None, kind: str) -> dict[str, str]:
    """``["2k=5", "64k=2"]`` -> {"2k": "5", "64k": "2"}; a bare value applies to every size."""
    out: dict[str, str] = {}
    for value in values or ():
        if "=" in value:
            size, _, v = value.partition("=")
            out[size.strip().lower()] = v.strip()
        else:
            out["*"] = value.strip()
    for v in out.values():
        if not v:
            raise SystemExit(f"--{kind}: empty value")
    return out


def per_size(mapping: dict[str, str], size: str, default: str) -> str:
    return mapping.get(size, mapping.get("*", default))


def run_grid(
    args: argparse.Namespace,
    tok: Tokenizer,
    corpus: Corpus,
    runner: Runner,
    selectors: Sequence[str],
) -> None:
    budgets_map = parse_size_map(args.budgets, "budgets")
    repeats_map = parse_size_map(args.repeats, "repeats")
    docs_map = parse_size_map(args.docs, "docs")
    sizes = [s.lower() for s in args.sizes]

    doc_rows: list[list[str]] = []
    rows: list[Row] = []
    tok_ms: dict[str, float] = {}
    baselines: dict[str, float | None] = {}
    for size in sizes:
        n_tokens = parse_size(size)
        n_docs = int(per_size(docs_map, size, str(DEFAULT_DOCS.get(size, 2))))
        repeats = int(per_size(repeats_map, size, str(DEFAULT_REPEATS.get(size, 3))))
        default_budgets = ",".join(str(b) for b in DEFAULT_BUDGETS.get(size, (2048,)))
        budgets = [int(b) for b in per_size(budgets_map, size, default_budgets).split(",")]
        docs, source = corpus.docs(tok, n_tokens, n_docs)
        if not docs:
            print(f"(size {size}: not enough data for one document, skipped)")
            continue
        counts = [tok.count(d) for d in docs]
        tok_ms[size] = tokenize_ms(tok, docs, repeats)
        doc_rows.append(
            [
                size,
                str(len(docs)),
                fmt_range(counts),
                fmt_range([len(d) for d in docs]),
                source,
                fmt_ms(tok_ms[size]),
            ]
        )
        docs_path = runner.write_docs(docs)
        baselines[size] = runner.baseline(docs_path)
        for selector in selectors:
            for budget in budgets:
                print(
                    f"[grid] {size} {selector} budget={budget} x{repeats} on {len(docs)} docs",
                    file=sys.stderr,
                    flush=True,
                )
                rows.append(runner.run(size, docs, docs_path, selector, budget, repeats))

    print("## Documents")
    print()
    print_table(
        ["size", "docs", "tokens (o200k)", "chars", "source", "tokenize ms (median)"], doc_rows
    )
    print()
    if runner.subprocesses:
        idle = ", ".join(
            f"{s}: {v:.0f} MiB" if v is not None else f"{s}: ?" for s, v in baselines.items()
        )
        print(f"Idle measurement process (imports + tokenizer + docs, tiny call): {idle}")
        print()

    print("## build_context latency")
    print()
    print(
        "Targets: every selector median < 25 ms at ~2k tokens and < 400 ms at ~16k tokens; "
        "rcd median < 3 s at ~64k tokens. '!' marks a miss."
    )
    print()
    table: list[list[str]] = []
    for r in rows:
        target = target_for(r.size, r.selector)
        if r.error:
            table.append([r.size, "-", "-", r.selector, str(r.budget), f"! {r.error}"] + ["-"] * 8)
            continue
        med = r.median
        if target is None:
            verdict = "-"
        elif med < target:
            verdict = f"<{target:g} ok"
        else:
            verdict = f"<{target:g} ! x{med / target:.2f}"
        if target is not None and med < target and max(r.doc_medians) >= target:
            verdict += f" (worst doc x{max(r.doc_medians) / target:.2f})"
        ratio = med / tok_ms[r.size] if tok_ms.get(r.size) else math.nan
        peak = f"{r.peak_mib:.0f}" if r.peak_mib is not None else "n/a"
        if r.used_max > r.budget:
            verdict += f" (used {r.used_max} > budget)"
        table.append(
            [
                r.size,
                fmt_range(r.tokens),
                fmt_range(r.units),
                r.selector,
                str(r.budget),
                ("! " if verdict.startswith("<") and "!" in verdict else "") + fmt_ms(med),
                fmt_ms(r.p95),
                fmt_ms(min(r.totals)),
                " / ".join(fmt_ms(m) for m in r.doc_medians),
                f"{ratio:.1f}",
                peak,
                fmt_stages(r.stages),
                verdict,
                f"{r.load1:.2f}",
            ]
        )
    print_table(
        [
            "size",
            "tokens",
            "units",
            "selector",
            "budget",
            "median ms",
            "p95 ms",
            "min ms",
            "per-doc median ms",
            "x tokenize",
            "peak MiB",
            "stage medians ms",
            "target",
            "load1",
        ],
        table,
    )
    print()
    n_samples = {r.size: len(r.totals) for r in rows if r.totals}
    print(
        "Samples per row (documents x repeats): "
        + ", ".join(f"{s}: {n}" for s, n in n_samples.items())
        + ". p95 is nearest-rank; min is the least-contended call. 'x tokenize' = median total / "
        "median tok.count(document). Stage medians come from ctx.timings_ms."
    )
    print()

    misses = []
    for r in rows:
        target = target_for(r.size, r.selector)
        if target is not None and r.totals and r.median >= target:
            misses.append((r, target))
    print("## Targets missed")
    print()
    if not misses:
        print("None: every targeted row is under its target.")
    else:
        print_table(
            ["size", "selector", "budget", "median ms", "target ms", "over by", "dominant stage"],
            [
                [
                    r.size,
                    r.selector,
                    str(r.budget),
                    fmt_ms(r.median),
                    fmt_ms(t),
                    f"+{fmt_ms(r.median - t)} ms (x{r.median / t:.2f})",
                    describe_dominant(r.stages),
                ]
                for r, t in misses
            ],
        )
    print()
    spread = [
        (r, t)
        for r in rows
        if (t := target_for(r.size, r.selector)) is not None
        and r.totals
        and r.median < t
        and max(r.doc_medians) >= t
    ]
    if spread:
        print("Under target on the pooled median, but with a document whose own median is over:")
        print()
        print_table(
            ["size", "selector", "budget", "per-doc median ms", "units per doc", "target ms"],
            [
                [
                    r.size,
                    r.selector,
                    str(r.budget),
                    " / ".join(fmt_ms(m) for m in r.doc_medians),
                    " / ".join(f"{u:,}" for u in r.units),
                    fmt_ms(t),
                ]
                for r, t in spread
            ],
        )
        print()


def run_scaling(args: argparse.Namespace, tok: Tokenizer, corpus: Corpus, runner: Runner) -> None:
    sizes = list(SCALING_SIZES)
    biggest = max(parse_size(s) for s in sizes)
    found = corpus.docs(tok, biggest, 1)[0]
    if not found:
        print("(scaling: not enough data)")
        return
    base = found[0]
    rows: list[Row] = []
    for size in sizes:
        doc = cut_to_tokens(tok, base, parse_size(size))
        docs_path = runner.write_docs([doc])
        print(f"[scaling] {size} {args.scaling_selector}", file=sys.stderr, flush=True)
        rows.append(
            runner.run(
                size,
                [doc],
                docs_path,
                args.scaling_selector,
                args.scaling_budget,
                args.scaling_repeats,
            )
        )
    print(
        f"## Scaling: {args.scaling_selector}, budget {args.scaling_budget}, prefixes of one "
        f"~{sizes[-1]}-token document, {args.scaling_repeats} repeats"
    )
    print()
    table: list[list[str]] = []
    prev: Row | None = None
    for r in rows:
        if r.error or not r.totals:
            table.append([r.size, "-", "-", f"! {r.error}"] + ["-"] * 6)
            continue
        units = r.units[0]
        growth = "-"
        if prev is not None and prev.totals:
            growth = f"{math.log(r.median / prev.median) / math.log(units / prev.units[0]):.2f}"
        sel = r.stages.get("select", math.nan)
        table.append(
            [
                r.size,
                f"{r.tokens[0]:,}",
                f"{units:,}",
                fmt_ms(r.median),
                f"{1000.0 * r.median / units:.1f}",
                f"{1000.0 * sel / units:.1f}",
                growth,
                f"{r.peak_mib:.0f}" if r.peak_mib is not None else "n/a",
                fmt_stages(r.stages),
                f"{r.load1:.2f}",
            ]
        )
        prev = r
    print_table(
        [
            "size",
            "tokens",
            "units",
            "median ms",
            "us / unit (total)",
            "us / unit (select)",
            "growth exponent vs previous",
            "peak MiB",
            "stage medians ms",
            "load1",
        ],
        table,
    )
    print()
    ok = [r for r in rows if r.totals]
    if len(ok) >= 2:
        first, last = ok[0], ok[-1]
        span = math.log(last.units[0] / first.units[0])
        k_total = math.log(last.median / first.median) / span
        sel_first, sel_last = first.stages.get("select"), last.stages.get("select")
        k_sel = f"{math.log(sel_last / sel_first) / span:.2f}" if sel_first and sel_last else "-"
        print(
            f"Overall {first.size} -> {last.size}: units x{last.units[0] / first.units[0]:.2f}, "
            f"total x{last.median / first.median:.2f} (exponent {k_total:.2f}), "
            f"select exponent {k_sel}."
        )
    print("Growth exponent k: total ~ units^k between consecutive sizes (1 = linear).")
    print()


def run_huge(args: argparse.Namespace, leval: Sequence[str], runner: Runner) -> None:
    doc = huge_document(leval, args.huge_mb)
    docs_path = runner.write_docs([doc])
    n_bytes = len(doc.encode("utf-8"))
    rows: list[Row] = []
    for selector in HUGE_SELECTORS:
        print(f"[huge] {selector}", file=sys.stderr, flush=True)
        rows.append(
            runner.run(
                "huge",
                [doc],
                docs_path,
                selector,
                HUGE_BUDGET,
                1,
                warmup_chars=20_000,
                force_subprocess=True,
            )
        )
    print(
        f"## Huge document: {n_bytes / 1e6:.2f} MB ({len(doc):,} chars) of concatenated L-Eval "
        f"inputs, budget {HUGE_BUDGET}, one call per selector, each in a fresh subprocess"
    )
    print()
    print(f"Requirement: peak RSS < {HUGE_RSS_LIMIT_MIB:.0f} MiB (1 GiB). '!' marks a miss.")
    print()
    table: list[list[str]] = []
    for r in rows:
        if r.error or not r.totals:
            table.append([r.selector, "-", "-", "-", f"! {r.error}", "-", "-", "-", "-"])
            continue
        peak = r.peak_mib
        verdict = "?" if peak is None else ("ok" if peak < HUGE_RSS_LIMIT_MIB else "! over 1 GiB")
        table.append(
            [
                r.selector,
                f"{r.tokens[0]:,}",
                f"{r.units[0]:,}",
                f"{r.used_max:,}",
                fmt_ms(r.median),
                f"{peak:.0f}" if peak is not None else "n/a",
                verdict,
                fmt_stages(r.stages),
                f"{r.load1:.2f}",
            ]
        )
    print_table(
        [
            "selector",
            "doc tokens",
            "units",
            "tokens used",
            "time ms",
            "peak MiB",
            "< 1 GiB",
            "stage ms",
            "load1",
        ],
        table,
    )
    print()


# --------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    doc = __doc__ or ""
    parser = argparse.ArgumentParser(
        description=doc.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default_data = Path(os.environ.get(ENV_DATA, REPO.parent / "shared" / "data"))
    parser.add_argument(
        "--data-dir", type=Path, default=default_data, help=f"shared data (env {ENV_DATA})"
    )
    parser.add_argument(
        "--sizes", nargs="+", default=list(DEFAULT_SIZES), help="document sizes, e.g. 2k 16k 64k"
    )
    parser.add_argument(
        "--budgets",
        nargs="+",
        metavar="SIZE=B[,B]",
        help="budgets per size (default 2k=512 16k=2048 64k=2048,8192); a bare list applies to all",
    )
    parser.add_argument(
        "--repeats",
        nargs="+",
        metavar="[SIZE=]N",
        help="timed calls per document (default 2k=7 16k=5 64k=3)",
    )
    parser.add_argument(
        "--docs",
        nargs="+",
        metavar="[SIZE=]N",
        help="documents per size (default 2k=5 16k=3 64k=2)",
    )
    parser.add_argument("--selectors", nargs="+", help="subset of selectors (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="order of the L-Eval inputs")
    parser.add_argument(
        "--no-memory", action="store_true", help="time in this process; no peak RSS"
    )
    parser.add_argument("--no-grid", action="store_true", help="skip the size x selector grid")
    parser.add_argument("--scaling", action="store_true", help="also time one selector at 8k-64k")
    parser.add_argument("--scaling-selector", default="rcd")
    parser.add_argument("--scaling-budget", type=int, default=2048)
    parser.add_argument("--scaling-repeats", type=int, default=5)
    parser.add_argument(
        "--huge", action="store_true", help="also run a ~5 MB document (memory < 1 GiB check)"
    )
    parser.add_argument("--huge-mb", type=float, default=5.0, help="size of --huge in MB")
    parser.add_argument(
        "--timeout", type=float, default=900.0, help="seconds per measurement subprocess"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child_main(args.child)

    data_dir: Path = args.data_dir
    leval_dir = data_dir / "leval"
    if not leval_dir.is_dir():
        print(f"skipped: L-Eval documents not found at {leval_dir} (use --data-dir or {ENV_DATA})")
        return 0
    leval = load_leval(leval_dir)
    if not leval:
        print(f"skipped: no documents in {leval_dir}")
        return 0
    notes = load_mtsamples(data_dir / "mtsamples_discharge" / "discharge_summaries.derived.jsonl")

    selectors = list_selectors()
    if args.selectors:
        unknown = sorted(set(args.selectors) - set(selectors))
        if unknown:
            print(f"unknown selector(s) {unknown}; choose from {selectors}")
            return 2
        selectors = [s for s in selectors if s in args.selectors]

    t_start = time.perf_counter()
    source_before = machine_facts(data_dir)
    tok = get_tokenizer(TOKENIZER)
    corpus = Corpus(leval, notes, args.seed)
    with tempfile.TemporaryDirectory(prefix="bench_build_context_") as tmp:
        runner = Runner(Path(tmp), subprocesses=not args.no_memory, timeout=args.timeout)
        if not args.no_grid:
            run_grid(args, tok, corpus, runner, selectors)
        if args.scaling:
            run_scaling(args, tok, corpus, runner)
        if args.huge:
            run_huge(args, leval, runner)
        if runner.rss_sources:
            note = f"Peak RSS source: {', '.join(sorted(runner.rss_sources))} of each child."
            if runner.max_rss_gap > 1:
                note += (
                    f" (ru_maxrss read up to {runner.max_rss_gap:.0f} MiB higher: it can carry "
                    "the parent's pages from before exec.)"
                )
            print(note)
    source_after = source_state()
    if source_after != source_before:
        print(f"! The source changed during the run: now {source_after}")
    load = os.getloadavg()
    print(f"Load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"Wall time: {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
