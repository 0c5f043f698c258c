"""Mistral's Tekken tokenizer, exact and offline, without mistral-common.

Tekken is a tiktoken BPE: a pre-tokenizer pattern, 130,072 ordinary tokens ranked by
position, and 1,000 special-token ids before them that text never produces. mistral-common
(Apache-2.0) ships the vocabulary but pins ``numpy<2.4``; budgetctx bundles the ordinary
tokens of its ``tekken_240911.json`` instead (``data/tekken_240911.bpe.xz``, 0.5 MB, built by
``benchmarks/build_tekken.py``, checked by sha256 on load). Counts are mistral-common's
``Tekkenizer.encode(text, bos=False, eos=False)``: the ids were checked equal on 2,342 texts
(1.45 million tokens: clinical notes, medical prose, transcripts, code, JSON, Markdown, 15
languages, edge cases) with ``benchmarks/verify_tekken.py``. ``tekken_240718.json`` (NeMo) has
the same ordinary tokens byte for byte. Another model's own ``tekken.json`` loads with
``get_tokenizer("tekken:/path/to/tekken.json")``.

The models mistral-common itself maps to Tekken: ``open-mistral-nemo(-2407)``,
``mistral-nemo``, ``pixtral-12b(-2409)``, ``ministral-8b(-2410)``, ``mistral-small-2409``.
Mistral's SentencePiece models (Mistral 7B, Mixtral, Large 2402/2407/2411, Codestral 2405)
are another vocabulary: load their ``tokenizer.json`` with ``hf:<path>``.

>>> TekkenTokenizer().count("Aspirin 81 mg p.o. daily.")
11
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import lzma
import re
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from budgetctx._core.validation import Constraint, NoneOr, Predicate, validate
from budgetctx._errors import TokenizerError
from budgetctx.tokenizers._native import is_native_failure, native_failure
from budgetctx.tokenizers._tiktoken import truncate_ids
from budgetctx.tokenizers._whitespace import encode_long_runs

if TYPE_CHECKING:
    import tiktoken

__all__ = ["TEKKEN_MODELS", "TekkenTokenizer"]

_BUNDLED = "tekken_240911.bpe.xz"
_BUNDLED_SHA256 = "e736f48bd32a5f1ee48b0b239d3b245c18aca7be008d22598ae49749a7a9584b"
#: Model names mistral-common maps to a Tekken vocabulary (its MODEL_NAME_TO_TOKENIZER_CLS).
TEKKEN_MODELS = (
    "open-mistral-nemo",
    "mistral-nemo",
    "pixtral-12b",
    "ministral-8b",
    "mistral-small-2409",
)


def _bundled() -> tuple[str, int, dict[bytes, int]]:
    # imported here: importlib.resources brings tempfile and zipfile into every process that
    # imports the tokenizers, for the one call that reads the bundled tekken file (issue 27)
    from importlib import resources

    raw = (resources.files("budgetctx.data") / _BUNDLED).read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != _BUNDLED_SHA256:
        raise TokenizerError(
            f"The bundled Tekken vocabulary has sha256 {digest}, not {_BUNDLED_SHA256}; counts "
            "would not be exact. Reinstall budgetctx (pip install --force-reinstall budgetctx)."
        )
    header, _, body = lzma.decompress(raw).partition(b"\n")
    meta = json.loads(header)
    ranks: dict[bytes, int] = {}
    pos = 0
    while pos < len(body):
        n = body[pos]
        ranks[body[pos + 1 : pos + 1 + n]] = len(ranks)
        pos += 1 + n
    return str(meta["pattern"]), int(meta["num_special_tokens"]), ranks


def _from_json(path: Path) -> tuple[str, int, dict[bytes, int]]:
    try:
        data = json.loads(path.read_bytes())
        config = data["config"]
        special = int(config["default_num_special_tokens"])
        inner = int(config["default_vocab_size"]) - special
        vocab = data["vocab"][:inner]
        ranks = {base64.b64decode(t["token_bytes"]): int(t["rank"]) for t in vocab}
        pattern = str(config["pattern"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TokenizerError(
            f"Cannot read a Tekken vocabulary from {str(path)!r} ({type(exc).__name__}); pass "
            "Mistral's tekken.json (it has 'config' and 'vocab')."
        ) from exc
    if sorted(ranks.values()) != list(range(len(ranks))):
        raise TokenizerError(
            f"{str(path)!r} does not rank its tokens 0..n-1; pass Mistral's own tekken.json."
        )
    return pattern, special, ranks


@functools.cache
def _encoding(path: str | None) -> tuple[tiktoken.Encoding, int]:
    import tiktoken  # imported on first use (~30 ms of every cold start)

    pattern, special, ranks = _bundled() if path is None else _from_json(Path(path))
    name = "tekken" if path is None else f"tekken:{path}"
    enc = tiktoken.Encoding(name=name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    return enc, special


def _is_file(value: Any) -> bool:
    return isinstance(value, str | PathLike) and bool(str(value)) and Path(value).is_file()


# As for tiktoken's encodings (budgetctx.tokenizers._tiktoken): a whitespace run this long
# overflows the Rust regex's backtracking stack, so the stretches of such a run that would
# reach it go to the BPE on their own (see budgetctx.tokenizers._whitespace).
_LONG_WHITESPACE = 65_536
_LONG_RUN = re.compile(rf"\s{{{_LONG_WHITESPACE}}}")


class TekkenTokenizer:
    """Mistral's Tekken BPE (NeMo, Pixtral 12B, Ministral 8B, Small 2409): exact and offline,
    from the bundled vocabulary or a ``tekken.json`` at ``path`` (see the module's notes).
    Special-token text such as ``</s>`` is counted as ordinary text, as an API does with
    user content.

    >>> TekkenTokenizer().count("Na 135, K 4.1")
    11
    """

    exact = True
    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "path": NoneOr(
            Predicate(_is_file, "the path of an existing file"),
            fix="pass the path of a local Mistral tekken.json (nothing is downloaded), or None "
            "for the bundled vocabulary.",
        ),
    }

    def __init__(self, path: str | PathLike[str] | None = None) -> None:
        validate(type(self).__name__, self._constraints, {"path": path})
        self._path = None if path is None else str(Path(path).expanduser())
        self._enc, self._special = _encoding(self._path)

    @property
    def name(self) -> str:
        return "tekken" if self._path is None else f"tekken:{self._path}"

    def __repr__(self) -> str:
        return "TekkenTokenizer()" if self._path is None else f"TekkenTokenizer({self._path!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (TekkenTokenizer, (self._path,))

    def encode(self, text: str) -> list[int]:
        """Token ids as Tekken numbers them (after its special ids: 1,000 in Mistral's)."""
        return [i + self._special for i in self._encode(text)]

    def _encode(self, text: str) -> list[int]:
        try:
            if len(text) < _LONG_WHITESPACE or _LONG_RUN.search(text) is None:
                return self._enc.encode_ordinary(text)
            return encode_long_runs(self._enc, text, _LONG_WHITESPACE)
        except BaseException as exc:
            if not is_native_failure(exc):
                raise
            raise native_failure(self.name, exc, len(text)) from None

    def count(self, text: str) -> int:
        return len(self._encode(text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [len(self._encode(t)) for t in texts]

    def truncate(self, text: str, max_tokens: int) -> str:
        return truncate_ids(self._enc, text, self._encode(text), max_tokens, self.count)
