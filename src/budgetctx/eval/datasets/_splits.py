"""Deterministic validation/test assignment by hashing a group key."""

from __future__ import annotations

import hashlib
import math

from budgetctx._errors import InvalidParameterError
from budgetctx.eval.datasets._example import Split

__all__ = ["DEFAULT_VALIDATION_FRACTION", "assign_split", "check_fraction"]

DEFAULT_VALIDATION_FRACTION = 0.3


def check_fraction(validation_fraction: float) -> float:
    if (
        isinstance(validation_fraction, bool)
        or not isinstance(validation_fraction, int | float)
        or not math.isfinite(validation_fraction)
        or not 0.0 <= validation_fraction <= 1.0
    ):
        raise InvalidParameterError(
            "The 'validation_fraction' parameter must be a float in [0, 1]. "
            f"Got {validation_fraction!r} instead.",
            parameter="validation_fraction",
            value=validation_fraction,
        )
    return float(validation_fraction)


def assign_split(
    group_key: str, *, seed: int = 0, validation_fraction: float = DEFAULT_VALIDATION_FRACTION
) -> Split:
    """``"validation"`` or ``"test"`` for a group, from sha256 of ``f"{seed}:{group_key}"``.

    The answer depends only on the key and the seed (not on file order, the platform or
    PYTHONHASHSEED), so every example of one group (one document, one patient) shares a split.

    >>> assign_split("doc-2", seed=0), assign_split("doc-2", seed=1)
    ('test', 'validation')
    """
    # surrogatepass: a document with a lone surrogate (a bad "\ud800" escape in JSON) still
    # gets a split, so that the sweep can report it as a failed example by id; valid text
    # hashes exactly as before.
    digest = hashlib.sha256(f"{seed}:{group_key}".encode("utf-8", "surrogatepass")).digest()
    # 8 bytes give a uniform fraction in [0, 1) with far more resolution than any split needs.
    fraction = int.from_bytes(digest[:8], "big") / 2**64
    return "validation" if fraction < validation_fraction else "test"
