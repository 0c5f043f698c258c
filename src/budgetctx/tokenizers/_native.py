"""Failures inside a tokenizer's native code, as a :class:`~budgetctx.InputError`.

tiktoken and Hugging Face ``tokenizers`` are Rust behind pyo3: a Rust panic reaches Python as
``pyo3_runtime.PanicException``, a :class:`BaseException`, which ``except Exception`` (a batch
recording errors, a Ray actor, a server handler) lets through and which ends the process. This
turns such failures into a budgetctx error that says what failed and never quotes the text.

>>> class PanicException(BaseException): ...
>>> err = native_failure("o200k_base", PanicException("stack overflow"), 12)
>>> type(err).__name__, err.parameter
('InputError', 'text')
"""

from __future__ import annotations

import sys

from budgetctx._errors import InputError

__all__ = ["is_native_failure", "native_failure"]

# Exceptions, and the BaseExceptions that are control flow: they must keep their meaning.
_NOT_NATIVE = (Exception, KeyboardInterrupt, SystemExit, GeneratorExit)


def is_native_failure(exc: BaseException) -> bool:
    """True for a BaseException that is neither an Exception nor control flow (a pyo3 panic)."""
    if isinstance(exc, _NOT_NATIVE):
        return False
    # asyncio's cancellation too; looked up, not imported (importing asyncio was a sixth of
    # ``import budgetctx``): no asyncio loaded, no asyncio exception to meet.
    aio = sys.modules.get("asyncio")
    if aio is not None and isinstance(exc, aio.CancelledError):
        return False
    # trio's and anyio's cancellation exceptions are BaseExceptions too.
    return not type(exc).__module__.startswith(("trio", "anyio"))


def native_failure(tokenizer: str, exc: BaseException, chars: int) -> InputError:
    """The error to raise instead of ``exc`` (call only when :func:`is_native_failure`)."""
    return InputError(
        f"The {tokenizer} tokenizer failed in its native code ({type(exc).__name__}) on a "
        f"text of {chars} characters; the text was not counted. Check the document for "
        "unusual content (very long runs of one character), or split it; please report it "
        "with the document's size.",
        parameter="text",
        value=chars,
    )
