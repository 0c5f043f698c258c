"""The cache of decoded rank files: the same ranks as decoding the bundled file, private files,
and anything wrong with a cache file (altered, truncated, foreign) ignored and rewritten."""

from __future__ import annotations

import gzip
import importlib.util
import stat
from pathlib import Path

import numpy as np
import pytest

from budgetctx.tokenizers import _rank_cache, _tiktoken

NAME = "cl100k_base"  # the smaller of the two bundled files: the same code path, half the time


@pytest.fixture(scope="module")
def reference() -> dict[bytes, int]:
    """tiktoken's own parse of the bundled file, every rank read."""
    spec = importlib.util.find_spec("bpe_openai")
    assert spec is not None and spec.submodule_search_locations
    path = Path(spec.submodule_search_locations[0]) / "data" / f"{NAME}.tiktoken.gz"
    return _tiktoken._parse_ranks(gzip.decompress(path.read_bytes()))


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BUDGETCTX_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("BUDGETCTX_NO_CACHE", raising=False)
    return tmp_path / "ranks"


def _cache_files(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"{NAME}-*.bin"))


def _no_gunzip(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make decoding the bundled file impossible: what loads now came from the cache."""

    def fail(data: bytes) -> bytes:
        raise AssertionError("the rank file was decoded, not read from the cache")

    monkeypatch.setattr(_tiktoken.gzip, "decompress", fail)


def test_first_load_writes_a_private_file_and_the_second_reads_it(
    folder: Path, reference: dict[bytes, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _tiktoken._load_ranks(NAME) == reference
    files = _cache_files(folder)
    assert len(files) == 1
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    decoded_lengths = _tiktoken._TOKEN_BYTES[NAME]
    assert decoded_lengths is not None

    _no_gunzip(monkeypatch)
    _tiktoken._TOKEN_BYTES.pop(NAME)
    ranks = _tiktoken._load_ranks(NAME)
    assert ranks == reference
    assert list(ranks.values()) == list(range(len(ranks)))  # insertion order is rank order
    cached_lengths = _tiktoken._TOKEN_BYTES[NAME]
    assert cached_lengths is not None and cached_lengths.dtype == np.int64
    assert np.array_equal(cached_lengths, decoded_lengths)


@pytest.mark.parametrize("damage", ["flip-a-token-byte", "truncate", "other-format", "empty"])
def test_a_damaged_cache_file_is_ignored_and_rewritten(
    damage: str, folder: Path, reference: dict[bytes, int]
) -> None:
    _tiktoken._load_ranks(NAME)
    (path,) = _cache_files(folder)
    data = bytearray(path.read_bytes())
    if damage == "flip-a-token-byte":
        data[-5] ^= 0x01  # one byte of one token: a wrong rank table if it were trusted
    elif damage == "truncate":
        del data[len(data) // 2 :]
    elif damage == "other-format":
        data[:16] = b"budgetctx-ranks\x00\x00"
    else:
        data.clear()
    path.write_bytes(bytes(data))
    assert _rank_cache.load(NAME, path.stem.split("-")[1] + "0" * 32) is None
    assert _tiktoken._load_ranks(NAME) == reference
    (rewritten,) = _cache_files(folder)
    assert _rank_cache.load(NAME, rewritten.stem.split("-")[1] + "0" * 32) is not None


def test_cache_is_keyed_by_the_bundled_files_content(tmp_path: Path) -> None:
    _rank_cache.store(NAME, "a" * 64, [b"x", b"yz"], folder=tmp_path)
    assert _rank_cache.load(NAME, "b" * 64, folder=tmp_path) is None
    loaded = _rank_cache.load(NAME, "a" * 64, folder=tmp_path)
    assert loaded is not None and loaded[0] == [b"x", b"yz"]


def test_cache_can_be_turned_off(
    folder: Path, reference: dict[bytes, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUDGETCTX_NO_CACHE", "1")
    assert _rank_cache.cache_folder() is None
    assert _tiktoken._load_ranks(NAME) == reference
    assert not folder.exists()


def test_an_unwritable_cache_folder_is_not_an_error(
    tmp_path: Path, reference: dict[bytes, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("BUDGETCTX_CACHE_DIR", str(blocker))  # ranks/ cannot be made under it
    assert _tiktoken._load_ranks(NAME) == reference


def test_default_folder_is_the_users_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    monkeypatch.delenv("BUDGETCTX_CACHE_DIR", raising=False)
    monkeypatch.delenv("BUDGETCTX_NO_CACHE", raising=False)
    assert _rank_cache.cache_folder() == platformdirs.user_cache_path("budgetctx") / "ranks"


OLD, NEW = "a" * 64, "b" * 64


def test_writing_a_new_bundles_files_removes_the_old_bundles(tmp_path: Path) -> None:
    _rank_cache.store(NAME, OLD, [b"x", b"yz"], folder=tmp_path)
    _rank_cache.store_lengths(NAME, OLD, np.array([1, 2]), folder=tmp_path)
    older_layout = tmp_path / f"{NAME}-{'c' * 32}.bin"
    older_layout.write_bytes(b"budgetctx-ranks\x00\x00" + b"\x00" * 40)
    kept = {
        # another encoding's, a foreign file, names not ours, a link: never touched
        tmp_path / f"o200k_base-{'a' * 32}.bin": b"budgetctx-ranks\x00\x01",
        tmp_path / f"{NAME}-{'d' * 32}.bin": b"not a cache file",
        tmp_path / f"{NAME}-{'e' * 31}.bin": b"budgetctx-ranks\x00\x01",
        tmp_path / f"{NAME}-{'G' * 32}.lengths": b"budgetctx-lens\x00\x00\x01",
        tmp_path / f"{NAME}-{'f' * 32}.txt": b"budgetctx-ranks\x00\x01",
    }
    for path, data in kept.items():
        path.write_bytes(data)
    link = tmp_path / f"{NAME}-{'9' * 32}.bin"
    link.symlink_to(tmp_path / f"o200k_base-{'a' * 32}.bin")

    _rank_cache.store_lengths(NAME, NEW, np.array([3]), folder=tmp_path)
    assert _rank_cache.load(NAME, OLD, folder=tmp_path) is None
    assert _rank_cache.load_lengths(NAME, OLD, folder=tmp_path) is None
    assert not older_layout.exists()
    assert all(path.read_bytes() == data for path, data in kept.items())
    assert link.is_symlink()
    lengths = _rank_cache.load_lengths(NAME, NEW, folder=tmp_path)
    assert lengths is not None and lengths.tolist() == [3]

    # and the other way round: the tokens' file of an older bundle removes the newer's
    _rank_cache.store(NAME, OLD, [b"x"], folder=tmp_path)
    assert _rank_cache.load_lengths(NAME, NEW, folder=tmp_path) is None
    assert sorted(p.name for p in tmp_path.glob(f"{NAME}-[ab]*")) == [f"{NAME}-{'a' * 32}.bin"]


def test_a_file_that_cannot_be_removed_is_left_and_the_write_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what Windows does to a file another process holds open
    _rank_cache.store(NAME, OLD, [b"x"], folder=tmp_path)

    def refuse(path: Path, missing_ok: bool = False) -> None:
        raise PermissionError(13, "in use by another process")

    monkeypatch.setattr(_rank_cache.Path, "unlink", refuse)
    _rank_cache.store(NAME, NEW, [b"y"], folder=tmp_path)
    loaded = _rank_cache.load(NAME, NEW, folder=tmp_path)
    assert loaded is not None and loaded[0] == [b"y"]
    assert _rank_cache.load(NAME, OLD, folder=tmp_path) is not None  # left, not an error


def test_a_reader_of_a_removed_file_keeps_its_data(tmp_path: Path) -> None:
    # POSIX: another process holding the old file open still reads it whole after removal
    _rank_cache.store(NAME, OLD, [b"x", b"yz"], folder=tmp_path)
    with (tmp_path / f"{NAME}-{'a' * 32}.bin").open("rb") as reader:
        _rank_cache.store(NAME, NEW, [b"y"], folder=tmp_path)
        assert reader.read().endswith(b"xyz")
