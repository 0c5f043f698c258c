"""ROUGE: hand-computed values, argument order, stemming, empties, identity with rouge_score."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from budgetctx import InvalidParameterError
from budgetctx.eval.metrics import PRF, Rouge, lcs_length

CAND = "the cat sat"
REF = "the cat sat on the mat"


@pytest.mark.parametrize("fast", [True, False])
def test_hand_computed_rouge(fast: bool) -> None:
    s = Rouge(fast=fast).score(CAND, REF)
    # unigrams: the, cat, sat all in the reference -> 3 / 3 and 3 / 6
    assert s.rouge1 == PRF(1.0, 0.5, pytest.approx(2 / 3))
    # bigrams: (the cat), (cat sat) of the reference's 5 -> 2 / 2 and 2 / 5; F = 2*0.4/1.4 = 4/7
    assert s.rouge2 == PRF(1.0, 0.4, pytest.approx(4 / 7))
    # LCS "the cat sat" = 3 -> 3 / 3 and 3 / 6
    assert s.rougeL == PRF(1.0, 0.5, pytest.approx(2 / 3))


@pytest.mark.parametrize("fast", [True, False])
def test_argument_order_is_candidate_then_reference(fast: bool) -> None:
    # rouge_score's own score() takes the reference first; ours must not.
    s = Rouge(fast=fast).score(candidate=CAND, reference=REF)
    assert (s.rouge1.p, s.rouge1.r) == (1.0, 0.5)
    swapped = Rouge(fast=fast).score(REF, CAND)
    assert (swapped.rouge1.p, swapped.rouge1.r) == (0.5, 1.0)
    assert (swapped.rouge2.p, swapped.rouge2.r) == (0.4, 1.0)
    assert (swapped.rougeL.p, swapped.rougeL.r) == (0.5, 1.0)


def test_stemming_changes_running_vs_run() -> None:
    assert Rouge(use_stemmer=True).score("patient running", "patient run").rouge1.f == 1.0
    assert Rouge(use_stemmer=False).score("patient running", "patient run").rouge1.f == 0.5


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize(("cand", "ref"), [("", REF), (CAND, ""), ("", ""), ("!!! ...", REF)])
def test_empty_side_scores_zero(fast: bool, cand: str, ref: str) -> None:
    s = Rouge(fast=fast).score(cand, ref)
    for prf in (s.rouge1, s.rouge2, s.rougeL):
        assert prf == PRF(0.0, 0.0, 0.0)


def test_score_batch_and_to_dict() -> None:
    rouge = Rouge()
    out = rouge.score_batch([CAND, ""], [REF, REF])
    assert out[0] == rouge.score(CAND, REF)
    assert out[1].rouge1.f == 0.0
    d = out[0].to_dict()
    assert set(d) == {"rouge1", "rouge2", "rougeL"}
    assert d["rouge1"] == {"p": 1.0, "r": 0.5, "f": pytest.approx(2 / 3)}
    assert rouge.score_batch([], []) == []


def test_score_batch_rejects_bad_input() -> None:
    with pytest.raises(InvalidParameterError, match="same length"):
        Rouge().score_batch([CAND], [REF, REF])
    with pytest.raises(InvalidParameterError, match="not a string"):
        Rouge().score_batch(CAND, REF)


def test_settings_are_recorded() -> None:
    s = Rouge(use_stemmer=False).settings()
    assert s["library"] == "rouge-score"
    assert s["version"] == "0.1.2"
    assert s["use_stemmer"] is False
    assert s["rouge_types"] == ["rouge1", "rouge2", "rougeL"]
    assert "lowercase" in s["tokenizer"]
    assert Rouge().settings()["use_stemmer"] is True


def test_bad_options() -> None:
    with pytest.raises(InvalidParameterError, match="use_stemmer"):
        Rouge(use_stemmer="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="cache_size"):
        Rouge(cache_size=-1)


_WORDS = [
    "the",
    "a",
    "patient",
    "patients",
    "running",
    "run",
    "runs",
    "ran",
    "chest",
    "pain",
    "pains",
    "painful",
    "discharged",
    "discharge",
    "home",
    "x-ray",
    "12",
    "mg",
    "mg.",
    "The",
    "Cat",
    "cat's",
    "café",
    ";",
    ",",
    "hypertension",
]


def _random_text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


@pytest.mark.parametrize("use_stemmer", [True, False])
@pytest.mark.parametrize("cache_size", [0, 1, 256])
def test_fast_path_is_identical_to_plain_rouge_score(use_stemmer: bool, cache_size: int) -> None:
    rng = random.Random(1234)
    plain = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=use_stemmer)
    rouge = Rouge(use_stemmer=use_stemmer, cache_size=cache_size)
    refs = [_random_text(rng, rng.randint(0, 60)) for _ in range(5)]
    for _ in range(60):
        cand = _random_text(rng, rng.randint(0, 200))
        ref = rng.choice(refs)  # repeated references exercise the cache
        expect = plain.score(ref, cand)  # rouge_score: (target, prediction)
        got = rouge.score(cand, ref).to_dict()
        for key in ("rouge1", "rouge2", "rougeL"):
            e = expect[key]
            assert got[key] == {"p": e.precision, "r": e.recall, "f": e.fmeasure}


def test_fast_path_is_identical_on_a_real_note(sample_note: str) -> None:
    words = sample_note.split()
    plain = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    rouge = Rouge()
    ref = " ".join(words[len(words) // 2 :][:120])
    for start in range(0, max(1, len(words) - 50), 37):
        cand = " ".join(words[start : start + 400])
        e = plain.score(ref, cand)
        got = rouge.score(cand, ref)
        assert got.rougeL == PRF(e["rougeL"].precision, e["rougeL"].recall, e["rougeL"].fmeasure)
        assert got.rouge2 == PRF(e["rouge2"].precision, e["rouge2"].recall, e["rouge2"].fmeasure)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 4), max_size=40),
    st.lists(st.integers(0, 4), max_size=40),
)
def test_bit_parallel_lcs_matches_rouge_score_table(a: list[int], b: list[int]) -> None:
    expect = rouge_scorer._lcs_table(a, b)[-1][-1] if a and b else 0
    assert lcs_length(a, b) == expect
    assert lcs_length(b, a) == expect


_TEXT = st.lists(st.sampled_from(_WORDS), max_size=30).map(" ".join)


@settings(max_examples=100, deadline=None)
@given(_TEXT, _TEXT)
def test_scores_in_unit_interval_and_swap_swaps_p_and_r(a: str, b: str) -> None:
    rouge = Rouge()
    ab, ba = rouge.score(a, b), rouge.score(b, a)
    for x, y in ((ab.rouge1, ba.rouge1), (ab.rouge2, ba.rouge2), (ab.rougeL, ba.rougeL)):
        assert 0.0 <= x.p <= 1.0 and 0.0 <= x.r <= 1.0 and 0.0 <= x.f <= 1.0
        assert (x.p, x.r) == (y.r, y.p)
    same = rouge.score(a, a).rouge1
    assert same.p == same.r
