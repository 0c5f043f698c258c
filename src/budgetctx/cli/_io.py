"""Reading documents: bytes -> text with errors that say where the problem is."""

from __future__ import annotations

import codecs
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from budgetctx._errors import InputError, InvalidParameterError

if TYPE_CHECKING:
    from budgetctx.build._documents import Document

__all__ = ["decode_document", "read_document", "read_documents"]


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


def read_documents(
    files: list[str],
    *,
    jsonl: str | Path | None = None,
    text_field: str = "text",
    id_field: str = "id",
    errors: Literal["strict", "replace"] = "strict",
) -> str | list[Document]:
    """What the CLI condenses: one file's text (``-`` is stdin), or a list of documents from
    several files (ids are the paths as given) and/or a JSONL file (a bad line is an error
    that names it: every document of one context must be read)."""
    from budgetctx.build._documents import Document

    if not files and jsonl is None:
        raise InputError(
            "No input: pass one or more text files, '-' for stdin, or --jsonl FILE.",
            parameter="files",
            value=None,
        )
    if files.count("-") > 1:
        raise InputError(
            "'-' (stdin) can be read once; pass it once.", parameter="files", value="-"
        )

    def read(name: str) -> str:
        if name == "-":
            return decode_document(sys.stdin.buffer.read(), errors=errors)
        return read_document(Path(name), errors=errors)

    if len(files) == 1 and jsonl is None:
        return read(files[0])
    docs = [Document(read(name), id=name) for name in files]
    if jsonl is not None:
        # Here, not at the top: budgetctx.batch brings multiprocessing and sqlite3, which
        # condensing one file (the common, cold-start-bound call) never needs.
        from budgetctx.batch._tables import read_records

        for rec in read_records(jsonl, text_field=text_field, id_field=id_field):
            if rec.error is not None and rec.text is None and "is empty" not in rec.error:
                raise InputError(f"{jsonl}: {rec.error}", parameter="jsonl", value=rec.row)
            docs.append(Document(rec.text or "", id=rec.id))
    return docs
