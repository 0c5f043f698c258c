"""Check budgetctx's bundled Tekken vocabulary token for token against mistral-common's own
``Tekkenizer`` before calling it exact. mistral-common pins ``numpy<2.4``, so the reference
runs in a scratch environment of its own, and the comparison in budgetctx's::

    uv venv /tmp/mvenv && uv pip install --python /tmp/mvenv/bin/python mistral-common 'numpy<2.4'
    PYTHONPATH=src:. python benchmarks/verify_tekken.py texts /tmp/texts.json
    /tmp/mvenv/bin/python benchmarks/verify_tekken.py reference /tmp/texts.json /tmp/ref.json
    PYTHONPATH=src:. python benchmarks/verify_tekken.py compare /tmp/texts.json /tmp/ref.json \
        --tekken-json /tmp/mvenv/lib/python3.11/site-packages/mistral_common/data/tekken_240718.json

Texts: ``measure_estimates.py``'s corpus (clinical notes, medical prose, transcripts, code,
JSON, Markdown, 15 languages), split into paragraphs too, plus edge cases (whitespace runs,
digits, CJK, emoji, combining marks, special-token text). Exits 1 on any mismatch.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

EDGE = [
    "",
    " ",
    "Hello, world!",
    "Na 135, K 4.1; creatinine 0.9 mg/dL (12345678901).",
    "   leading and trailing   ",
    "tabs\tand\r\nnewlines\n\n\n  indented",
    " " * 300 + "x" + "\n" * 50,
    "数据科学与人工智能。東京都の病院。한국어 텍스트.",
    "emoji 🙂👍🏽 and combining é vs é, ﬁ ligature",
    "</s><s>[INST] [/INST] <unk> [TOOL_CALLS]",
    "def f(x):\n    return {'a': [1, 2, 3]}  # code\n",
    "ÀÉÎÕÜ ßẞ ΑΒΓ αβγ Привет мир",
    "1234567890" * 20,
]


def texts(out: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from measure_estimates import DATA, corpus

    items = [t for genre in corpus(DATA, 100).values() for t in genre]
    paragraphs = [p for t in items[::3] for p in t.split("\n\n") if p.strip()][:2000]
    out.write_text(json.dumps(EDGE + items + paragraphs, ensure_ascii=False), encoding="utf-8")
    print(f"{len(EDGE) + len(items) + len(paragraphs)} texts written to {out}")


def reference(texts_path: Path, out: Path) -> None:
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    items = json.loads(texts_path.read_text(encoding="utf-8"))
    refs = {}
    for name, tok in (
        ("240911", MistralTokenizer.v3(is_tekken=True, is_mm=True)),
        ("240718", MistralTokenizer.v3(is_tekken=True)),
    ):
        inner = tok.instruct_tokenizer.tokenizer
        refs[name] = [inner.encode(t, bos=False, eos=False) for t in items]
    out.write_text(json.dumps(refs), encoding="utf-8")
    print(f"reference ids for {len(items)} texts written to {out}")


def compare(texts_path: Path, ref_path: Path, tekken_json: str | None) -> int:
    from budgetctx.tokenizers._tekken import TekkenTokenizer

    items = json.loads(texts_path.read_text(encoding="utf-8"))
    refs = json.loads(ref_path.read_text(encoding="utf-8"))
    checks = [("bundled", TekkenTokenizer(), refs["240911"])]
    if tekken_json:
        checks.append(("tekken_240718.json", TekkenTokenizer(tekken_json), refs["240718"]))
    bad = 0
    for name, tok, expected in checks:
        wrong = [i for i, t in enumerate(items) if tok.encode(t) != expected[i]]
        counts = sum(tok.count(t) == len(expected[i]) for i, t in enumerate(items))
        tokens = sum(len(e) for e in expected)
        print(
            f"{name}: {len(items)} texts, {tokens} tokens: {len(wrong)} id mismatches, "
            f"{len(items) - counts} count mismatches"
        )
        bad += len(wrong)
    return 1 if bad else 0


def main() -> int:
    mode, *args = sys.argv[1:]
    if mode == "texts":
        texts(Path(args[0]))
    elif mode == "reference":
        reference(Path(args[0]), Path(args[1]))
    else:
        tekken_json = args[3] if len(args) > 3 and args[2] == "--tekken-json" else None
        return compare(Path(args[0]), Path(args[1]), tekken_json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
