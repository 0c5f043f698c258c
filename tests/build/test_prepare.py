"""Preparation counts once: the encoder calls of a representative ``build_context`` are pinned,
and the costs read back from one encoding equal counting every segment on its own."""

from __future__ import annotations

from typing import Any

import pytest

from budgetctx import build_context, prepare
from budgetctx.data import sample_note
from budgetctx.tokenizers import TiktokenTokenizer, get_tokenizer

#: build_context on the bundled note: the document, one string of segments' first and last
#: words, one segment without an inner space, and the rendered context (counted before it is
#: returned). It was 79 when every segment was encoded on its own; raise it only with a reason.
#: Two more (a few characters each): the separator's cost after the commonest last piece,
#: with and without it, which settles the separator slack (issue 27).
ENCODER_CALLS = 6


class _CountingEncoding:
    """A tiktoken Encoding that counts its encode_ordinary calls."""

    def __init__(self, enc: Any) -> None:
        self._enc = enc
        self.calls = 0

    def encode_ordinary(self, text: str) -> list[int]:
        self.calls += 1
        return list(self._enc.encode_ordinary(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._enc, name)

    # bpe-openai's encoder (tokenizers/_bpe_fast.py), which encodes first when installed
    def encode(self, text: str) -> list[int]:
        self.calls += 1
        return list(self._enc.encode(text))

    def count(self, text: str) -> int:
        self.calls += 1
        return int(self._enc.count(text))


@pytest.mark.parametrize("selector", ["mmr", "lead", "auto"])
def test_encoder_calls_of_a_note_do_not_grow(selector: str) -> None:
    tok = TiktokenTokenizer("o200k_base")
    counting = _CountingEncoding(tok._enc)
    tok._enc = counting  # type: ignore[assignment]
    fast = _CountingEncoding(tok._fast)
    if tok._fast is not None:
        tok._fast = fast  # type: ignore[assignment]
    ctx = build_context(sample_note(), 256, tokenizer=tok, selector=selector)
    assert ctx.tokens_used <= 256
    assert 0 < counting.calls + fast.calls <= ENCODER_CALLS


@pytest.mark.parametrize("separator", ["\n", " — ", ""])
@pytest.mark.parametrize("unitizer", ["sentence", "window"])
def test_costs_equal_counting_each_segment(separator: str, unitizer: str) -> None:
    tok = get_tokenizer("o200k_base")
    doc = prepare(sample_note(), separator=separator, unitizer=unitizer)
    segments = doc.segmentation.segments
    assert doc.segment_costs.tolist() == tok.count_batch([g.text + separator for g in segments])
    assert doc.document_tokens == tok.count(sample_note())


def test_several_documents_count_each_document() -> None:
    tok = get_tokenizer("cl100k_base")
    texts = [sample_note()[:900], "Plan: rest. Fluids.", "   "]
    doc = prepare(texts, tokenizer=tok)
    assert list(doc.documents_tokens) == tok.count_batch(texts)
    own = [g.text + "\n" for s in doc.document_segmentations for g in s.segments]
    assert doc.segment_costs.tolist()[: len(own)] == tok.count_batch(own)


def test_blas_threads_are_held_during_facility_and_restored() -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from budgetctx.build._prepare import blas_threads

    before = [i["num_threads"] for i in threadpoolctl.threadpool_info()]
    with blas_threads("facility"):
        inside = [
            i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"
        ]
        assert all(n == 1 for n in inside)
    assert [i["num_threads"] for i in threadpoolctl.threadpool_info()] == before


def test_blas_threads_leave_other_selectors_and_zero_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from budgetctx.build._prepare import BLAS_THREADS_ENV, blas_threads

    before = [i["num_threads"] for i in threadpoolctl.threadpool_info()]
    with blas_threads("mmr"):
        assert [i["num_threads"] for i in threadpoolctl.threadpool_info()] == before
    monkeypatch.setenv(BLAS_THREADS_ENV, "0")
    with blas_threads("rcd"):
        assert [i["num_threads"] for i in threadpoolctl.threadpool_info()] == before


@pytest.mark.parametrize("separator", ["\n", " — ", " ", " | ", "\n\n", "; "])
def test_separator_slack_is_the_least_separator_cost(separator: str) -> None:
    # read from each segment's last piece; here counted from whole segments
    tok = get_tokenizer("o200k_base")
    doc = prepare(sample_note(), separator=separator)
    texts = [g.text for g in doc.segmentation.segments]
    plain = tok.count_batch(texts)
    joined = tok.count_batch([t + separator for t in texts])
    assert doc.separator_slack == max(0, min(j - p for j, p in zip(joined, plain, strict=True)))


def test_the_last_separator_is_not_paid_for() -> None:
    # issue 27: each cost counts a separator after its segment, the last one is never rendered
    text = "Chest pain today. Troponin was negative. Sent home."
    tok = get_tokenizer("o200k_base")
    first_two = tok.count("Chest pain today. — Troponin was negative.")
    ctx = build_context(text, first_two + 1, selector="lead", separator=" — ", profile=None)
    assert ctx.tokens_used == first_two  # before: only the first sentence (4 tokens)
    for budget in range(1, tok.count(text) + 2):
        ctx = build_context(text, budget, selector="lead", separator=" — ", profile=None)
        assert ctx.tokens_used == tok.count(ctx.text) <= budget
    assert build_context(text, 4, selector="lead", separator=" — ").text == "Chest pain today."
