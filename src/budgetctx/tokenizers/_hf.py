"""Hugging Face ``tokenizer.json`` files, by local path (extra ``hf``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from budgetctx._core.validation import Constraint, NoneOr, Predicate, validate
from budgetctx._errors import TokenizerError
from budgetctx.tokenizers._native import is_native_failure, native_failure

__all__ = ["HFTokenizer"]


def _is_path(value: Any) -> bool:
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    return isinstance(value, str) and value.strip() != ""


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


class HFTokenizer:
    """A tokenizer loaded from a local ``tokenizer.json`` (or a folder holding one).

    Counts exclude the special tokens a chat template or ``add_special_tokens`` would add
    (BOS/EOS): those belong to the prompt wrapper, not to the context.

    >>> tok = HFTokenizer("path/to/tokenizer.json")  # doctest: +SKIP
    """

    _constraints: ClassVar[Mapping[str, Constraint]] = {
        "path": Predicate(
            _is_path,
            "a non-empty path (str or os.PathLike)",
            fix="pass the path of a local tokenizer.json or of a model folder holding one.",
        ),
        "name": NoneOr(
            Predicate(_is_name, "a non-empty str"),
            fix="pass a label for reports such as 'llama-3', or None for 'hf:<path>'.",
        ),
    }

    def __init__(self, path: str | Path, *, name: str | None = None) -> None:
        validate(type(self).__name__, self._constraints, {"path": path, "name": name})
        p = Path(path).expanduser()
        if p.is_dir():
            p = p / "tokenizer.json"
        if not p.is_file():
            raise TokenizerError(
                f"No tokenizer.json at {str(p)!r}. Pass the path of a local tokenizer.json file "
                "or of a model folder that contains one (nothing is downloaded)."
            )
        try:
            from tokenizers import Tokenizer as _HFTok
        except ImportError as exc:
            raise TokenizerError(
                "Hugging Face tokenizers need the 'tokenizers' package. "
                "Run: pip install 'budgetctx[hf]'"
            ) from exc
        try:
            self._tok = _HFTok.from_file(str(p))
        except Exception as exc:  # the Rust side raises plain Exception
            raise TokenizerError(
                f"Could not read {str(p)!r} as a tokenizer.json: {exc}. "
                "Check that the file is a Hugging Face fast-tokenizer file."
            ) from exc
        # A tokenizer.json may carry the padding/truncation its model was trained with
        # (sentence-transformers files pad to a fixed length and cut at max_length): either would
        # make counts the padded or capped length instead of the text's length.
        self._tok.no_padding()
        self._tok.no_truncation()
        self._path = p
        self._name = name or f"hf:{p}"

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"HFTokenizer({str(self._path)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (HFTokenizer, (str(self._path),), {"_name": self._name})

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._name = state["_name"]

    def _encode(self, text: str) -> Any:
        try:
            return self._tok.encode(text, add_special_tokens=False)
        except BaseException as exc:  # a Rust panic is a BaseException: see _native
            if not is_native_failure(exc):
                raise
            raise native_failure(self._name, exc, len(text)) from None

    def count(self, text: str) -> int:
        return len(self._encode(text).ids)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        try:
            encs = self._tok.encode_batch(list(texts), add_special_tokens=False)
        except BaseException as exc:
            if not is_native_failure(exc):
                raise
            raise native_failure(self._name, exc, sum(map(len, texts))) from None
        return [len(e.ids) for e in encs]

    def truncate(self, text: str, max_tokens: int) -> str:
        enc = self._encode(text)
        if len(enc.ids) <= max_tokens:
            return text
        k = max(max_tokens, 0)
        while k > 0:
            prefix = text[: enc.offsets[k - 1][1]]
            if self.count(prefix) <= max_tokens:
                return prefix
            k -= 1
        return ""
