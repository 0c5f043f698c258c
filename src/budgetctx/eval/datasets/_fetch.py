"""Download datasets from their pinned public sources (or a mirror), verified by sha256.

Only :func:`fetch_dataset` touches the network, with the standard library's urllib. Every file
is written to a temporary name and renamed into place once its sha256 matches the manifest, so
an interrupted or corrupted download never leaves a file that looks valid.
"""

from __future__ import annotations

import hashlib
import http.client
import math
import os
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from budgetctx._errors import DatasetError, InvalidParameterError
from budgetctx.eval.datasets._base import RemoteFile
from budgetctx.eval.datasets._mimic import MIMIC_BHC_HOWTO
from budgetctx.eval.datasets._paths import resolve_data_dir
from budgetctx.eval.datasets._registry import get_dataset

__all__ = ["GITHUB_RAW", "FetchReport", "fetch_dataset"]

#: where pinned GitHub blobs are read from: <GITHUB_RAW><owner>/<repo>/<commit>/<path>
GITHUB_RAW = "https://raw.githubusercontent.com/"
_ATTEMPTS = 3  # one try and two retries of transient failures
_RETRY_DELAY_S = 1.0  # doubled after each failed attempt
_CHUNK = 1 << 16
_TRANSIENT_HTTP = frozenset({408, 425, 429, 500, 502, 503, 504})

#: called as ``progress(path, action)`` with action "downloaded", "skipped" or "generated"
Progress = Callable[[str, str], None]


@dataclass(frozen=True)
class FetchReport:
    """What :func:`fetch_dataset` did; paths are relative to ``data_dir``.

    ``skipped`` files were already present with the expected sha256 (or content).
    """

    name: str
    data_dir: str
    source: str
    downloaded: tuple[str, ...]
    skipped: tuple[str, ...]
    generated: tuple[str, ...]
    bytes_downloaded: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "name": self.name,
            "data_dir": self.data_dir,
            "source": self.source,
            "downloaded": list(self.downloaded),
            "skipped": list(self.skipped),
            "generated": list(self.generated),
            "bytes_downloaded": self.bytes_downloaded,
        }


class _TransientError(Exception):
    """A failure worth retrying (timeouts, refused connections, 5xx and 429 answers)."""


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _temp_path(dest: Path) -> Path:
    return dest.with_name(f".{dest.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.part")


def _write_atomic(dest: Path, content: bytes) -> None:
    tmp = _temp_path(dest)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(content)
        tmp.replace(dest)
    except OSError as exc:
        raise DatasetError(
            f"Cannot write {dest}: {exc}. Free some space or pass another data_dir=."
        ) from exc
    finally:
        tmp.unlink(missing_ok=True)


def _url(remote: RemoteFile, mirror: str | None) -> str:
    if mirror is not None:
        return f"{mirror.rstrip('/')}/{urllib.parse.quote(remote.path)}"
    repo = remote.repo
    return f"{GITHUB_RAW}{repo.slug}/{repo.commit}/{urllib.parse.quote(remote.repo_path)}"


def _download_once(url: str, dest: Path, remote: RemoteFile, gunzip: bool, timeout: float) -> int:
    """Download, hash and rename into place; returns the bytes received."""
    tmp = _temp_path(dest)
    request = urllib.request.Request(url, headers={"User-Agent": "budgetctx-datasets"})
    received = 0
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if gunzip else None
        with urllib.request.urlopen(request, timeout=timeout) as response, tmp.open("wb") as out:
            while chunk := response.read(_CHUNK):
                received += len(chunk)
                data = inflate.decompress(chunk) if inflate else chunk
                digest.update(data)
                out.write(data)
            if inflate is not None:
                data = inflate.flush()
                digest.update(data)
                out.write(data)
                if not inflate.eof:
                    raise _TransientError("the gzip stream ended early")
        actual = digest.hexdigest()
        if actual != remote.sha256:
            raise DatasetError(
                f"sha256 mismatch for {url}: expected {remote.sha256}, got {actual}. "
                f"Nothing was saved to {dest}; the source has changed or is corrupted. Fetch "
                "from the official source (no mirror=), or fix the mirror's copy."
            )
        tmp.replace(dest)
        return received
    except urllib.error.HTTPError as exc:
        if exc.code in _TRANSIENT_HTTP:
            raise _TransientError(f"HTTP {exc.code} {exc.reason}") from exc
        raise DatasetError(
            f"Downloading {url} failed: HTTP {exc.code} {exc.reason}. Check the mirror= URL "
            "(it must serve the data-dir layout), or fetch from the official source."
        ) from exc
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, FileNotFoundError):  # file:// mirrors
            raise DatasetError(f"{url} does not exist. Check the mirror= path.") from exc
        raise _TransientError(str(exc.reason)) from exc
    except (TimeoutError, ConnectionError, http.client.HTTPException) as exc:
        raise _TransientError(repr(exc)) from exc
    except zlib.error as exc:
        raise DatasetError(
            f"{url} is not gzip-compressed as its repository stores it ({exc}). "
            "Fetch it again; if this persists, pass mirror= with an uncompressed copy."
        ) from exc
    except OSError as exc:  # after URLError & co., which are OSErrors too: local disk trouble
        raise DatasetError(
            f"Cannot write {dest}: {exc}. Free some space or pass another data_dir=."
        ) from exc
    finally:
        tmp.unlink(missing_ok=True)


