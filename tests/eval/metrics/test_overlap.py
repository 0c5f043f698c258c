"""Token F1 (SQuAD-style) and the paper's Appendix D overlap: hand-computed values."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx.eval.metrics import PRF, normalize_answer, paper_overlap, token_f1


def test_token_f1_hand_computed() -> None:
    # "the" and "." are dropped: [cat, sat] vs [cat, sat, on, mat] -> P 2/2, R 2/4
    assert token_f1("The cat sat.", "the cat sat on the mat") == PRF(1.0, 0.5, pytest.approx(2 / 3))
    # multiset: three "cat" against one -> overlap 1
    assert token_f1("cat cat cat", "cat") == PRF(pytest.approx(1 / 3), 1.0, 0.5)
    assert token_f1("a cat", "the cat") == PRF(1.0, 1.0, 1.0)
    assert token_f1("dog", "cat") == PRF(0.0, 0.0, 0.0)


def test_token_f1_normalisation() -> None:
    assert normalize_answer("An apple, THE pear!") == ["apple", "pear"]
    assert normalize_answer("theory another") == ["theory", "another"]  # only whole words


@pytest.mark.parametrize(("cand", "ref"), [("", "cat"), ("cat", ""), ("", ""), ("the", "a")])
def test_token_f1_empty_is_zero(cand: str, ref: str) -> None:
    # both-empty is 0 here (the SQuAD v2 script would say 1): no "no answer" convention
    assert token_f1(cand, ref) == PRF(0.0, 0.0, 0.0)


def test_paper_overlap_hand_computed() -> None:
    out = paper_overlap("the cat sat", "the cat sat on the mat")
    assert out["unigram"] == PRF(1.0, 0.5, pytest.approx(2 / 3))
    # bigrams of the reference: the-cat cat-sat sat-on on-the the-mat -> 2 of 5
    assert out["bigram"] == PRF(1.0, 0.4, pytest.approx(4 / 7))
    swapped = paper_overlap("the cat sat on the mat", "the cat sat")
    assert (swapped["unigram"].p, swapped["unigram"].r) == (0.5, 1.0)


def test_paper_overlap_is_a_multiset_overlap() -> None:
    out = paper_overlap("the the the", "the cat")
    assert out["unigram"] == PRF(pytest.approx(1 / 3), 0.5, pytest.approx(0.4))
    assert out["bigram"] == PRF(0.0, 0.0, 0.0)


def test_paper_overlap_case_and_punctuation() -> None:
    assert paper_overlap("The Cat", "the cat")["unigram"].f == 1.0
    assert paper_overlap("The Cat", "the cat", lowercase=False)["unigram"].f == 0.0
    # whitespace tokens: punctuation stays attached, nothing is stemmed
    assert paper_overlap("mat.", "mat")["unigram"].f == 0.0
    assert paper_overlap("running", "run")["unigram"].f == 0.0


@pytest.mark.parametrize(("cand", "ref"), [("", "cat"), ("cat", ""), ("", ""), ("cat", "cat")])
def test_paper_overlap_empty_and_single_token(cand: str, ref: str) -> None:
    out = paper_overlap(cand, ref)
    assert out["bigram"] == PRF(0.0, 0.0, 0.0)
    assert out["unigram"].f == (1.0 if cand and ref else 0.0)


_TEXT = st.lists(st.sampled_from(["the", "a", "cat", "Cat", "sat", "mat.", "on"]), max_size=25).map(
    " ".join
)


@settings(max_examples=200, deadline=None)
@given(_TEXT, _TEXT)
def test_overlap_properties(a: str, b: str) -> None:
    for ab, ba in (
        (token_f1(a, b), token_f1(b, a)),
        (paper_overlap(a, b)["unigram"], paper_overlap(b, a)["unigram"]),
        (paper_overlap(a, b)["bigram"], paper_overlap(b, a)["bigram"]),
    ):
        assert 0.0 <= ab.f <= 1.0
        assert min(ab.p, ab.r) <= ab.f + 1e-12 and ab.f <= max(ab.p, ab.r) + 1e-12
        assert (ab.p, ab.r) == (ba.r, ba.p)
    same = token_f1(a, a)
    assert same.p == same.r
    assert same.f in (0.0, 1.0)
