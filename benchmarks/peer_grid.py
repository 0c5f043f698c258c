"""budgetctx against Lead and the sumy rankers at equal tokens, on every public dataset (issue 21).

Each document is prepared once per configuration (unitizer x no-query salience); every
budgetctx selector and budget is then a ``PreparedDocument.select``. The sumy rankers (LSA,
LexRank, SumBasic) rank budgetctx's own *sentence* units, and the context is filled in their
rank order with every unit that still fits the budget (the pipeline's own fill and render,
so every context is exact and ``"\\n"``-joined). Scores are ROUGE-1 F1 with the Porter stemmer
(``budgetctx.eval.metrics.Rouge``); the reference is read only to score.

budgetctx's selectors run as ``prepare`` does by default (the clinical profile applied where
it finds its sections, issue 22); the peers' rank orders fill the same units without the
profile's pins. With ``--peer-pins`` each peer is also run with the same pins as budgetctx
(``sumy-lsa+pins``...: the pinned units first, then the ranker's order in the budget they
leave), so that a document the profile pins is compared under the same constraint (on one
without pins the two columns are equal). L-Eval tasks are scored once per document, with no
query (the first instruction/summary pair; ``quality_grid.py --per-document``); PubMedQA
keeps its question. sumy is benchmark-only: ``pip install sumy`` (it needs no nltk data
here: words come from a regex, sentences are budgetctx's units).

Every per-example score is kept, with each context's reference-free run-time features
(:func:`budgetctx.router.context_divergence`), so that routers can be evaluated
leave-one-dataset-out offline (``eval/_lodo.py``, ``budgetctx route-eval --lodo``)::

    nice -n 10 python benchmarks/peer_grid.py --split validation --limit 12 \\
        --out /tmp/peers_validation.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from budgetctx import prepare
from budgetctx._errors import BudgetCtxWarning
from budgetctx.eval.datasets import load_dataset
from budgetctx.eval.metrics import Rouge
from budgetctx.selectors import Selection, SelectionProblem, get_selector, parse_selector_spec
from budgetctx.selectors._base import greedy_fill

DATASETS = (
    "leval:gov_report_summ",
    "leval:meeting_summ",
    "leval:news_summ",
    "leval:patent_summ",
    "leval:tv_show_summ",
    "leval:paper_assistant",
    "leval:review_summ",
    "cochrane",
    "cochrane-pls",
    "mtsamples",
    "pubmedqa",
)
BUDGETS = (256, 512)
SELECTORS = ("lead", "mmr", "facility", "rcd", "auto")
PEERS = ("lsa", "lexrank", "sumbasic")

_WORD = re.compile(r"(?u)\b\w[\w'-]*\b")


@dataclass(frozen=True)
class Ranked:
    """A selector that fills the budget in a fixed rank order (how the peers are run)."""

    order: tuple[int, ...]
    label: str

    @property
    def name(self) -> str:
        return self.label

    def params(self) -> dict[str, Any]:
        return {}

    def select(self, problem: SelectionProblem) -> Selection:
        order: Sequence[int] = self.order
        if problem.positions is not None:
            # the units left once pinned ones are kept: the rank order, in their ids
            local = {int(p): i for i, p in enumerate(problem.positions)}
            order = [local[u] for u in self.order if u in local]
        kept, gains, overflow = greedy_fill(problem.tracker(), order, None)
        return Selection(tuple(kept), tuple(gains), overflow)


class _Words:
    """sumy's tokenizer interface over a regex: no nltk data, no network."""

    language = "english"

    def to_sentences(self, paragraph: str) -> tuple[str, ...]:
        return (paragraph,)

    def to_words(self, sentence: str) -> tuple[str, ...]:
        return tuple(_WORD.findall(sentence))


def _fast_lexrank() -> type:
    """sumy's LexRank with its O(n^2) Python loops (IDF and the similarity graph) written as
    the same arithmetic in numpy: an L-Eval document of 1,300 units takes 50 s otherwise."""
    from sumy.summarizers.lex_rank import LexRankSummarizer

    class FastLexRank(LexRankSummarizer):  # type: ignore[misc]
        @staticmethod
        def _compute_idf(sentences: list[list[str]]) -> dict[str, float]:
            df: dict[str, int] = defaultdict(int)
            for s in sentences:
                for term in set(s):
                    df[term] += 1
            n = len(sentences)
            return {t: float(np.log(n / (1 + k))) for t, k in df.items()}

        def _create_matrix(
            self,
            sentences: list[list[str]],
            threshold: float,
            tf_metrics: list[dict[str, float]],
            idf_metrics: dict[str, float],
        ) -> np.ndarray:
            vocab = {t: i for i, t in enumerate(idf_metrics)}
            V = np.zeros((len(sentences), len(vocab)))
            for row, tf in enumerate(tf_metrics):
                for term, value in tf.items():
                    V[row, vocab[term]] = value * idf_metrics[term]
            norms = np.linalg.norm(V, axis=1)
            sims = V @ V.T
            ok = norms > 0
            sims[ok] /= norms[ok, None]
            sims[:, ok] /= norms[None, ok]
            sims[~ok] = 0.0
            sims[:, ~ok] = 0.0
            matrix = (sims > threshold).astype(np.float64)
            degrees = matrix.sum(axis=1)
            degrees[degrees == 0] = 1
            return matrix / degrees[:, None]

    return FastLexRank


