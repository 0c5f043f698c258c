"""Makes tiktoken's native encoder panic on text holding a marker, on both of its paths
(the list path, ``encode_ordinary``, and the token-buffer path that counting reads), and
bpe-openai's encoder (which counts first) with it: the hardening tests of the batch, the service
and the adapters share it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

from budgetctx.tokenizers import _tiktoken


class PanicException(BaseException):
    """Stands in for pyo3_runtime.PanicException: a BaseException, as tiktoken raises it."""


@contextmanager
def panicking_encoder(marker: str = "PANIC-ME") -> Iterator[None]:
    """Inherited by forked workers, so a batch's workers panic too."""
    enc = _tiktoken._encoding("o200k_base")
    real = enc.encode_ordinary
    real_array = _tiktoken.encode_array

    def encode_ordinary(text: str) -> list[int]:
        if marker in text:
            raise PanicException("called `Result::unwrap()` on an `Err` value: StackOverflow")
        return real(text)

    def encode_array(encoding: Any, text: str) -> Any:
        if marker in text:  # the list path, where the panic above is converted
            return np.asarray(_tiktoken.encode_ordinary(encoding, text), dtype=np.uint32)
        return real_array(encoding, text)

    real_fast_call = _tiktoken._fast_call

    def fast_call(method: Any, text: str) -> Any:
        def panicking(t: str) -> Any:
            if marker in t:
                raise PanicException("called `Result::unwrap()` on an `Err` value")
            return method(t)

        return real_fast_call(panicking, text)  # a native failure: tiktoken is asked next

    with pytest.MonkeyPatch.context() as m:
        m.setattr(_tiktoken, "_fast_call", fast_call)
        m.setattr(enc, "encode_ordinary", encode_ordinary)
        m.setattr(_tiktoken, "encode_array", encode_array)
        yield
