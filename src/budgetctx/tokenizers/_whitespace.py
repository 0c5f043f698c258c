"""tiktoken's ids for a text holding a whitespace run too long for tiktoken's own regex.

tiktoken's pre-tokenizer (fancy-regex, for the lookahead in ``\\s+(?!\\S)``) runs out of its
backtracking stack and panics when that alternative meets about a million whitespace
characters with no line break: the stretch after a run's last line break (or a whole run
without one), followed by a non-space or, for o200k and Tekken, by the end of the text. Runs
with line breaks are matched by ``\\s*[\\r\\n]+`` and never panic, nor does cl100k's possessive
``\\s++$`` at the end of a text (measured: tiktoken 0.14, a million characters).

So only such a stretch is taken out of tiktoken's regex, at cuts that are piece boundaries of
the whole text, which the pattern's whitespace alternatives fix without reading any letter,
digit or symbol class (where engines of other Unicode versions disagree, see issue 27):

- the stretch starts a piece: it follows a line break (``\\s*[\\r\\n]+`` ends at a run's last
  line break, and a symbol's ``[\\r\\n/]*`` at its first other character) or a non-space
  (nothing but ``[\\r\\n]`` carries a piece into a run);
- up to its last character it is one piece (``\\s+(?!\\S)``: no letter follows its first
  character, no line break is left in it), and its last character starts the next piece
  (alone, or as the prefix of a word or a symbol run); at the end of the text the whole stretch
  is one piece;
- the text before the stretch ends with a line break or a non-space, where tiktoken's regex
  gives the same pieces as in the whole text, and the text after the cut is read from a piece
  boundary (no pattern looks behind).

Each stretch goes to the BPE as one piece (``_encode_single_piece``, what ``encode_ordinary``
does after its regex) and everything else to tiktoken's own ``encode_ordinary``, so the ids
are tiktoken's wherever tiktoken itself does not panic, whatever the Unicode version of any
other module. ``tests/tokenizers/test_whitespace.py`` checks this against tiktoken with the
threshold lowered to one character. A pattern not listed in :data:`_END_RUN_IS_ONE_PIECE` is
split by the ``regex`` module, as before (exact except around code points that module's
Unicode version classes differently from tiktoken's).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

__all__ = ["encode_long_runs"]

# Unicode White_Space (what the Rust regex engines call \s) without \r and \n: Python's \s and
# str.isspace() also take U+001C-U+001F, which the patterns read as symbols.
_BLANK = "\t\x0b\x0c \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"

# pattern -> whether a whitespace run that ends the text is one piece (cl100k's ``\s++$``,
# tried before the line-break alternative; it never panics, so such a run is left to tiktoken).
# Only patterns whose whitespace alternatives were checked for the rules above are listed.
_O200K = (
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
    r"""|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
    r"""|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
_TEKKEN = (
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
    r"""|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
    r"""|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
_CL100K = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_END_RUN_IS_ONE_PIECE: dict[str, bool] = {_O200K: False, _TEKKEN: False, _CL100K: True}


@functools.cache
def _stretches(min_length: int) -> re.Pattern[str]:
    """Stretches of at least ``min_length`` blanks (white space but line breaks) that follow a
    line break, a non-space or the start, and are followed by a non-space or the end."""
    return re.compile(rf"(?<![{_BLANK}])[{_BLANK}]{{{min_length},}}(?![{_BLANK}\r\n])")


def encode_long_runs(enc: tiktoken.Encoding, text: str, min_length: int) -> list[int]:
    """``enc.encode_ordinary(text)``, with every stretch of ``min_length`` or more blanks that
    tiktoken's regex would meet in ``\\s+(?!\\S)`` handed to the BPE as its own piece.

    >>> from budgetctx.tokenizers._tiktoken import _encoding
    >>> enc = _encoding("cl100k_base")
    >>> text = "Plan:" + " " * 12 + "rest."
    >>> encode_long_runs(enc, text, 8) == enc.encode_ordinary(text)
    True
    """
    end_run_whole = _END_RUN_IS_ONE_PIECE.get(enc._pat_str)
    if end_run_whole is None:
        return _regex_split(enc, text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: repaired as tiktoken repairs them
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    out: list[int] = []
    done = 0  # text[:done] is encoded, and done is a piece boundary
    for match in _stretches(min_length).finditer(text):
        start, end = match.span()
        if end == len(text) and end_run_whole:
            break  # one piece with the run before it, and tiktoken takes it
        if start > done:
            out += enc.encode_ordinary(text[done:start])
        # the last blank before a non-space starts the next piece
        stop = end if end == len(text) else end - 1
        if stop > start:
            out += enc._encode_single_piece(text[start:stop])
        done = stop
    if done < len(text):
        out += enc.encode_ordinary(text[done:])
    return out


def _regex_split(enc: tiktoken.Encoding, text: str) -> list[int]:
    """The pieces of ``enc``'s pattern found by the ``regex`` module, each through the BPE."""
    import regex

    piece = enc._encode_single_piece
    return [i for p in regex.findall(enc._pat_str, text) for i in piece(p)]