def sumy_orders(texts: Sequence[str], peers: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """Each sumy ranker's order of the units (best first)."""
    from sumy.models.dom import ObjectDocumentModel, Paragraph, Sentence
    from sumy.nlp.stemmers import Stemmer
    from sumy.summarizers.lsa import LsaSummarizer
    from sumy.summarizers.sum_basic import SumBasicSummarizer
    from sumy.utils import get_stop_words

    words = _Words()
    sentences = [Sentence(t, words) for t in texts]
    index = {id(s): i for i, s in enumerate(sentences)}
    document = ObjectDocumentModel([Paragraph(sentences)])
    stemmer = Stemmer("english")
    makers: dict[str, Callable[[], Any]] = {
        "lsa": lambda: LsaSummarizer(stemmer),
        "lexrank": lambda: _fast_lexrank()(stemmer),
        "sumbasic": lambda: SumBasicSummarizer(stemmer),
    }
    out: dict[str, tuple[int, ...]] = {}
    for name in peers:
        summarizer = makers[name]()
        summarizer.stop_words = get_stop_words("english")
        ranked: list[int] = []

        def count(infos: Sequence[Any], ranked: list[int] = ranked) -> Sequence[Any]:
            # sumy sorts by rating (best first) before it cuts the list: keep that order.
            ranked.extend(index[id(i.sentence)] for i in infos)
            return infos

        summarizer(document, count)
        seen = set(ranked)
        out[name] = tuple(ranked) + tuple(i for i in range(len(texts)) if i not in seen)
    return out


def _cached_orders(
    texts: Sequence[str], peers: Sequence[str], cache_dir: Path | None
) -> dict[str, tuple[int, ...]]:
    """:func:`sumy_orders`, kept on disk by a hash of the unit texts (sumy is slow and its
    orders never change with budgetctx's settings)."""
    if cache_dir is None:
        return sumy_orders(texts, peers)
    key = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:24]
    path = cache_dir / f"{key}.json"
    known: dict[str, list[int]] = json.loads(path.read_text()) if path.is_file() else {}
    missing = [p for p in peers if p not in known]
    if missing:
        known.update({p: list(o) for p, o in sumy_orders(texts, missing).items()})
        cache_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(known))
    return {p: tuple(known[p]) for p in peers}


def _selector(spec: str) -> Any:
    name, options = parse_selector_spec(spec)
    return get_selector(name, **options)


def _examples(ds: str, split: str, data_dir: str, limit: int | None) -> list[Any]:
    examples = load_dataset(ds, split=split, data_dir=data_dir)
    if len({e.document for e in examples}) < len(examples):
        firsts = {e.document: e for e in reversed(examples)}
        examples = [replace(e, query=None) for e in examples if firsts[e.document] is e]
    if limit is not None and len(examples) > limit:
        # every k-th example: a spread over the split, the same on every run
        step = len(examples) / limit
        examples = [examples[int(k * step)] for k in range(limit)]
    return examples


