"""Hash what ``build_context`` (and the paths built on it) return over a sample of the public
datasets, so that a refactor can show it changed no context: run it on the old code and on
the new, and compare the two files. ``--budgets`` replaces the budgets (24, 96, 400); a
large one (4096) sends most documents whole, through the count-first exit.

    PYTHONPATH=src python benchmarks/context_hashes.py --out /tmp/new.json
    python benchmarks/context_hashes.py --compare /tmp/old.json /tmp/new.json

Reads /work/shared/data (or $BUDGETCTX_DATA); nothing is written but ``--out``. Timings are
left out of the hash; everything else a caller can read is in it. ``--without-scores`` leaves
out, too, what issue 27's lazy preparation stopped computing for lead, shuffled and a
document sent whole (units' relevance and gain, ``relevance_source``, the statistics' phi and
rho, a chat's "relevance: ..." note), to compare everything else across that change.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

DATA = Path(os.environ.get("BUDGETCTX_DATA", "/work/shared/data"))
BUDGETS = (24, 96, 400)
#: Context.to_dict() keys that existed before the refactor (timings left out).
KEYS = (
    "text",
    "tokens_used",
    "budget",
    "document_tokens",
    "tokenizer",
    "unitizer",
    "representation",
    "selector",
    "units",
    "excluded",
    "n_units",
    "separator",
    "query",
    "relevance_source",
    "params",
    "reason",
    "notes",
    "stats",
    "route",
    "reserve",
    "documents",
)


def _documents(per_source: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    with (DATA / "mtsamples_discharge/discharge_summaries.derived.jsonl").open() as f:
        for i, line in enumerate(f):
            if i >= per_source:
                break
            out.append((f"mtsamples-{i}", json.loads(line)["text"]))
    pqa = json.loads((DATA / "pubmedqa/ori_pqal.json").read_text())
    for key in sorted(pqa)[:per_source]:
        out.append((f"pubmedqa-{key}", "\n".join(pqa[key]["CONTEXTS"])))
    src = (DATA / "cochrane/devaraj2021_data-1024/val.source").read_text().splitlines()
    for i, text in enumerate(src[:per_source]):
        out.append((f"devaraj-{i}", text))
    for p in sorted((DATA / "cochrane/tsar2025_cochrane_abstracts").glob("*.json"))[:per_source]:
        out.append((f"tsar-{p.stem}", json.loads(p.read_text())["abstract"]))
    for name in ("news_summ", "gov_report_summ"):
        with (DATA / f"leval/{name}.jsonl").open() as f:
            # cut to 12k characters: the selectors' cost grows with the square of the units
            out.append((f"leval-{name}", json.loads(f.readline())["input"][:12000]))
    return out


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


WITHOUT_SCORES = False


def _unscored(d: dict[str, Any]) -> dict[str, Any]:
    """``d`` without what lazy preparation may leave uncomputed (see the module's docstring)."""
    d = dict(d)
    d["units"] = [
        {k: v for k, v in u.items() if k not in ("relevance", "gain")} for u in d["units"]
    ]
    d.pop("relevance_source", None)
    d["stats"] = {k: v for k, v in d["stats"].items() if k not in ("phi", "rho")}
    return d


#: How many contexts deferred their units (issue 27, session 6: the count-first exit).
DEFERRED = [0]


def _ctx(ctx: Any) -> str:
    DEFERRED[0] += "_pending" in vars(ctx)
    d = ctx.to_dict()
    if WITHOUT_SCORES:
        d = _unscored(d)
    return _digest({k: d[k] for k in KEYS if k in d})


def _fit(fit: Any) -> str:
    d = fit.to_dict()
    if WITHOUT_SCORES:
        d["notes"] = [n for n in d.get("notes", []) if not str(n).startswith("relevance: ")]
        d["compressed"] = [_drop_scores(p) for p in d.get("compressed", [])]
    return _digest(d)


def _drop_scores(obj: Any) -> Any:
    """``obj`` without any "relevance" or "gain" entry, however deep."""
    if isinstance(obj, dict):
        return {k: _drop_scores(v) for k, v in obj.items() if k not in ("relevance", "gain")}
    if isinstance(obj, list):
        return [_drop_scores(v) for v in obj]
    return obj


def run(per_source: int, budgets: tuple[int, ...] = BUDGETS) -> dict[str, str]:
    import budgetctx
    from budgetctx.batch import ContextBuilder

    docs = _documents(per_source)
    selectors = [*budgetctx.list_selectors(), "auto"]
    unitizers = budgetctx.list_unitizers()
    out: dict[str, str] = {}
    for doc_id, text in docs:
        for unitizer in unitizers:
            for selector in selectors:
                for budget in budgets:
                    key = f"build|{doc_id}|{unitizer}|{selector}|{budget}"
                    try:
                        out[key] = _ctx(
                            budgetctx.build_context(
                                text, budget, unitizer=unitizer, selector=selector
                            )
                        )
                    except budgetctx.BudgetCtxError as exc:
                        out[key] = "error:" + type(exc).__name__ + ":" + str(exc)
    # several documents, a query, pins, reserve, truncate
    texts = [t for _, t in docs[: 3 * per_source : per_source]]
    for selector in selectors:
        for budget in budgets:
            for extra in (
                {},
                {"query": "treatment outcome"},
                {"truncate": True, "reserve": 8},
                {"pin": ["discharge diagnosis", 0]},
            ):
                key = f"multi|{selector}|{budget}|{sorted(extra)}"
                out[key] = _ctx(budgetctx.build_context(texts, budget, selector=selector, **extra))
                key = f"batch|{selector}|{budget}|{sorted(extra)}"
                out[key] = _ctx(ContextBuilder(budget, selector=selector, **extra)(texts[0]))
    # prepare once, select many
    for doc_id, text in docs[::3]:
        prepared = budgetctx.prepare(text, query="patient")
        for selector in selectors:
            for budget in budgets:
                key = f"prepared|{doc_id}|{selector}|{budget}"
                out[key] = _ctx(prepared.select(budget, selector=selector))
    # chats
    for i in range(0, len(docs) - 2, 2):
        msgs = [
            {"role": "system", "content": "Answer from the notes."},
            {"role": "user", "content": docs[i][1]},
            {"role": "tool", "content": docs[i + 1][1]},
            {"role": "user", "content": "What was the outcome?"},
        ]
        for selector in ("mmr", "lead", "rcd", "auto"):
            for budget in (60, 200, 600):
                key = f"fit|{i}|{selector}|{budget}"
                try:
                    fit = budgetctx.fit_messages(msgs, budget, selector=selector)
                    out[key] = _fit(fit)
                except budgetctx.BudgetCtxError as exc:
                    out[key] = "error:" + type(exc).__name__ + ":" + str(exc)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--per-source", type=int, default=4)
    parser.add_argument("--compare", nargs=2, type=Path)
    parser.add_argument("--without-scores", action="store_true")
    parser.add_argument("--budgets", nargs="+", type=int, default=list(BUDGETS))
    args = parser.parse_args()
    global WITHOUT_SCORES
    WITHOUT_SCORES = args.without_scores
    if args.compare:
        old, new = (json.loads(p.read_text()) for p in args.compare)
        same = sum(old[k] == new.get(k) for k in old)
        diff = sorted(k for k in old if old[k] != new.get(k))
        print(f"compared {len(old)} results: {same} equal, {len(diff)} different")
        for k in diff[:20]:
            print("  differs:", k)
        sys.exit(1 if diff or set(old) != set(new) else 0)
    hashes = run(args.per_source, tuple(args.budgets))
    assert args.out is not None, "pass --out FILE"
    args.out.write_text(json.dumps(hashes, indent=0, sort_keys=True))
    print(
        f"{len(hashes)} results hashed into {args.out}; {DEFERRED[0]} contexts came from the "
        "count-first exit (their units computed when to_dict() read them)"
    )


if __name__ == "__main__":
    main()
