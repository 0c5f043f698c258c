"""The guard against tiktoken's whitespace-run panic gives tiktoken's own ids: on tiktoken's
path (lone surrogates, ``BUDGETCTX_TIKTOKEN_ONLY=1``) and in Tekken, around code points that
other Unicode versions class differently (planes 3 and above) too."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx.tokenizers import TiktokenTokenizer, _tekken, _tiktoken, _whitespace
from budgetctx.tokenizers._tekken import TekkenTokenizer

ENCODINGS = ["o200k_base", "cl100k_base"]

# U+32A76 is unassigned for tiktoken's regex engine (a symbol) and a letter for the ``regex``
# module's newer Unicode: the split by the ``regex`` module put "'S" after it as a contraction.
REPRODUCER = "\U00032a76'S" + " " * 65_536 + "x"


@pytest.mark.parametrize("name", ENCODINGS)
def test_the_reproducer_gives_tiktokens_ids(name: str) -> None:
    enc = _tiktoken._encoding(name)
    assert _tiktoken._long_run(REPRODUCER)  # the guarded path, at its real threshold
    assert _tiktoken.encode_ordinary(enc, REPRODUCER) == enc.encode_ordinary(REPRODUCER)
    # before: the regex module's split of the same text
    old = [
        i for p in _tiktoken._pieces(name).findall(REPRODUCER) for i in enc._encode_single_piece(p)
    ]
    assert old != enc.encode_ordinary(REPRODUCER)


def test_the_reproducer_in_tekken() -> None:
    tok = TekkenTokenizer()
    text = REPRODUCER + "\n\n" + REPRODUCER
    assert _tekken._LONG_RUN.search(text) is not None
    assert tok._encode(text) == tok._enc.encode_ordinary(text)


def test_each_checked_pattern_is_listed() -> None:
    # the rules hold for these patterns' whitespace alternatives; a pattern changed or added
    # must be checked again (others fall back to the regex module's split)
    listed = _whitespace._END_RUN_IS_ONE_PIECE
    assert listed[_tiktoken._SPECS["o200k_base"]["pat_str"]] is False
    assert listed[_tiktoken._SPECS["cl100k_base"]["pat_str"]] is True
    assert listed[_tekken._bundled()[0]] is False
    assert len(listed) == 3


_BLANKS = [" ", "\t", "\x0b", "\x0c", "\x85", "\xa0", "\u1680", "\u2003", "\u2028", "\u202f"]
_BREAKS = ["\n", "\r", "\r\n", "\u3000\n", "\n\n"]
_OTHER = [
    *("a", "S", "Hello", "'S", "'s", "'ll", "123", "7", ".", "/", "!!", "-", "\u0301", "中"),
    *("\x1c", "\x1f", "<|endoftext|>", "\U0001f600"),
    # planes 3 and above: assigned late, or never (where Unicode versions disagree)
    *("\U00032a76", "\U00031350", "\U000323af", "\U00030000", "\U0002ebf0", "\U0003fffd"),
    *("\U000e0100", "\U000e0001", "\U000f0000", "\U0010fffd"),
]
_SURROGATES = ["\ud800", "\udfff", "\ud83d\ude00"]  # tiktoken repairs them (a pair: one emoji)


def _texts(*, surrogates: bool) -> st.SearchStrategy[str]:
    run = st.tuples(st.sampled_from(_BLANKS), st.integers(1, 12)).map(lambda ck: ck[0] * ck[1])
    pieces = [st.sampled_from(_OTHER), st.sampled_from(_BREAKS), run, st.sampled_from(_BLANKS)]
    if surrogates:
        pieces.append(st.sampled_from(_SURROGATES))
    return st.lists(st.one_of(*pieces), max_size=30).map("".join)


@pytest.fixture
def lowered() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as m:
        yield m


def _lower(m: pytest.MonkeyPatch, n: int) -> None:
    """The panic guard's threshold at ``n`` characters (its runs are then cheap to build): tiktoken,
    which does not panic on such short runs, is the oracle."""
    m.setattr(_tiktoken, "_LONG_WHITESPACE", n)
    m.setattr(_tiktoken, "_LONG_RUN", re.compile(rf"\s{{{n}}}"))
    m.setattr(_tekken, "_LONG_WHITESPACE", n)
    m.setattr(_tekken, "_LONG_RUN", re.compile(rf"\s{{{n}}}"))


@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=300, deadline=None)
@given(text=_texts(surrogates=True), n=st.integers(1, 4))
def test_the_guarded_path_gives_tiktokens_ids(name: str, text: str, n: int) -> None:
    enc = _tiktoken._encoding(name)
    with pytest.MonkeyPatch.context() as m:
        _lower(m, n)
        assert _tiktoken.encode_ordinary(enc, text) == enc.encode_ordinary(text)


@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=100, deadline=None)
@given(text=_texts(surrogates=True))
def test_the_tiktoken_only_tokenizer_counts_as_tiktoken(name: str, text: str) -> None:
    tok = TiktokenTokenizer(name)
    enc = _tiktoken._encoding(name)
    with pytest.MonkeyPatch.context() as m:
        _lower(m, 1)
        m.setattr(tok, "_fast", None)  # what BUDGETCTX_TIKTOKEN_ONLY=1 builds
        want = enc.encode_ordinary(text)
        assert tok.encode(text) == want
        assert tok.count(text) == len(want)
        assert tok._encode_array(text).tolist() == want


@settings(max_examples=300, deadline=None)
@given(text=_texts(surrogates=False), n=st.integers(1, 4))
def test_tekken_gives_tiktokens_ids(text: str, n: int) -> None:
    tok = TekkenTokenizer()
    with pytest.MonkeyPatch.context() as m:
        _lower(m, n)
        assert tok._encode(text) == tok._enc.encode_ordinary(text)


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize(
    "text",
    [
        pytest.param("\U00032a76." + "\n" * 3 + " " * 70_000 + "x", id="symbol-breaks-blanks"),
        pytest.param("a" + " " * 70_000, id="blanks-at-end"),
        pytest.param("a\n" + " " * 70_000, id="break-blanks-at-end"),
        pytest.param("\U000e0100 " + "\u3000" * 70_000 + "\U00032a76", id="plane-14-16"),
        pytest.param("x\ud800" + " " * 70_000 + "\udfffy", id="lone-surrogates"),
    ],
)
def test_real_size_runs_give_tiktokens_ids(name: str, text: str) -> None:
    enc = _tiktoken._encoding(name)
    assert _tiktoken._long_run(text)
    assert _tiktoken.encode_ordinary(enc, text) == enc.encode_ordinary(text)


def test_an_unchecked_pattern_falls_back_to_the_regex_split() -> None:
    import tiktoken

    base = _tiktoken._encoding("cl100k_base")
    enc = tiktoken.Encoding(
        name="other",
        pat_str=r"\s+(?!\S)|\s+|\S+",
        mergeable_ranks=base._mergeable_ranks,
        special_tokens={},
    )
    text = "a" + " " * 100 + "b c"
    assert _whitespace.encode_long_runs(enc, text, 10) == enc.encode_ordinary(text)
