"""Reading documents: bytes -> text with errors that say where the problem is."""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Literal

from budgetctx._errors import InputError, InvalidParameterError

__all__ = ["decode_document", "read_document"]


def decode_document(data: bytes, *, errors: Literal["strict", "replace"] = "strict") -> str:
    """Decode UTF-8 (a BOM is dropped). Binary data and bad bytes raise :class:`InputError`.

    >>> decode_document(b"Na 135, K 4.1")
    'Na 135, K 4.1'
    >>> decode_document(b"caf\\xe9", errors="replace")
    'caf\\ufffd'
    """
    if errors not in ("strict", "replace"):
        raise InvalidParameterError(
            f"errors must be 'strict' or 'replace', got {errors!r}.",
            parameter="errors",
            value=errors,
        )
    nul = data.find(b"\x00")
    if nul != -1:
        raise InputError(
            f"The input has a NUL byte at offset {nul}: it looks like binary data, not text. "
            "Extract the text first (for a PDF or a Word file, use a text extraction tool).",
            value=nul,
        )
    try:
        return data.decode("utf-8-sig", errors=errors)
    except UnicodeDecodeError as exc:
        # utf-8-sig counts from after the BOM; the user's file counts it
        offset = exc.start + (len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0)
    # The offset only: the bytes are document text (PHI). Raised outside the handler so that
    # the UnicodeDecodeError, whose message shows the byte and whose .object holds the whole
    # input, is neither the cause nor the context of the error.
    raise InputError(
        f"The input is not valid UTF-8 at byte offset {offset}. Convert it to UTF-8 "
        "(e.g. iconv -f latin1 -t utf-8), or decode with replacement characters "
        "(--errors replace / errors='replace').",
        value=offset,
    )


def read_document(path: str | Path, *, errors: Literal["strict", "replace"] = "strict") -> str:
    """Read and decode a document file."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError as exc:
        raise InputError(
            f"No such file: {str(p)!r}. Check the path, or pass '-' to read standard input.",
            parameter="file",
            value=str(p),
        ) from exc
    except IsADirectoryError as exc:
        raise InputError(
            f"{str(p)!r} is a directory; pass a text file.", parameter="file", value=str(p)
        ) from exc
    return decode_document(data, errors=errors)
