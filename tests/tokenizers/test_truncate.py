"""truncate(text, n): the longest prefix of text whose count is <= n, ending on a token boundary.

How far below ``n`` a cut text may land (its count, when the text did not fit):

* words: exactly ``n``. Words are whole.
* hf (WordPiece): ``n - 2`` at worst. WordPiece is greedy longest-match-first from the left, so
  a prefix that ends on a token's end offset re-tokenizes to those tokens, but MiniLM's
  normalizer decomposes a Hangul syllable into up to three jamo tokens that share its one
  character's offsets, and no cut falls inside a character: ``"싼"`` is 3 tokens, and at most 1
  keeps ``""`` (found by hypothesis).
* o200k_base / cl100k_base: ``n - 4`` at worst, and the bound is reached. Byte-level BPE can split
  one 4-byte character into 4 single-byte tokens; a cut inside it drops the partial character,
  i.e. up to 3 tokens. A whitespace run that was split before the next word (``"  x"`` is
  ``" "`` + ``" x"``) re-tokenizes as one run when it ends the text, costing one more:
  ``"  \\U0002ebee"`` is 6 tokens, and the longest prefix with at most 5 is ``"  "``, 1 token.
  On ASCII text (no partial characters) the slack is 1.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx.tokenizers import TiktokenTokenizer, Tokenizer, get_tokenizer

SLACK = {"o200k_base": 4, "cl100k_base": 4, "words": 0, "hf": 2}

_PIECES = st.sampled_from(
    [
        *[" ", "  ", "   ", "\n", "\r\n", "\t", "\u3000", "\xa0", "a", "Dr.", "p.o.", "b.i.d."],
        *["'s", "q.h.s.", "Na 135, K 4.1", "BP 120/80", "unbelievable", "ALLCAPS", "é"],
        *["e\u0301", "ß", "漢字", "患者", "שלום", "🧠", "👩\u200d⚕️", "\U0002ebee", "\U0001ad9d"],
        "<|endoftext|>",
    ]
)
TEXTS = st.one_of(st.text(max_size=60), st.lists(_PIECES, max_size=25).map("".join))


@pytest.fixture(scope="module", params=list(SLACK))
def tok(request: pytest.FixtureRequest, minilm_json: Path) -> Tokenizer:
    if request.param == "hf":
        return get_tokenizer(f"hf:{minilm_json}")
    return get_tokenizer(str(request.param))


def _kind(tok: Tokenizer) -> str:
    return "hf" if tok.name.startswith("hf:") else tok.name


def _check(tok: Tokenizer, text: str, max_tokens: int) -> str:
    out = tok.truncate(text, max_tokens)
    total = tok.count(text)
    assert text.startswith(out)
    if max_tokens < 0:
        assert out == ""
    else:
        assert tok.count(out) <= max_tokens
    if total <= max_tokens:
        assert out == text
    elif max_tokens >= 0:
        assert tok.count(out) >= max_tokens - SLACK[_kind(tok)]
    return out


@settings(max_examples=150, deadline=None)
@given(text=TEXTS, data=st.data())
def test_truncate_properties(tok: Tokenizer, text: str, data: st.DataObject) -> None:
    total = tok.count(text)
    max_tokens = data.draw(st.integers(-2, total + 2), label="max_tokens")
    _check(tok, text, max_tokens)


def test_a_character_is_never_cut_even_when_it_is_several_tokens(minilm_json: Path) -> None:
    tok = get_tokenizer(f"hf:{minilm_json}")
    assert tok.count("싼") == 3
    assert [tok.truncate("싼", n) for n in range(4)] == ["", "", "", "싼"]


@settings(max_examples=60, deadline=None)
@given(text=TEXTS)
def test_truncate_is_monotone_in_max_tokens(tok: Tokenizer, text: str) -> None:
    """A smaller budget cuts a prefix of what a larger budget keeps."""
    prev = ""
    for n in range(tok.count(text) + 1):
        out = _check(tok, text, n)
        assert out.startswith(prev)
        prev = out
    assert prev == text


@pytest.mark.parametrize("max_tokens", [0, -1, -100])
def test_non_positive_budget(tok: Tokenizer, max_tokens: int) -> None:
    for text in ["", "Aspirin 81 mg p.o. daily.", "🧠", "x"]:
        assert tok.truncate(text, max_tokens) == ""
    # A text with no tokens fits a zero budget and comes back whole; no text fits a negative one.
    blank = "" if _kind(tok) in {"o200k_base", "cl100k_base"} else " \n\t "
    assert tok.truncate(blank, max_tokens) == (blank if max_tokens == 0 else "")


def test_fitting_text_is_returned_unchanged(tok: Tokenizer) -> None:
    for text in ["Na 135, K 4.1  ", "  trailing\n\n", "\t🧠 é\u0301 ", "x"]:
        n = tok.count(text)
        assert tok.truncate(text, n) == text
        assert tok.truncate(text, n + 10) == text


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize(
    ("text", "max_tokens", "expected"),
    [
        ("🧠🧠🧠", 4, "🧠"),  # 3 tokens each: never half an emoji
        ("🧠🧠🧠", 2, ""),
        ("\U0002ebee", 3, ""),  # 4 single-byte tokens; a cut inside drops 3
        ("  \U0002ebee", 5, "  "),  # slack 4: 3 partial-character tokens + the whitespace run
        ("é" * 5, 100, "é" * 5),
    ],
)
def test_tiktoken_multibyte_cuts(name: str, text: str, max_tokens: int, expected: str) -> None:
    tok = get_tokenizer(name)
    assert tok.truncate(text, max_tokens) == expected
    if tok.count(text) > max_tokens:
        assert tok.count(expected) >= max_tokens - SLACK[name]


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_tiktoken_slack_bound_is_reached(name: str) -> None:
    tok = get_tokenizer(name)
    assert tok.count("  \U0002ebee") == 6
    assert tok.count(tok.truncate("  \U0002ebee", 5)) == 5 - SLACK[name]


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(st.characters(max_codepoint=127), max_size=80),
    data=st.data(),
)
def test_tiktoken_ascii_slack_is_one(text: str, data: st.DataObject) -> None:
    for name in ("o200k_base", "cl100k_base"):
        tok = get_tokenizer(name)
        total = tok.count(text)
        if total == 0:
            continue
        n = data.draw(st.integers(0, total - 1), label=name)
        assert n - 1 <= tok.count(tok.truncate(text, n)) <= n


@settings(max_examples=100, deadline=None)
@given(text=st.lists(_PIECES, max_size=12).map("".join), data=st.data())
def test_tiktoken_truncate_is_longest_whole_token_prefix(text: str, data: st.DataObject) -> None:
    """Against brute force over every token-boundary prefix (partial characters dropped).

    The implementation scans down from ``max_tokens`` tokens, so it can miss one trailing
    whitespace character that a prefix of ``max_tokens + 1`` tokens would add for free (the
    space re-merges into the run before it): allowed, and nothing more.
    """
    for name in ("o200k_base", "cl100k_base"):
        tok = TiktokenTokenizer(name)
        ids = tok.encode(text)
        n = data.draw(st.integers(0, len(ids)), label=name)
        out = tok.truncate(text, n)
        best = max(
            (
                p
                for k in range(len(ids) + 1)
                if tok.count(p := tok._enc.decode_bytes(ids[:k]).decode("utf-8", "ignore")) <= n
            ),
            key=len,
        )
        assert text.startswith(best)
        missed = best[len(out) :]
        if missed:
            assert len(missed) == 1 and missed.isspace(), (out, best)
            assert tok.count(out) == tok.count(best)


@pytest.mark.slow
def test_truncate_long_documents(tok: Tokenizer, leval_docs: dict[str, list[str]]) -> None:
    docs = [task_docs[0] for task_docs in leval_docs.values()]
    for doc in docs[:3]:
        for n in (1, 1000):
            _check(tok, doc, n)
