"""A private on-disk cache of decoded rank files: what makes a second cold start fast.

Building an OpenAI encoding reads its bundled rank file (gzip, ~200k base64 lines), checks it
against tiktoken's sha256 and decodes every token: about a third of a cold ``budgetctx select``.
The decoded tokens are the same every time, so the first process writes them, in rank order, to
one file in the user's cache folder (platformdirs), and later processes read them back with one
slice per token instead of a gunzip, a hash of 3.6 MB and a base64 decode per line.

Exact and offline: a cache file is named after the sha256 of the bundled ``.gz`` it was decoded
from (the file that was checked against tiktoken's pin), and holds the sha256 of its own payload;
a file that is absent, truncated, altered or of another format is ignored and rewritten, so what
is returned is always the bundled file's decoding. Files are created 0600 in a 0700 folder
(tokens are no secret, but nothing of ours is left readable by others), written to a temporary
name and renamed, so two processes filling it at once never see half a file. A cache folder that
cannot be written is not an error: the ranks are decoded as before.

Writing a file for one bundled rank file removes the files of the same encoding decoded from
any other (an older bpe-openai's), so an upgrade leaves nothing behind: only files named and
headed as ours, and a file that cannot be removed is left (on Windows, one another process
still has open; on POSIX a reader keeps its open file). Two installs with different bundled
files sharing one cache folder then take turns rewriting it, which only costs the decoding.

``BUDGETCTX_CACHE_DIR`` moves the folder; ``BUDGETCTX_NO_CACHE=1`` turns the cache off.

>>> import tempfile, os
>>> folder = tempfile.mkdtemp()
>>> store("demo", "ab" * 32, [b"a", b"bc"], folder=folder)
>>> tokens, lengths = load("demo", "ab" * 32, folder=folder)
>>> tokens, lengths.tolist()
([b'a', b'bc'], [1, 2])
>>> load("demo", "cd" * 32, folder=folder) is None
True
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

__all__ = ["cache_folder", "load", "load_lengths", "store", "store_lengths"]

#: Bumped whenever the layout below changes: an older file is then simply not found.
_MAGIC = b"budgetctx-ranks\x00\x01"
# header: magic (16 bytes), sha256 of the payload (32), number of tokens (8, little endian);
# payload: each token's byte length (uint32 little endian, in rank order), then the tokens.
_HEADER = len(_MAGIC) + 32 + 8
#: A file of byte lengths only (what bpe-openai's encoder needs, see :func:`load_lengths`): the
#: same header with this magic, then the lengths.
_LENGTHS_MAGIC = b"budgetctx-lens\x00\x00\x01"
#: What every file of ours starts with, of this layout or an older one, by suffix: what
#: :func:`_remove_stale` checks before removing a file.
_FAMILIES = {".bin": b"budgetctx-ranks\x00", ".lengths": b"budgetctx-lens\x00"}


def cache_folder() -> Path | None:
    """Where decoded rank files are kept, or None when the cache is turned off.

    >>> cache_folder() is None or cache_folder().name == "ranks"
    True
    """
    if os.environ.get("BUDGETCTX_NO_CACHE", "") not in ("", "0"):
        return None
    base = os.environ.get("BUDGETCTX_CACHE_DIR")
    if base:
        return Path(base) / "ranks"
    import platformdirs  # a few ms to import: only on the path that builds an encoding

    return platformdirs.user_cache_path("budgetctx") / "ranks"


def _path(name: str, source_sha256: str, folder: str | Path, suffix: str = ".bin") -> Path:
    return Path(folder) / f"{name}-{source_sha256[:32]}{suffix}"


def _sound(path: Path, magic: bytes) -> tuple[bytes, int] | None:
    """The bytes of the cache file ``path`` and the count in its header, if it starts with
    ``magic`` and its payload has the sha256 its header holds; None otherwise."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) < _HEADER or not data.startswith(magic):
        return None
    view = memoryview(data)
    digest = bytes(view[len(magic) : len(magic) + 32])
    if hashlib.sha256(view[_HEADER:]).digest() != digest:
        return None
    return data, int.from_bytes(view[len(magic) + 32 : _HEADER], "little")


def _read(
    name: str, source_sha256: str, folder: str | Path | None
) -> tuple[bytes, NDArray[np.uint32], NDArray[np.int64]] | None:
    """A sound cache file's bytes, its tokens' byte lengths and their running ends; None when
    absent, corrupt or unreadable."""
    folder = cache_folder() if folder is None else folder
    if folder is None:
        return None
    found = _sound(_path(name, source_sha256, folder), _MAGIC)
    if found is None:
        return None
    data, n = found
    if len(data) < _HEADER + 4 * n:
        return None
    lengths = np.frombuffer(data, dtype="<u4", count=n, offset=_HEADER)
    ends = np.cumsum(lengths, dtype=np.int64)
    if n and _HEADER + 4 * n + int(ends[-1]) != len(data):
        return None
    return data, lengths, ends