def _download(url: str, dest: Path, remote: RemoteFile, gunzip: bool, timeout: float) -> int:
    error: _TransientError | None = None
    for attempt in range(_ATTEMPTS):
        if attempt:
            time.sleep(_RETRY_DELAY_S * 2 ** (attempt - 1))
        try:
            return _download_once(url, dest, remote, gunzip, timeout)
        except _TransientError as exc:
            error = exc
    raise DatasetError(
        f"Downloading {url} failed {_ATTEMPTS} times (last: {error}). Check the network or "
        "the mirror, then run the fetch again; verified files are kept and skipped."
    ) from error


def _check_fetch_options(mirror: str | None, timeout: float) -> None:
    if mirror is not None and (
        not isinstance(mirror, str)
        or urllib.parse.urlsplit(mirror).scheme not in ("http", "https", "file")
    ):
        raise InvalidParameterError(
            f"The 'mirror' parameter must be an http://, https:// or file:// URL. "
            f"Got {mirror!r} instead.",
            parameter="mirror",
            value=mirror,
        )
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise InvalidParameterError(
            f"The 'timeout' parameter must be a number of seconds > 0. Got {timeout!r} instead.",
            parameter="timeout",
            value=timeout,
        )


def fetch_dataset(
    name: str,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    mirror: str | None = None,
    timeout: float = 60.0,
    progress: Progress | None = None,
) -> FetchReport:
    """Download a dataset's files into the data dir, verifying each one's sha256.

    Files come from the public repositories pinned by commit (raw.githubusercontent.com), or,
    with ``mirror="http://host:port/"``, from a server (or ``file://`` folder) laid out like
    the data dir. Files already present with the right hash are skipped, so an interrupted
    fetch resumes. ``progress(path, action)`` is called once per file. For example::

        fetch_dataset("pubmedqa")  # -> FetchReport(downloaded=('pubmedqa/ori_pqal.json', ...))
        fetch_dataset("leval", mirror="http://mirror.internal:8000/datasets/")
    """
    _check_fetch_options(mirror, timeout)
    dataset = get_dataset(name)
    remote_files = dataset.remote_files()
    if not remote_files:
        howto = (
            MIMIC_BHC_HOWTO
            if dataset.name == "mimic-bhc"
            else f"{dataset.name!r} reads your own file: pass path= to load_dataset."
        )
        raise InvalidParameterError(
            f"Dataset {dataset.name!r} cannot be fetched. {howto}", parameter="name", value=name
        )
    root = resolve_data_dir(data_dir)
    downloaded: list[str] = []
    skipped: list[str] = []
    generated: list[str] = []
    received = 0

    def note(path: str, action: str, bucket: list[str]) -> None:
        bucket.append(path)
        if progress is not None:
            progress(path, action)

    for remote in remote_files:
        dest = root / remote.path
        if dest.is_file() and _sha256_file(dest) == remote.sha256:
            note(remote.path, "skipped", skipped)
            continue
        url = _url(remote, mirror)
        # A mirror serves the data-dir layout, where pages are already decompressed.
        received += _download(url, dest, remote, remote.gzip and mirror is None, float(timeout))
        note(remote.path, "downloaded", downloaded)
    for path, content in dataset.generated_files(root).items():
        dest = root / path
        if dest.is_file() and dest.read_bytes() == content:
            note(path, "skipped", skipped)
        else:
            _write_atomic(dest, content)
            note(path, "generated", generated)
    return FetchReport(
        name=dataset.name,
        data_dir=str(root),
        source=mirror if mirror is not None else "github",
        downloaded=tuple(downloaded),
        skipped=tuple(skipped),
        generated=tuple(generated),
        bytes_downloaded=received,
    )
