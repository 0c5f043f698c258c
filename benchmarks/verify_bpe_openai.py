"""Check that bpe-openai's own encoder (GitHub's ``bpe`` crate, loaded from the installed
wheel) gives tiktoken's token ids, before budgetctx counts with it (issue 27: it loads in a
fraction of the time tiktoken takes to build its encoder from 200k ranks).

Texts: every string of the shared datasets (every JSON/JSONL string value of 2 or more
characters, every line of the Cochrane ``.source``/``.target`` files, every HTML/Markdown file
whole), the tokenizer tests' edge cases, and seeded random strings built from the pieces that
stress a pre-tokenizer (whitespace runs, special-token text, contractions, digits, combining
marks, CJK, astral characters, lone code points of every general category). Both encodings.
Then every token of the vocabulary that is valid UTF-8 on its own is decoded and compared with
the bytes of its rank in the sha256-pinned rank file. Prints the mismatches and the timings;
exits 1 on any mismatch.

    .venv/bin/python benchmarks/verify_bpe_openai.py [--data-dir /work/shared/data] [--random N]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from budgetctx.tokenizers import _bpe_fast, _tiktoken

EDGE = [
    "",
    " ",
    "Hello, world!",
    "Na 135, K 4.1; creatinine 0.9 mg/dL (12345678901).",
    "   leading and    inner   spaces\n\n\n\ttabs\r\nCRLF  ",
    " " * 300 + "x" + "\n" * 50,
    "a" + " " * 37 + "b\t\t\tc" + "\n" * 9 + "d",
    "\t\tcol1\tcol2\t\n\x0b\x0c\x1c\x85\xa0\u2028\u3000",
    "日本語のテキストと中文文本。한국어 텍스트.",
    "emoji 🙂👩\u200d⚕️🏥 🇺🇸 🏳️\u200d🌈 and café, naïve, e\u0301 (combining), ﬁ ligature",
    "\U0002ebee\U0001ad9d\U000e0041\U0010fffd",
    "def f(x):\n    return {'a': [1, 2, 3]}  # code\n",
    "I'm, you're, they'LL, it'S, I'M HERE, it'd — quotes “curly” and ‘single’.",
    "<|endoftext|> <|endofprompt|> <|fim_prefix|><|fim_middle|><|fim_suffix|> <|endoftext",
    "\x00\x01\x7f nul and control \ufeffBOM \ufffd",
    "مريض عمره ٦٧ سنة — החולה יציב \u202eRTL\u202c \u200f \u200e",
    "1234567890 3.14159 -0.5 1e-6 1,000,000 ½ ² ٣ 四",
    "pneumonoultramicroscopicsilicovolcanoconiosis" * 20,
    "x" * 10_000,
    "ab" * 3000 + "1" * 1000,
    " " * 70_000 + "x",  # past tiktoken's whitespace-run guard
    "\n" * 70_000,
    "a\n" + " \n" * 40_000,
]

PIECES = [
    *["<|endoftext|>", "<|endofprompt|>", " ", "  ", "\n", "\r\n", "\r", "\t", "\x0b", "\xa0"],
    *["\u2028", "\u3000", "p.o.", "b.i.d.", "'s", "'S", "'ll", "'", "4.1", "120/80", "/", "é"],
    *["e\u0301", "\u0301", "漢字", "🧠", "\U0002ebee", "Dr.", "ALLCAPS", "x", "Ab", "aB", "12345"],
    *["\u01c5", "\u02b0", "\u0903", "\u2163", "\u00b2", "\U0001f3fd", "\u200d", "?!", "...", "$"],
]


def json_strings(
    value: object, out: list[str], *, min_chars: int = 2, max_chars: int | None = None
) -> None:
    """Every string of at least ``min_chars`` in a parsed JSON value, cut to ``max_chars``
    (also read by verify_open_tokenizers.py)."""
    if isinstance(value, str):
        if len(value) >= min_chars:
            out.append(value[:max_chars])
    elif isinstance(value, dict):
        for v in value.values():
            json_strings(v, out, min_chars=min_chars, max_chars=max_chars)
    elif isinstance(value, list):
        for v in value:
            json_strings(v, out, min_chars=min_chars, max_chars=max_chars)


def data_texts(root: Path) -> Iterator[tuple[str, str]]:
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        rel = str(path.relative_to(root))
        if path.suffix == ".jsonl":
            found: list[str] = []
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    json_strings(json.loads(line), found)
            yield from ((rel, t) for t in dict.fromkeys(found))
        elif path.suffix == ".json":
            found = []
            json_strings(json.loads(path.read_text(encoding="utf-8")), found)
            yield from ((rel, t) for t in dict.fromkeys(found))
        elif path.suffix in (".source", ".target"):
            lines = path.read_text(encoding="utf-8").splitlines()
            yield from ((rel, t) for t in lines if t)
        elif path.suffix in (".html", ".md"):
            yield rel, path.read_text(encoding="utf-8", errors="replace")


def random_texts(n: int, seed: int) -> Iterator[tuple[str, str]]:
    rng = random.Random(seed)
    for i in range(n):
        parts = []
        for _ in range(rng.randint(1, 40)):
            r = rng.random()
            if r < 0.6:
                parts.append(rng.choice(PIECES))
            elif r < 0.8:  # any code point but a surrogate
                c = rng.randint(0, 0x10FFFF)
                parts.append(chr(c) if not 0xD800 <= c < 0xE000 else "?")
            else:
                parts.append(" " * rng.randint(1, 6) + rng.choice(["", "\n", "x", "\t"]))
        yield f"random#{i}", "".join(parts)


def _utf8(token: bytes) -> bool:
    try:
        token.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("/work/shared/data"))
    parser.add_argument("--random", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=27)
    args = parser.parse_args()
    texts = [("edge", t) for t in EDGE]
    if args.data_dir.is_dir():
        texts += list(data_texts(args.data_dir))
    else:
        print(f"no data folder at {args.data_dir}: edge cases and random text only")
    texts += list(random_texts(args.random, args.seed))
    bad = 0
    for name in ("o200k_base", "cl100k_base"):
        t = time.perf_counter()
        fast = _bpe_fast.encoder(name)
        load = time.perf_counter() - t
        if fast is None:
            print(f"{name}: bpe-openai's encoder is not available here")
            return 1
        ref = _tiktoken._encoding(name)
        mismatches, tokens, chars = 0, 0, 0
        t_ref = t_fast = 0.0
        for where, text in texts:
            t0 = time.perf_counter()
            want = _tiktoken.encode_ordinary(ref, text)
            t1 = time.perf_counter()
            got = fast.encode(text)
            t2 = time.perf_counter()
            count = fast.count(text)
            t_ref += t1 - t0
            t_fast += t2 - t1
            tokens += len(want)
            chars += len(text)
            if got != want or count != len(want):
                mismatches += 1
                if mismatches <= 5:
                    print(
                        f"{name}: MISMATCH in {where} ({len(text)} chars): "
                        f"{len(got)} ids / count {count} vs tiktoken {len(want)}",
                        file=sys.stderr,
                    )
        print(
            f"{name}: {len(texts)} texts, {chars} characters, {tokens} tokens, "
            f"{mismatches} mismatching; load {load * 1000:.0f} ms; "
            f"encode {t_fast:.2f} s (tiktoken {t_ref:.2f} s)"
        )
        # the vocabulary itself: every token that is valid UTF-8 alone decodes to its bytes
        ranks = ref._mergeable_ranks
        utf8 = [(t.decode("utf-8", "ignore"), r) for t, r in ranks.items() if _utf8(t)]
        wrong = sum(fast.decode([r]) != s for s, r in utf8)  # type: ignore[attr-defined]
        print(f"{name}: {len(utf8)} of {len(ranks)} tokens are UTF-8 alone; {wrong} decode wrong")
        bad += mismatches + wrong
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
