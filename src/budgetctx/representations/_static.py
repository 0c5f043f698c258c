"""Static word embeddings: query relevance by meaning with numpy only.

The bundled artifact ``budgetctx/data/static_minilm.npz`` (1.03 MB, under 1 MiB) holds a
160-dimensional vector for each of the 21,844 whole words (Latin script, two characters or
more, no ``##`` continuation pieces, no numbers) of all-MiniLM-L6-v2's word-piece vocabulary,
and a 48-dimensional one (the first 48 of the same components) for each of its 4,924 Latin
``##`` continuation pieces: the model's output for the piece alone (model2vec's
distillation), PCA-reduced, weighted by model2vec's Zipf/SIF rule and kept at 2 bits a value
(four Lloyd-Max levels, with one float16 scale per row and one spread per dimension). The
recipe and the command that rebuilds it are in :mod:`budgetctx.representations._static_build`;
how it was chosen is in docs/results.md (issue 22).
Licences: the weights are Apache-2.0 (sentence-transformers), model2vec is MIT.

A text's vector is the normalised sum of its words' vectors, stop words and punctuation left
out: "Which relative owns birds?" lands near "cousin ... keeps 14 parrots", which TF-IDF
cannot see (no shared term). A word outside the whole words counts as its longest known
prefix when that covers at least two thirds of it ("parrots" -> "parrot"); otherwise as
BERT's WordPiece split of it, the mean of its pieces' vectors at half a word's weight
("anticoagulation" -> anti ##co ##ag ##ulation), so that drug and disease names the
vocabulary lacks still carry meaning without blurring the text's vector as a full-weight sum
of fragments did. No torch, no tokenizer library; lookups are cached per word.

>>> enc = StaticEmbeddings.load()
>>> v = enc.encode(["My cousin keeps parrots.", "Fix the boiler.", "Which relative owns birds?"])
>>> sims = v[:2] @ v[2]
>>> bool(sims[0] > sims[1])
True
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import os
import re
import unicodedata
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from budgetctx.representations._static_build import checksum, unpack2, unpack_signs
from budgetctx.representations._tfidf_core import ENGLISH_STOP_WORDS

__all__ = ["ARTIFACT", "StaticEmbeddings", "semantic_relevance", "static_available"]

#: The bundled artifact's file name in ``budgetctx.data``.
ARTIFACT = "static_minilm.npz"
_MAX_WORD = 100  # BERT's limit: a longer "word" is unknown
#: A word outside the vocabulary counts as its longest known prefix only when that prefix
#: covers at least this share of it (an inflected or derived form, "parrots" -> "parrot").
#: Chosen on the needle benchmark's validation documents: better than every prefix (BERT's
#: first piece) or whole words only, under each of four quantizations (docs/results.md).
PREFIX_COVER = Fraction(2, 3)
#: A word split into word pieces (neither known nor covered by a prefix: "anticoagulation"
#: -> anti ##co ##ag ##ulation) counts as the mean of its pieces' vectors times this weight:
#: half a known word, since a piece means less than a word (needle validation, docs/results.md).
PIECE_WEIGHT = 0.5
_ARRAYS = (
    "vocab",
    "vectors",
    "scales",
    "dim_scales",
    "piece_vocab",
    "piece_vectors",
    "piece_scales",
    "piece_dim_scales",
)


class ArtifactError(RuntimeError):
    """The static embeddings could not be read (missing or altered file)."""


# a run of letters and digits, or one punctuation mark or symbol (BERT splits on each)
_TOKEN = re.compile(r"[^\W_]+|[^\w\s]|_")


def _words(text: str) -> list[str]:
    """BERT's basic uncased split: lowercase, accents stripped, punctuation on its own."""
    text = text.lower()
    if not text.isascii():
        text = "".join(
            c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn"
        )
    return _TOKEN.findall(text)


