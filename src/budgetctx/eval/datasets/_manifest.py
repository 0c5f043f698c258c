"""Pinned upstream files and their sha256, read from the package data ``manifest.json``.

The hashes are of the bytes written into the data dir. The shared copies were checked to be
byte-identical to the repository blobs at the pinned commits; the MTSamples pages are stored
gzip-compressed in their repository, so their hashes are of the decompressed bodies.

The JSON is generated, never edited by hand: :func:`build_manifest` re-hashes every listed
file of a data dir (``python -m budgetctx.eval.datasets._manifest DATA_DIR`` rewrites it).

>>> len(pubmedqa_files()), LEVAL.slug
(2, 'OpenLMLab/LEval')
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from budgetctx.eval.datasets._base import RemoteFile, Repository

__all__ = [
    "DEVARAJ",
    "LEVAL",
    "MTSAMPLES",
    "MTSAMPLES_DERIVED_PATH",
    "MTSAMPLES_DERIVED_SHA256",
    "MTSAMPLES_INDEX_PATH",
    "MTSAMPLES_INDEX_SHA256",
    "MTSAMPLES_PAGES",
    "PUBMEDQA",
    "TSAR",
    "build_manifest",
    "devaraj_files",
    "leval_file",
    "mtsamples_files",
    "pubmedqa_files",
    "tsar_files",
]

MANIFEST = "manifest.json"
#: Files derived from the MTSamples pages (their hashes are checked after derivation).
MTSAMPLES_INDEX_PATH = "mtsamples_discharge/raw_html/INDEX.tsv"
MTSAMPLES_DERIVED_PATH = "mtsamples_discharge/discharge_summaries.derived.jsonl"


@cache
def _data() -> dict[str, Any]:
    text = resources.files(__package__).joinpath(MANIFEST).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _repo(key: str) -> Repository:
    r = _data()["repositories"][key]
    return Repository(r["slug"], r["commit"], r["license"])


def _hashes(key: str) -> dict[str, tuple[str, int]]:
    return {name: (sha, int(size)) for name, (sha, size) in _data()[key].items()}


LEVAL = _repo("leval")
PUBMEDQA = _repo("pubmedqa")
TSAR = _repo("tsar")
DEVARAJ = _repo("devaraj")
MTSAMPLES = _repo("mtsamples")
#: (cache key, page url, sha256, size) of every MTSamples discharge-summary page
MTSAMPLES_PAGES: tuple[tuple[str, str, str, int], ...] = tuple(
    (key, url, sha, int(size)) for key, url, sha, size in _data()["mtsamples_pages"]
)
MTSAMPLES_INDEX_SHA256: str = _data()["mtsamples_index_sha256"]
MTSAMPLES_DERIVED_SHA256: str = _data()["mtsamples_derived_sha256"]


def leval_file(task: str) -> RemoteFile:
    sha, size = _hashes("leval")[task]
    return RemoteFile(
        f"leval/{task}.jsonl", LEVAL, f"LEval-data/Open-ended-tasks/{task}.jsonl", sha, size
    )


def pubmedqa_files() -> tuple[RemoteFile, ...]:
    return tuple(
        RemoteFile(f"pubmedqa/{name}", PUBMEDQA, f"data/{name}", sha, size)
        for name, (sha, size) in _hashes("pubmedqa").items()
    )


def tsar_files() -> tuple[RemoteFile, ...]:
    return tuple(
        RemoteFile(
            f"cochrane/tsar2025_cochrane_abstracts/{rid}.json",
            TSAR,
            f"data/original/{rid}.json",
            sha,
            size,
        )
        for rid, (sha, size) in _hashes("tsar").items()
    )


def devaraj_files() -> tuple[RemoteFile, ...]:
    return tuple(
        RemoteFile(
            f"cochrane/devaraj2021_data-1024/{name}", DEVARAJ, f"data/data-1024/{name}", sha, size
        )
        for name, (sha, size) in _hashes("devaraj").items()
    )


def mtsamples_files() -> tuple[RemoteFile, ...]:
    # Scrapy's filesystem cache stores each page at <spider>/<key[:2]>/<key>/response_body.
    return tuple(
        RemoteFile(
            f"mtsamples_discharge/raw_html/{key}.html",
            MTSAMPLES,
            f".scrapy/httpcache/mt/{key[:2]}/{key}/response_body",
            sha,
            size,
            gzip=True,
        )
        for key, _url, sha, size in MTSAMPLES_PAGES
    )


def _hash(path: Path) -> tuple[str, int]:
    data = path.read_bytes()
    return hashlib.sha256(data).hexdigest(), len(data)


def build_manifest(
    data_dir: str | Path, *, base: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The manifest with every listed file re-hashed from ``data_dir`` (the data-dir layout).

    ``base`` (default: the bundled manifest) gives the repositories, their pins and the file
    lists; only hashes and sizes are recomputed, so a changed upstream file shows as a diff.
    """
    root = Path(data_dir)
    out: dict[str, Any] = json.loads(json.dumps(dict(base if base is not None else _data())))
    folders = {
        "leval": "leval/{}.jsonl",
        "pubmedqa": "pubmedqa/{}",
        "tsar": "cochrane/tsar2025_cochrane_abstracts/{}.json",
        "devaraj": "cochrane/devaraj2021_data-1024/{}",
    }
    for key, pattern in folders.items():
        out[key] = {n: list(_hash(root / pattern.format(n))) for n in out[key]}
    out["mtsamples_pages"] = [
        [k, url, *_hash(root / f"mtsamples_discharge/raw_html/{k}.html")]
        for k, url, _sha, _size in out["mtsamples_pages"]
    ]
    out["mtsamples_index_sha256"] = _hash(root / MTSAMPLES_INDEX_PATH)[0]
    out["mtsamples_derived_sha256"] = _hash(root / MTSAMPLES_DERIVED_PATH)[0]
    return out


def main(argv: list[str] | None = None) -> None:
    """``python -m budgetctx.eval.datasets._manifest DATA_DIR [OUT]``: write the manifest."""
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[1]) if len(args) > 1 else Path(__file__).with_name(MANIFEST)
    text = json.dumps(build_manifest(args[0]), indent=1, ensure_ascii=False) + "\n"
    target.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
