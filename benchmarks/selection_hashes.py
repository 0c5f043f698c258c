"""Hash what ``build_context`` selects on a sample of the shared datasets, to check that a
speed change leaves every selection as it was.

For each sampled document x unitizer x selector (every registered one, plus ``auto``) x budget
it records two hashes: ``selection`` (the context's text, its token count and the kept unit ids)
and ``full`` (every field of the context except timings: unit spans, costs, relevance, gains,
ranks, excluded units, route statistics, reason and notes; floats by ``repr``, so a change in
the last bit shows). Run it on two checkouts and compare:

    PYTHONPATH=src python benchmarks/selection_hashes.py --out before.json
    PYTHONPATH=src python benchmarks/selection_hashes.py --out after.json
    python benchmarks/selection_hashes.py --compare before.json after.json

A few documents are also run with ``dense_limit=64`` so that the sparse kernel (used past
``DENSE_LIMIT`` units) is exercised without a huge document. Reads the data only; writes only
``--out``. Document text never appears in the output (keys are dataset names and indices).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BUDGETS = (64, 128, 256, 512, 1024, 2048)


def data_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    env = os.environ.get("BUDGETCTX_SHARED_DATA")
    if env:
        return Path(env)
    for cand in (REPO.parent / "shared" / "data", Path("/work/shared/data")):
        if cand.is_dir():
            return cand
    return REPO.parent / "shared" / "data"


def _jsonl(path: Path, field: str) -> Iterator[str]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                text = json.loads(line).get(field) or ""
                if text.strip():
                    yield text


def sample(root: Path, per_dataset: int, max_chars: int, seed: int) -> list[tuple[str, str]]:
    """``(key, text)`` pairs: a seeded sample of each dataset, long texts cut to
    ``max_chars`` at a line break (a prefix is still a realistic document)."""
    rng = random.Random(seed)
    pools: dict[str, list[str]] = {}
    mts = root / "mtsamples_discharge" / "discharge_summaries.derived.jsonl"
    if mts.is_file():
        pools["mtsamples"] = list(_jsonl(mts, "text"))
    leval = root / "leval"
    if leval.is_dir():
        for path in sorted(leval.glob("*.jsonl")):
            pools[f"leval-{path.stem}"] = list(dict.fromkeys(_jsonl(path, "input")))
    dev = root / "cochrane" / "devaraj2021_data-1024" / "val.source"
    if dev.is_file():
        pools["cochrane-devaraj"] = [t for t in dev.read_text(encoding="utf-8").splitlines() if t]
    tsar = root / "cochrane" / "tsar2025_cochrane_abstracts"
    if tsar.is_dir():
        pools["cochrane-tsar"] = [
            json.loads(p.read_text(encoding="utf-8")).get("abstract") or ""
            for p in sorted(tsar.glob("*.json"))
        ]
    pqa = root / "pubmedqa" / "ori_pqal.json"
    if pqa.is_file():
        items = json.loads(pqa.read_text(encoding="utf-8"))
        pools["pubmedqa"] = ["\n".join(v.get("CONTEXTS", [])) for _, v in sorted(items.items())]
    out: list[tuple[str, str]] = []
    for name, pool in pools.items():
        pool = [t for t in pool if t.strip()]
        picks = sorted(rng.sample(range(len(pool)), min(per_dataset, len(pool))))
        for i in picks:
            text = pool[i]
            if len(text) > max_chars:
                cut = text.rfind("\n", 0, max_chars)
                text = text[: cut if cut > max_chars // 2 else max_chars]
            out.append((f"{name}#{i}", text))
    return out


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def hashes(ctx: Any) -> dict[str, str]:
    selection = [ctx.text, ctx.tokens_used, [u.id for u in ctx.units]]
    units = [
        [u.id, u.spans, u.tokens, repr(u.relevance), repr(u.gain), u.rank, u.truncated]
        for u in ctx.units
    ]
    route = ctx.route.to_dict() if ctx.route is not None else None
    full = [
        selection,
        units,
        list(ctx.excluded),
        ctx.document_tokens,
        ctx.n_units,
        {k: repr(v) for k, v in ctx.stats.items()},
        route,
        ctx.reason,
        list(ctx.notes),
        ctx.selector,
    ]
    return {"selection": _digest(selection), "full": _digest(full)}


def run(args: argparse.Namespace) -> int:
    from budgetctx import build_context, list_selectors
    from budgetctx.unitizers import list_unitizers

    root = data_dir(args.data_dir)
    if not root.is_dir():
        print(f"no data at {root}; pass --data-dir", file=sys.stderr)
        return 0
    docs = sample(root, args.per_dataset, args.max_chars, args.seed)
    selectors = [*list_selectors(), "auto"]
    unitizers = list_unitizers()
    out: dict[str, dict[str, str]] = {}
    t0 = time.perf_counter()
    for d, (key, text) in enumerate(docs):
        sparse_too = d % args.sparse_every == 0
        for unitizer in unitizers:
            for selector in selectors:
                for budget in BUDGETS:
                    for dense_limit in (None, 64) if sparse_too else (None,):
                        kw: dict[str, Any] = {"unitizer": unitizer, "selector": selector}
                        if dense_limit is not None:
                            kw["dense_limit"] = dense_limit
                        name = f"{key}|{unitizer}|{selector}|{budget}|{dense_limit}"
                        try:
                            ctx = build_context(text, budget, **kw)
                        except Exception as exc:  # recorded, compared like a result
                            out[name] = {"selection": f"error {type(exc).__name__}", "full": ""}
                            continue
                        out[name] = hashes(ctx)
        print(f"{d + 1}/{len(docs)} {key} {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    Path(args.out).write_text(json.dumps(out, indent=0, sort_keys=True), encoding="utf-8")
    print(f"{len(out)} contexts hashed -> {args.out}")
    return 0


def compare(a_path: str, b_path: str) -> int:
    a = json.loads(Path(a_path).read_text(encoding="utf-8"))
    b = json.loads(Path(b_path).read_text(encoding="utf-8"))
    keys = sorted(set(a) | set(b))
    sel = [k for k in keys if a.get(k, {}).get("selection") != b.get(k, {}).get("selection")]
    full = [k for k in keys if a.get(k, {}).get("full") != b.get(k, {}).get("full")]
    print(
        f"{len(keys)} contexts; selection differs in {len(sel)}; any field differs in {len(full)}"
    )
    for k in sel[:50]:
        print("  selection", k)
    for k in [k for k in full if k not in sel][:50]:
        print("  full     ", k)
    return 1 if sel else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", default="selection_hashes.json")
    p.add_argument("--data-dir")
    p.add_argument("--per-dataset", type=int, default=4)
    p.add_argument("--max-chars", type=int, default=24_000)
    p.add_argument("--sparse-every", type=int, default=4, help="every n-th doc also sparse")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compare", nargs=2, metavar=("A", "B"))
    args = p.parse_args()
    if args.compare:
        return compare(*args.compare)
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
