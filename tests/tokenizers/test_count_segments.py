"""``TiktokenTokenizer.count_segments``: segment counts read back from one encoding of the
document equal counting every segment on its own, for any text, span and separator."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx.tokenizers import TiktokenTokenizer
from budgetctx.unitizers import segment_text

ENCODINGS = ["o200k_base", "cl100k_base"]
SEPARATORS = ["\n", " ", "\n\n", "", " — ", ". ", "\r\n", "/", "\t", "'s "]

# Characters that decide piece boundaries: letters of both cases, digits, apostrophes,
# punctuation that o200k merges with line breaks and slashes, every kind of blank, marks,
# CJK and astral characters.
_ALPHABET = [
    *"aAbZz09'’./-,:;()!?\"",
    " ",
    " ",
    " ",
    "\n",
    "\r",
    "\t",
    "\u2028",
    "\xa0",
    "\x1c",
    "\u0301",
    "é",
    "ß",
    "患",
    "。",
    "٣",
    "\U0001f600",
]
texts = st.text(alphabet=st.sampled_from(_ALPHABET), min_size=0, max_size=80)


@st.composite
def text_and_spans(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    text = draw(texts)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    spans = [(a, b) for a, b in itertools.pairwise(cuts) if b > a]
    return text, spans


@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=80, deadline=None)
@given(case=text_and_spans(), separator=st.sampled_from(SEPARATORS))
def test_equals_counting_each_span(
    name: str, case: tuple[str, list[tuple[int, int]]], separator: str
) -> None:
    text, spans = case
    tok = TiktokenTokenizer(name)
    counts, total = tok.count_segments(text, spans, separator)
    assert total == tok.count(text)
    assert counts == [tok.count(text[a:b] + separator) for a, b in spans]


@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=40, deadline=None)
@given(
    words=st.lists(
        st.text(alphabet=st.sampled_from(_ALPHABET), min_size=1, max_size=9), max_size=40
    ),
    separator=st.sampled_from(SEPARATORS),
)
def test_equals_counting_each_segment(name: str, words: list[str], separator: str) -> None:
    # prose-like text, split where the segmenter splits it (the spans count_segments is for)
    text = " ".join(words)
    spans = [(s.start, s.end) for s in segment_text(text)]
    tok = TiktokenTokenizer(name)
    counts, total = tok.count_segments(text, spans, separator)
    assert total == tok.count(text)
    assert counts == [tok.count(text[a:b] + separator) for a, b in spans]


def test_a_note_takes_two_encodings() -> None:
    """The bundled note: the document and one string of first and last words are encoded,
    and only segments without an inner space are counted on their own."""
    from budgetctx.data import sample_note

    text = sample_note()
    spans = [(s.start, s.end) for s in segment_text(text)]
    tok = TiktokenTokenizer("o200k_base")
    calls: list[str] = []
    encode = tok._encode_array

    def counting(t: str) -> Any:
        calls.append(t)
        return encode(t)

    tok._encode_array = counting  # type: ignore[method-assign]
    tok.encode = counting  # type: ignore[method-assign]  # (any other path counts too)
    counts, _ = tok.count_segments(text, spans, "\n")
    assert len(calls) == 2
    assert counts == [TiktokenTokenizer("o200k_base").count(text[a:b] + "\n") for a, b in spans]


@pytest.mark.parametrize("name", ENCODINGS)
def test_token_byte_lengths_read_from_the_rank_file(name: str) -> None:
    from budgetctx.tokenizers import _tiktoken

    ranks = _tiktoken._encoding(name)._mergeable_ranks
    lengths = _tiktoken._TOKEN_BYTES[name]
    assert lengths is not None
    assert lengths.tolist() == [len(token) for token in ranks]
    assert list(ranks.values()) == list(range(len(ranks)))


@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=60, deadline=None)
@given(
    parts=st.lists(st.sampled_from([*_ALPHABET, "<|endoftext|>", "<|fim_prefix|>"]), max_size=60)
)
def test_encode_array_is_encode_ordinary(name: str, parts: list[str]) -> None:
    """The buffer path (tiktoken's encode with no special token allowed) reads special-token
    text as ordinary text, as encode_ordinary does: the same ids."""
    from budgetctx.tokenizers import _tiktoken

    text = "".join(parts)
    tok = TiktokenTokenizer(name)
    assert _tiktoken.encode_array(tok._enc, text).tolist() == tok.encode(text)


def test_space_mask_is_str_isspace_for_every_code_point() -> None:
    """The range tests and the table for rare characters call exactly what ``str.isspace``
    calls whitespace, over the whole of Unicode (and a wrong mask here can be caught)."""
    import numpy as np

    from budgetctx.tokenizers._tiktoken import _space_mask

    codes = np.arange(0x110000, dtype=np.uint32)
    expected = np.fromiter((chr(c).isspace() for c in range(0x110000)), dtype=bool)
    got = _space_mask(codes)
    assert got.dtype == np.bool_
    assert np.array_equal(got, expected)
    assert not np.array_equal(_space_mask(codes + np.uint32(1))[:-1], expected[:-1])


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from(
            [
                *("a", " ", "\n", "\x7f", "\x80", "é", "\u07ff", "\u0800", "’", "中", "\uffff"),
                *("\U00010000", "\U0001f600", "\U0010ffff"),
            ]
        ),
        max_size=40,
    )
)
def test_byte_offsets_are_each_characters_utf8_offset(text: str) -> None:
    """``_byte_offsets(text)[i]`` is the UTF-8 length of ``text[:i]`` for every i up to the
    end (None for ASCII, where the offsets are the characters'), whatever the widths mixed."""
    import numpy as np

    from budgetctx.tokenizers._tiktoken import _byte_offsets, _codes

    got = _byte_offsets(text, _codes(text))
    if text.isascii():
        assert got is None
        return
    assert got is not None and got.dtype == np.int64
    assert got.tolist() == [len(text[:i].encode("utf-8")) for i in range(len(text) + 1)]