def run(
    datasets: Sequence[str],
    split: str,
    budgets: Sequence[int],
    data_dir: str,
    *,
    limit: int | None,
    selectors: Sequence[str],
    peers: Sequence[str],
    configs: dict[str, dict[str, Any]],
    checkpoint: Path | None = None,
    cache_dir: Path | None = None,
    peer_pins: bool = False,
) -> dict[str, Any]:
    """``configs``: label -> prepare() options for extra budgetctx configurations, whose
    selectors are reported as ``label/selector``. ``peer_pins``: also run each peer with
    budgetctx's pins (``sumy-NAME+pins``)."""
    from budgetctx.router._divergence import context_divergence
    from budgetctx.unitizers._turns import turn_statistics

    rouge = Rouge(use_stemmer=True)
    result: dict[str, Any] = {
        "split": split,
        "budgets": list(budgets),
        "ids": {},
        "tokens": {},
        "scores": {},
        "features": {},
        "seconds": {},
        "dialogue": {},
        "stats": {},
        "turns": {},
    }
    over = 0
    for ds in datasets:
        examples = _examples(ds, split, data_dir, limit)
        scores: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        feats: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        secs: dict[str, float] = defaultdict(float)
        result["ids"][ds] = [e.id for e in examples]
        result["tokens"][ds] = []
        result["dialogue"][ds] = []
        result["stats"][ds] = []
        result["turns"][ds] = []
        t0 = time.perf_counter()
        for ex in examples:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", BudgetCtxWarning)
                base = prepare(ex.document, query=ex.query)
                prepared = {"": base}
                for label, options in configs.items():
                    prepared[label] = prepare(ex.document, query=ex.query, **options)
            result["tokens"][ds].append(base.document_tokens)
            turns = turn_statistics(ex.document)
            result["dialogue"][ds].append(turns is not None)
            result["turns"][ds].append(None if turns is None else turns.to_dict())
            result["stats"][ds].append({str(b): list(base.stats(b).vector(b)) for b in budgets})
            methods: list[tuple[str, Any, Any]] = []
            for label, doc in prepared.items():
                for spec in selectors:
                    sel = spec if spec == "auto" else _selector(spec)
                    methods.append((f"{label}/{spec}" if label else spec, doc, sel))
            if peers:
                t = time.perf_counter()
                orders = _cached_orders([u.text for u in base.segmentation.units], peers, cache_dir)
                secs["sumy"] += time.perf_counter() - t
                # A rank order is over all the units: where the clinical profile (issue 22)
                # pins units, the peers fill from the same units without the pins.
                plain = base
                if base.profile_pins:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", BudgetCtxWarning)
                        plain = prepare(ex.document, query=ex.query, profile=None)
                methods += [(f"sumy-{p}", plain, Ranked(orders[p], p)) for p in peers]
                if peer_pins:
                    methods += [
                        (f"sumy-{p}+pins", base, Ranked(orders[p], f"{p}+pins")) for p in peers
                    ]
            cache: dict[tuple[int, str], float] = {}
            for name, doc, sel in methods:
                for b in budgets:
                    t = time.perf_counter()
                    ctx = doc.select(b, selector=sel)
                    secs[name] += time.perf_counter() - t
                    over += ctx.tokens_used > b
                    key = (b, ctx.text)
                    if key not in cache:
                        cache[key] = float(rouge.score(ctx.text, ex.reference).rouge1.f)
                    scores[name][str(b)].append(cache[key])
                    kept = [u.id for u in ctx.units]
                    feats[name][str(b)].append(round(context_divergence(doc.features, kept), 6))
            if checkpoint is not None:
                result["scores"][ds] = {k: dict(v) for k, v in scores.items()}
                result["features"][ds] = {k: dict(v) for k, v in feats.items()}
                checkpoint.write_text(json.dumps(result))
        result["scores"][ds] = {k: dict(v) for k, v in scores.items()}
        result["features"][ds] = {k: dict(v) for k, v in feats.items()}
        result["seconds"][ds] = dict(secs)
        print(
            f"{ds} {split}: {len(examples)} examples, {time.perf_counter() - t0:.0f} s",
            file=sys.stderr,
        )
    if over:
        raise AssertionError(f"{over} contexts over budget")
    return result


def table(result: dict[str, Any], methods: Sequence[str] | None = None) -> str:
    """Markdown: mean ROUGE-1 F1 per dataset and budget, best cell in bold."""
    budgets = [str(b) for b in result["budgets"]]
    first = next(iter(result["scores"].values()))
    names = list(methods or first)
    head = ["dataset", "budget", "n", *names]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join([":--"] * 3 + ["--:"] * len(names))]
    lines[1] += "|"
    for ds, by_name in result["scores"].items():
        for b in budgets:
            means = {m: float(np.mean(by_name[m][b])) for m in names if m in by_name}
            top = max(means.values())
            cells = [
                (f"**{means[m]:.3f}**" if means[m] == top else f"{means[m]:.3f}")
                if m in means
                else "-"
                for m in names
            ]
            n = len(next(iter(by_name.values()))[b])
            lines.append(f"| {ds} | {b} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("validation", "test"))
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--budgets", nargs="+", type=int, default=list(BUDGETS))
    ap.add_argument("--selectors", nargs="*", default=list(SELECTORS))
    ap.add_argument("--peers", nargs="*", default=list(PEERS))
    ap.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="LABEL=JSON",
        help='extra prepare() options, e.g. turns=\'{"unitizer": "turn"}\'',
    )
    ap.add_argument("--limit", type=int, default=12, help="examples per dataset (spread)")
    ap.add_argument("--data-dir", default=str(Path(__file__).parents[1] / "../shared/data"))
    ap.add_argument("--out", type=Path)
    ap.add_argument(
        "--sumy-cache", type=Path, help="keep the sumy rankings here (by hash of the units)"
    )
    ap.add_argument("--load", type=Path, help="print the table of a saved result")
    ap.add_argument(
        "--peer-pins",
        action="store_true",
        help="also run each peer with budgetctx's pins (columns sumy-NAME+pins)",
    )
    args = ap.parse_args()
    if args.load:
        result = json.loads(args.load.read_text())
    else:
        if args.split is None:
            ap.error("--split is required to run")
        if not Path(args.data_dir).is_dir():
            print(f"no data at {args.data_dir}; nothing to run", file=sys.stderr)
            return
        configs = {}
        for c in args.config:
            label, _, options = c.partition("=")
            configs[label] = json.loads(options)
        result = run(
            args.datasets,
            args.split,
            args.budgets,
            args.data_dir,
            limit=args.limit,
            selectors=args.selectors,
            peers=args.peers,
            configs=configs,
            checkpoint=args.out,
            cache_dir=args.sumy_cache,
            peer_pins=args.peer_pins,
        )
        if args.out:
            args.out.write_text(json.dumps(result))
    print(table(result))


if __name__ == "__main__":
    main()
