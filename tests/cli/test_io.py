"""Decoding documents: errors say where the problem is and never echo the document (F12)."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest

from budgetctx._errors import InputError
from budgetctx.cli._io import decode_document, read_document

SECRET = b"Jane Doe MRN 12345"


@pytest.mark.parametrize(
    ("data", "offset"),
    [
        (SECRET + b"\xe9" + SECRET, len(SECRET)),  # latin-1 e-acute
        (b"\xef\xbb\xbf" + SECRET + b"\xff\xfe", 3 + len(SECRET)),  # after a BOM
        (SECRET + "é".encode()[:1], len(SECRET)),  # cut in the middle of a character
    ],
)
def test_invalid_utf8_gives_the_offset_and_no_document_bytes(data: bytes, offset: int) -> None:
    with pytest.raises(InputError) as info:
        decode_document(data)
    err = info.value
    message = str(err)
    assert f"byte offset {offset}" in message
    assert message.rstrip().endswith("errors='replace').")  # ends with the fix
    assert err.value == offset
    # nothing of the document: not the bad bytes, not their neighbours, not in the chain
    rendered = "".join(traceback.format_exception(err))
    for leak in ("\\x", "0x", "Jane", "MRN", "12345", "can't decode"):
        assert leak not in rendered, leak
    assert err.__cause__ is None and err.__context__ is None


def test_replace_mode_decodes_bad_bytes() -> None:
    assert decode_document(b"caf\xe9", errors="replace") == "caf\ufffd"


def test_nul_byte_error_gives_the_offset_only() -> None:
    with pytest.raises(InputError, match="offset 18") as info:
        decode_document(SECRET + b"\x00" + SECRET)
    assert "Jane" not in str(info.value)


def test_read_document_reports_the_offset(tmp_path: Path) -> None:
    path = tmp_path / "note.txt"
    path.write_bytes(SECRET + b"\x80")
    with pytest.raises(InputError, match=f"byte offset {len(SECRET)}") as info:
        read_document(path)
    assert "Jane" not in str(info.value)