def load(
    name: str, source_sha256: str, *, folder: str | Path | None = None
) -> tuple[list[bytes], NDArray[np.int64]] | None:
    """The tokens of ``name`` in rank order and their byte lengths, if a sound cache file for
    ``source_sha256`` (the sha256 of the bundled rank file) exists; None otherwise (absent,
    corrupt, unreadable)."""
    found = _read(name, source_sha256, folder)
    if found is None:
        return None
    data, lengths, ends = found
    blob_start = _HEADER + 4 * len(lengths)
    # One slice per token, from plain int lists (indexing numpy scalars would be slower).
    bounds = (ends + blob_start).tolist()
    starts = [blob_start, *bounds[:-1]]
    tokens = [data[a:b] for a, b in zip(starts, bounds, strict=True)]
    return tokens, lengths.astype(np.int64)


def load_lengths(
    name: str, source_sha256: str, *, folder: str | Path | None = None
) -> NDArray[np.int64] | None:
    """Only the byte lengths of :func:`load` (what maps an encoding back to text offsets), from
    the lengths file of :func:`store_lengths` or else from the tokens' file, without slicing out
    200k tokens: a few milliseconds. None when neither is sound.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> store_lengths("demo", "ab" * 32, np.array([1, 2]), folder=folder)
    >>> load_lengths("demo", "ab" * 32, folder=folder).tolist()
    [1, 2]
    """
    folder = cache_folder() if folder is None else folder
    if folder is None:
        return None
    sound = _sound(_path(name, source_sha256, folder, ".lengths"), _LENGTHS_MAGIC)
    if sound is not None and len(sound[0]) == _HEADER + 4 * sound[1]:
        data, n = sound
        return np.frombuffer(data, dtype="<u4", count=n, offset=_HEADER).astype(np.int64)
    found = _read(name, source_sha256, folder)
    return None if found is None else found[1].astype(np.int64)


def store_lengths(
    name: str, source_sha256: str, lengths: NDArray[np.int64], *, folder: str | Path | None = None
) -> None:
    """Write the tokens' byte ``lengths`` (in rank order) for :func:`load_lengths`; like
    :func:`store`, nothing happens when the cache is off or cannot be written."""
    folder = cache_folder() if folder is None else folder
    if folder is None:
        return
    payload = np.asarray(lengths, dtype="<u4").tobytes()
    header = _LENGTHS_MAGIC + hashlib.sha256(payload).digest() + len(lengths).to_bytes(8, "little")
    if _write(_path(name, source_sha256, folder, ".lengths"), header + payload):
        _remove_stale(name, source_sha256, folder)


def store(
    name: str, source_sha256: str, tokens: Sequence[bytes], *, folder: str | Path | None = None
) -> None:
    """Write ``tokens`` (in rank order) for :func:`load`; silently does nothing when the cache
    is off or its folder cannot be written (the cache only saves time)."""
    folder = cache_folder() if folder is None else folder
    if folder is None:
        return
    payload = np.fromiter(map(len, tokens), dtype="<u4", count=len(tokens)).tobytes()
    payload += b"".join(tokens)
    header = _MAGIC + hashlib.sha256(payload).digest() + len(tokens).to_bytes(8, "little")
    if _write(_path(name, source_sha256, folder), header + payload):
        _remove_stale(name, source_sha256, folder)


def _remove_stale(name: str, source_sha256: str, folder: str | Path) -> None:
    """Remove the cache files of ``name`` (tokens and lengths) decoded from a bundled file other
    than ``source_sha256``'s: files named ``{name}-{32 hex digits}{suffix}`` that start with
    our header. Nothing is raised: a file that cannot be read or removed is left."""
    keep = source_sha256[:32]
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        stem, dot, suffix = entry.name.rpartition(".")
        family = _FAMILIES.get(dot + suffix)
        source = stem[len(name) + 1 :]
        if (
            family is None
            or not stem.startswith(f"{name}-")
            or len(source) != 32
            or source == keep
            or source.strip("0123456789abcdef")
        ):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            path = Path(entry.path)
            with path.open("rb") as fh:
                if fh.read(len(family)) != family:
                    continue  # not a file of ours
            path.unlink()
        except OSError:
            continue


def _write(target: Path, data: bytes) -> bool:
    """``data`` to ``target`` through a temporary name (never half a file), 0600 in a 0700
    folder; an OSError (a folder that cannot be written) is ignored: False."""
    import tempfile  # only a first run writes: a filled cache never needs it (issue 27)

    try:
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # mkstemp creates the file 0600, whatever the umask.
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            Path(tmp).replace(target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return False
    return True
