"""Length of a longest common subsequence, bit-parallel.

rouge_score fills an ``|a| x |b|`` table in pure Python (about 0.3 s for 2,000 x 300 tokens).
The bit-parallel recurrence of Crochemore et al. (2001) / Hyyrö (2004) gives the same length
with one big-integer update per token of the shorter sequence (about 1 ms for the same pair).
The tests check it against rouge_score's table on random inputs.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

__all__ = ["lcs_length"]


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of a longest common subsequence of ``a`` and ``b``.

    >>> lcs_length("ABCBDAB", "BDCABA")
    4
    """
    if len(a) < len(b):
        a, b = b, a  # bits over the longer sequence, one step per item of the shorter
    if not b:
        return 0
    masks: dict[Hashable, int] = {}
    for i, item in enumerate(a):
        masks[item] = masks.get(item, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full  # a 0 bit marks a position of ``a`` that the current LCS uses
    for item in b:
        u = v & masks.get(item, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()