@dataclass(frozen=True, eq=False)
class StaticEmbeddings:
    """The loaded artifact: piece -> row, and the dequantized vectors (float32)."""

    vocab: dict[str, int]
    vectors: NDArray[np.float32]
    meta: dict[str, Any]
    #: continuation piece (without its "##") -> row of :attr:`vectors` (after the whole words)
    piece_vocab: dict[str, int] = field(default_factory=dict)
    _cache: dict[str, tuple[tuple[int, float], ...]] = field(default_factory=dict, repr=False)

    @classmethod
    @functools.cache
    def load(cls) -> StaticEmbeddings:
        """Read and verify the bundled artifact once per process."""
        try:
            ref = importlib.resources.files("budgetctx.data") / ARTIFACT
            with importlib.resources.as_file(ref) as path:
                return cls.from_file(path)
        except (OSError, KeyError, ValueError) as exc:
            raise ArtifactError(
                f"The static embeddings ({ARTIFACT}) cannot be read ({type(exc).__name__}); "
                "reinstall budgetctx, or rebuild them with "
                "python -m budgetctx.representations._static_build."
            ) from None

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> StaticEmbeddings:
        """Read and verify an artifact written by ``_static_build`` (for example a rebuilt
        one); :meth:`load` reads the bundled one."""
        with np.load(path) as z:
            names = [k for k in _ARRAYS if k in z.files]
            arrays = {k: z[k] for k in names}
            meta: dict[str, Any] = json.loads(z["meta"].tobytes())
        if checksum(arrays) != meta.get("sha256"):
            raise ArtifactError(
                f"The static embeddings ({ARTIFACT}) do not match their checksum; reinstall "
                "budgetctx, or rebuild them with python -m budgetctx.representations._static_build."
            )
        tokens = arrays["vocab"].tobytes().decode("utf-8").split("\n")
        packed, scales = arrays["vectors"], arrays["scales"].astype(np.float32)
        vocab = {t: i for i, t in enumerate(tokens)}
        if meta["bits"] in (1, 2):
            unpack = unpack_signs if meta["bits"] == 1 else unpack2
            vectors = unpack(packed, arrays["scales"], arrays["dim_scales"])
            if "piece_vocab" not in arrays:
                return cls(vocab, vectors, meta)
            # the pieces hold the first components only: padded with zeros, after the words
            short = unpack2(
                arrays["piece_vectors"], arrays["piece_scales"], arrays["piece_dim_scales"]
            )
            pieces = np.zeros((len(short), vectors.shape[1]), dtype=np.float32)
            pieces[:, : short.shape[1]] = short
            names = arrays["piece_vocab"].tobytes().decode("utf-8").split("\n")
            piece_vocab = {t: len(vectors) + i for i, t in enumerate(names)}
            return cls(vocab, np.vstack([vectors, pieces]), meta, piece_vocab)
        if meta["bits"] == 4:
            lo = (packed & 0xF).astype(np.int8)
            hi = (packed >> 4).astype(np.int8)
            q = np.empty((packed.shape[0], packed.shape[1] * 2), dtype=np.int8)
            q[:, 0::2] = np.where(lo > 7, lo - 16, lo)
            q[:, 1::2] = np.where(hi > 7, hi - 16, hi)
        else:
            q = packed.view(np.int8)
        vectors = (q.astype(np.float32) * scales[:, None]).astype(np.float32)
        return cls(vocab, vectors, meta)

    @property
    def dims(self) -> int:
        return int(self.vectors.shape[1])

    def _pieces(self, word: str) -> tuple[tuple[int, float], ...]:
        """The rows of one word and their weights: itself; else its longest known prefix when
        that covers :data:`PREFIX_COVER` of it; else BERT's WordPiece split (greedy longest
        match: the longest whole-word prefix, then ``##`` continuation pieces), each piece
        weighted :data:`PIECE_WEIGHT` / its number of pieces; () if none (BERT's [UNK])."""
        hit = self._cache.get(word)
        if hit is not None:
            return hit
        out: tuple[tuple[int, float], ...] = ()
        if len(word) <= _MAX_WORD and not word.isdigit():  # a number means nothing alone
            found = self.vocab.get(word, -1)
            end = len(word)
            while found < 0 and end > 2:  # whole-word rows have two characters or more
                end -= 1
                found = self.vocab.get(word[:end], -1)
            if found >= 0 and end >= len(word) * PREFIX_COVER:
                out = ((found, 1.0),)
            elif self.piece_vocab:
                out = self._split(word, found, end if found >= 0 else 1)
        if len(self._cache) < 200_000:
            self._cache[word] = out
        return out

    def _split(self, word: str, first: int, start: int) -> tuple[tuple[int, float], ...]:
        """The WordPiece continuation of ``word`` from ``start`` (``first``: the row of its
        first piece, -1 when that is a single character or a number, which have no vector)."""
        rows = [first] if first >= 0 else []
        while start < len(word):
            for end in range(len(word), start, -1):
                row = self.piece_vocab.get(word[start:end], -1)
                if row >= 0:
                    break
            else:
                return ()  # no piece fits: BERT's [UNK], the word counts for nothing
            rows.append(row)
            start = end
        weight = PIECE_WEIGHT / len(rows) if rows else 0.0
        return tuple((r, weight) for r in rows)

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        """One L2-normalised row per text (all zero when no piece is known)."""
        rows: list[int] = []
        cols: list[int] = []
        weights: list[float] = []
        for r, text in enumerate(texts):
            for w in _words(text):
                if w in ENGLISH_STOP_WORDS or (len(w) == 1 and not w.isalnum()):
                    continue
                for i, weight in self._pieces(w):
                    rows.append(r)
                    cols.append(i)
                    weights.append(weight)
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        if rows:
            from scipy import sparse

            # counts (texts x pieces) times vectors: one sparse product, several times
            # faster than np.add.at at 256 dimensions; the sums' order is fixed by the CSR
            # layout, so a text's vector is the same bits on every run
            counts = sparse.csr_matrix(
                (np.asarray(weights, dtype=np.float32), (rows, cols)),
                shape=(len(texts), len(self.vectors)),
            )
            out = np.asarray(counts @ self.vectors, dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def static_available() -> bool:
    """Whether the bundled static embeddings can be read (they ship with budgetctx)."""
    try:
        StaticEmbeddings.load()
    except ArtifactError:
        return False
    return True


#: Hybrid relevance: how far above the document's typical unit a unit's meaning must be to
#: count (in standard deviations of the units' similarities to the query), and the weight of
#: the semantic part against the lexical TF-IDF cosine. Chosen on the needle benchmark's
#: validation documents (docs/results.md, issue 22): from 2.5 up (2.5-3.0 select alike) the
#: lexical questions found every needle TF-IDF alone finds, at 128, 256 and 512 tokens; at
#: 1.5 a few units' small semantic scores, near the top of a long document where the lead
#: prior is strongest, outranked an exact lexical match deep in it.
SEMANTIC_THRESHOLD = 2.5
SEMANTIC_WEIGHT = 1.0


def semantic_relevance(texts: list[str], query: str) -> NDArray[np.float64] | None:
    """Per unit, in [0, 1]: how much more the unit means what ``query`` means than the
    document's typical unit does; None when the query has no known word piece.

    The similarity ``s_i`` of each unit to the query is standardised over the document
    (``z_i = (s_i - mean) / std``); units less than :data:`SEMANTIC_THRESHOLD` deviations
    above the mean (half the best unit's, when that is lower) get 0, the best unit the best
    similarity. Standardising keeps the score peaked: a document
    about one subject has every unit somewhat near any query on that subject, and only what
    stands out should compete with a lexical match.
    """
    enc = StaticEmbeddings.load()
    vecs = enc.encode([*texts, query])
    q = vecs[-1].astype(np.float64)
    if not q.any():
        return None
    s = vecs[:-1].astype(np.float64) @ q
    n = len(s)
    if n == 0:
        return np.zeros(0)
    sd = float(s.std())
    if n < 3 or sd <= 1e-9:
        flat: NDArray[np.float64] = np.clip(s, 0.0, None)
        return flat
    z = (s - float(s.mean())) / sd
    top = float(z.max())
    if top <= 0:
        return np.zeros(n)
    # a short document cannot reach the threshold (z <= sqrt(n - 1)): then half the best z
    cut = min(SEMANTIC_THRESHOLD, top / 2)
    out: NDArray[np.float64] = np.clip((z - cut) / (top - cut), 0.0, None) * float(
        np.clip(s.max(), 0.0, 1.0)
    )
    return out
