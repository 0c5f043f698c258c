"""F1: tiktoken panics (a Rust ``PanicException``, a BaseException) on a whitespace run of about
a million characters. The tokenizer never hands it such a run, its counts stay exact, and any
native failure left is an InputError, never a process death."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetctx import InputError
from budgetctx.tokenizers import TiktokenTokenizer, _tiktoken
from budgetctx.tokenizers._native import is_native_failure, native_failure

ENCODINGS = ["o200k_base", "cl100k_base"]


class PanicException(BaseException):
    """Stands in for pyo3_runtime.PanicException (which cannot be imported directly)."""


RUNS = [
    pytest.param("a" + " " * 70_000 + "b", id="spaces"),
    pytest.param("a" + "\t" * 70_000 + "b", id="tabs"),
    pytest.param("a" + "\u00a0" * 70_000 + "b", id="nbsp"),
    pytest.param("x" + " \t" * 40_000 + "y.", id="mixed"),
    pytest.param(" " * 70_000, id="only-spaces"),
    pytest.param("Note.\n" + " " * 70_000, id="trailing-run"),
    pytest.param(
        "Chest pain." + " " * 70_000 + "\n\n" + " " * 3 + "Plan: home.", id="then-newlines"
    ),
    pytest.param("A" + " " * 66_000 + "\r\n" + "\u3000" * 67_000 + "b's", id="two-runs"),
]


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("text", RUNS)
def test_split_runs_give_tiktokens_own_ids(name: str, text: str) -> None:
    # Runs past the split threshold but far below the panic: tiktoken itself is the oracle.
    enc = _tiktoken._encoding(name)
    assert _tiktoken._LONG_RUN.search(text) is not None  # the split path is the one tested
    assert _tiktoken.encode_ordinary(enc, text) == enc.encode_ordinary(text)


_PIECES = st.lists(
    st.sampled_from(
        [
            *("a", "Hello", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "x.", "123", "'s", "!!"),
            *("é", "中文", "\u3000", " \n ", "<|endoftext|>", "B", "\x0b"),
        ]
    ),
    max_size=40,
).map("".join)


@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=150, deadline=None)
@given(text=_PIECES)
def test_piecewise_path_equals_tiktoken_on_any_text(name: str, text: str) -> None:
    # With the threshold at 1, every text takes the piecewise path.
    enc = _tiktoken._encoding(name)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_tiktoken, "_LONG_WHITESPACE", 1)
        m.setattr(_tiktoken, "_LONG_RUN", _tiktoken.re.compile(r"\s"))
        assert _tiktoken.encode_ordinary(enc, text + " ") == enc.encode_ordinary(text + " ")


@pytest.mark.slow
@pytest.mark.parametrize(("name", "char"), [("o200k_base", " "), ("cl100k_base", "\u00a0")])
def test_a_million_whitespace_chars_are_counted_not_a_panic(
    name: str, char: str, quicktok_encodings: dict[str, Any]
) -> None:
    # The reproduction of F1: tiktoken's own encode_ordinary panics on this text; quicktok,
    # an independent BPE, gives the count to expect.
    text = "a" + char * 1_000_000 + "b"
    assert TiktokenTokenizer(name).count(text) == len(
        quicktok_encodings[name].encode_ordinary(text)
    )


class _Failing:
    """tiktoken's encoding and bpe-openai's encoder, both raising ``exc``."""

    name = "o200k_base"

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def encode_ordinary(self, text: str) -> list[int]:
        raise self.exc

    encode = encode_ordinary

    def count(self, text: str) -> int:
        raise self.exc


def _panicking(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> TiktokenTokenizer:
    tok = TiktokenTokenizer("o200k_base")
    monkeypatch.setattr(tok, "_enc", _Failing(exc))
    monkeypatch.setattr(tok, "_fast", _Failing(exc))  # the fast path fails first, then tiktoken
    return tok


def test_a_panic_of_the_fast_encoder_falls_back_to_tiktoken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tok = TiktokenTokenizer("o200k_base")
    monkeypatch.setattr(tok, "_fast", _Failing(PanicException("unwrap on an Err")))
    text = "Chest pain, no fever. Na 135."
    want = _tiktoken._encoding("o200k_base").encode_ordinary(text)
    assert tok.encode(text) == want
    assert tok.count(text) == len(want)
    assert tok.count_batch([text, text]) == [len(want)] * 2
    assert tok.count_segments(text, [(0, 21), (22, 29)], "\n")[1] == len(want)
    assert tok.truncate(text, 3) == _tiktoken._encoding("o200k_base").decode(want[:3])


def test_a_native_panic_becomes_an_input_error_without_the_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tok = _panicking(monkeypatch, PanicException("called `Result::unwrap()` on an `Err`"))
    for call in (
        tok.count,
        tok.encode,
        lambda t: tok.count_batch([t]),
        lambda t: tok.truncate(t, 2),
    ):
        with pytest.raises(InputError, match="native code") as info:
            call("Patient ZQXPHI123 secret text")
        assert "ZQXPHI123" not in str(info.value)
        assert info.value.value == len("Patient ZQXPHI123 secret text")


@pytest.mark.parametrize(
    "exc", [KeyboardInterrupt(), SystemExit(3), asyncio.CancelledError(), ValueError("v")]
)
def test_control_flow_and_ordinary_errors_are_not_converted(
    monkeypatch: pytest.MonkeyPatch, exc: BaseException
) -> None:
    tok = _panicking(monkeypatch, exc)
    with pytest.raises(type(exc)):
        tok.count("text")


def test_is_native_failure() -> None:
    assert is_native_failure(PanicException())
    assert not is_native_failure(KeyboardInterrupt())
    assert not is_native_failure(GeneratorExit())
    assert not is_native_failure(RuntimeError())
    err: Any = native_failure("cl100k_base", PanicException(), 5)
    assert isinstance(err, InputError) and err.value == 5


@settings(max_examples=200, deadline=None)
@given(
    runs=st.lists(
        st.tuples(st.sampled_from([" ", "\t", "\n", "\u3000", "\xa0"]), st.integers(0, 300)),
        max_size=8,
    ),
    words=st.lists(st.sampled_from(["a", "Hello", "中文", "x."]), min_size=8, max_size=8),
    n=st.integers(64, 200),
)
def test_long_run_check_equals_the_regex(
    runs: list[tuple[str, int]], words: list[str], n: int
) -> None:
    # the sampled check against the regex it replaces, with the threshold scaled down so
    # that runs just under, at and over it, at any offset, are cheap to build
    text = "".join(w + c * k for w, (c, k) in zip(words, runs, strict=False))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_tiktoken, "_LONG_WHITESPACE", n)
        m.setattr(_tiktoken, "_LONG_RUN", _tiktoken.re.compile(rf"\s{{{n}}}"))
        assert _tiktoken._long_run(text) == (_tiktoken._LONG_RUN.search(text) is not None)


@pytest.mark.parametrize("text", RUNS)
def test_long_run_check_finds_the_runs(text: str) -> None:
    assert _tiktoken._long_run(text)
    # every run cut every thousand characters: none left that long
    assert not _tiktoken._long_run(_tiktoken.re.sub(r"\s{1000}", lambda m: m[0][1:] + "x", text))
