"""The words tokenizer: ``len(text.split())``, with unicode whitespace."""

from __future__ import annotations

import itertools
import pickle
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx.tokenizers import WordTokenizer

# Every code point str.split() splits on (29 of them in Python 3.11).
WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]

_WORDS_TEXT = st.lists(
    st.one_of(st.sampled_from(WHITESPACE), st.text(min_size=1, max_size=4)), max_size=30
).map("".join)


def _runs(text: str) -> list[str]:
    """Maximal runs of non-whitespace: an independent definition of the words."""
    return ["".join(g) for space, g in itertools.groupby(text, str.isspace) if not space]


def test_whitespace_table() -> None:
    assert len(WHITESPACE) >= 25
    for ch in ("\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x85", "\xa0", "\u2028", "\u3000"):
        assert ch in WHITESPACE
    for ch in ("\u200b", "\ufeff", "\u180e", "\u2060"):  # zero-width: not whitespace
        assert ch not in WHITESPACE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("   \n\t", 0),
        ("Na 135, K 4.1", 4),
        ("Aspirin 81 mg p.o. daily.", 5),
        ("  leading and trailing  ", 3),
        ("a\u3000b\xa0c\u2028d\u205fe", 5),
        ("zero\u200bwidth\ufeffjoined", 1),
        ("患者は高血圧 の既往", 2),
        ("🧠 👩\u200d⚕️", 2),
    ],
)
def test_count(text: str, expected: int) -> None:
    tok = WordTokenizer()
    assert tok.count(text) == expected
    assert tok.count(text) == len(text.split()) == len(_runs(text))


@pytest.mark.parametrize("ch", WHITESPACE, ids=[f"U+{ord(c):04X}" for c in WHITESPACE])
def test_every_unicode_whitespace_separates(ch: str) -> None:
    tok = WordTokenizer()
    text = f"a{ch}b{ch}{ch}c{ch}"
    assert tok.count(text) == 3
    assert tok.truncate(text, 1) == "a"
    assert tok.truncate(text, 2) == f"a{ch}b"
    assert tok.truncate(text, 3) == text


@settings(max_examples=200, deadline=None)
@given(text=_WORDS_TEXT)
def test_count_is_split(text: str) -> None:
    tok = WordTokenizer()
    assert tok.count(text) == len(text.split()) == len(_runs(text))


@settings(max_examples=200, deadline=None)
@given(text=_WORDS_TEXT, n=st.integers(-1, 35))
def test_truncate_keeps_whole_words(text: str, n: int) -> None:
    tok = WordTokenizer()
    out = tok.truncate(text, n)
    assert text.startswith(out)
    if len(text.split()) <= n:
        assert out == text
    else:
        assert out.split() == text.split()[: max(n, 0)]
        # The cut is at the end of the n-th word: no trailing whitespace, no partial word.
        if out:
            assert not out[-1].isspace()
            assert text[len(out)].isspace()


def test_truncate_examples() -> None:
    tok = WordTokenizer()
    assert tok.truncate("Na 135, K 4.1", 2) == "Na 135,"
    assert tok.truncate("  Na 135,  ", 1) == "  Na"
    assert tok.truncate("  Na 135,  ", 2) == "  Na 135,  "  # fits: unchanged
    assert tok.truncate("   ", 0) == "   "  # no words fit a zero budget
    assert tok.truncate("a b", 0) == ""
    assert tok.truncate("a b", -1) == ""


def test_count_batch_and_pickle() -> None:
    tok = WordTokenizer()
    texts = ["", "a b", "a\u3000b c"] * 30
    assert tok.count_batch(texts) == [tok.count(t) for t in texts]
    back = pickle.loads(pickle.dumps(tok))
    assert back.name == "words"
    assert repr(back) == "WordTokenizer()"
